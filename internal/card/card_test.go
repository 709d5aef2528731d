package card

import (
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// The sandbox test cards of docs/design/decisions.md section 7.
var sandboxCards = []struct {
	number, scheme string
}{
	{"4242424242424242", Visa},
	{"5555555555554444", Mastercard},
	{"4000000000003220", Visa},
	{"4000000000000002", Visa},
	{"4000000000009995", Visa},
	{"4000000000000119", Visa},
	{"4000000000000259", Visa},
	{"4000000000000341", Visa},
}

func TestSandboxCards(t *testing.T) {
	for _, c := range sandboxCards {
		t.Run(c.number, func(t *testing.T) {
			if !Luhn(c.number) {
				t.Errorf("Luhn(%s) = false, want true", c.number)
			}
			if got := Scheme(c.number); got != c.scheme {
				t.Errorf("Scheme(%s) = %q, want %q", c.number, got, c.scheme)
			}
		})
	}
}

func TestLuhn(t *testing.T) {
	tests := []struct {
		name   string
		number string
		want   bool
	}{
		{"valid visa", "4242424242424242", true},
		{"last digit changed", "4242424242424241", false},
		{"amex", "378282246310005", true},
		{"diners 14 digits", "30569309025904", true},
		{"12 digits", "500000000009", true},
		{"19 digits", "6200000000000000000", true},
		{"empty", "", false},
		{"one digit", "0", false},
		{"spaces", "4242 4242 4242 4242", false},
		{"letters", "42424242424242a2", false},
		{"non-ASCII digits", "٤٢٤٢٤٢٤٢٤٢٤٢٤٢٤٢", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Luhn(tt.number); got != tt.want {
				t.Errorf("Luhn(%q) = %v, want %v", tt.number, got, tt.want)
			}
		})
	}
}

func TestScheme(t *testing.T) {
	tests := []struct {
		number string
		want   string
	}{
		{"4111111111111111", Visa},
		{"4", Visa},
		{"5105105105105100", Mastercard},
		{"5555555555554444", Mastercard},
		{"5600000000000000", ""},
		{"2221000000000009", Mastercard},
		{"2720999999999996", Mastercard},
		{"2220999999999999", ""},
		{"2721000000000000", ""},
		{"2200000000000004", Mir},
		{"2204999999999999", Mir},
		{"2205000000000000", ""},
		{"378282246310005", Amex},
		{"341111111111111", Amex},
		{"6011111111111117", Discover},
		{"6445000000000000", Discover},
		{"6500000000000002", Discover},
		{"3530111333300000", JCB},
		{"3528000000000000", JCB},
		{"3589000000000000", JCB},
		{"3527000000000000", ""},
		{"3590000000000000", ""},
		{"6200000000000005", UnionPay},
		{"30569309025904", Diners},
		{"3050000000000000", Diners},
		{"3060000000000000", ""},
		{"3095000000000000", Diners},
		{"36227206271667", Diners},
		{"3800000000000000", Diners},
		{"3900000000000000", Diners},
		{"5018000000000000", Maestro},
		{"6759649826438453", Maestro},
		{"6763000000000000", Maestro},
		{"6764000000000000", ""},
		{"22", ""},
		{"", ""},
		{"4242-4242", ""},
		{"9999999999999995", ""},
	}
	for _, tt := range tests {
		t.Run(tt.number, func(t *testing.T) {
			if got := Scheme(tt.number); got != tt.want {
				t.Errorf("Scheme(%q) = %q, want %q", tt.number, got, tt.want)
			}
		})
	}
}

// TestSchemeTable keeps the table well formed: equal-length bounds, digits
// only, lo ≤ hi, so that the string comparison in Scheme is numeric.
func TestSchemeTable(t *testing.T) {
	for _, r := range schemes {
		if len(r.lo) != len(r.hi) || !Digits(r.lo) || !Digits(r.hi) || r.lo > r.hi || r.scheme == "" {
			t.Errorf("bad row %+v", r)
		}
	}
}

func TestMask(t *testing.T) {
	tests := []struct {
		number string
		want   string
	}{
		{"4242424242424242", "424242******4242"},
		{"378282246310005", "378282*****0005"},
		{"500000000009", "500000**0009"},
		{"6200000000000000003", "620000*********0003"},
		{"4242 4242 4242 4242", "424242******4242"},
		{"4242-4242-4242-4242", "424242******4242"},
		{"12345678901", "***********"},
		{"1234", "****"},
		{"", ""},
	}
	for _, tt := range tests {
		t.Run(tt.number, func(t *testing.T) {
			if got := Mask(tt.number); got != tt.want {
				t.Errorf("Mask(%q) = %q, want %q", tt.number, got, tt.want)
			}
		})
	}
}

func TestLast4AndBIN(t *testing.T) {
	tests := []struct {
		name   string
		number string
		n      int
		last4  string
		bin    string
	}{
		{"16 digits bin 6", "4242424242424242", 6, "4242", "424242"},
		{"16 digits bin 8", "4242424242424242", 8, "4242", "42424242"},
		{"12 digits bin 6", "500000000009", 6, "0009", "500000"},
		{"12 digits bin 8 would leave too few hidden", "500000000009", 8, "0009", ""},
		{"13 digits bin 8 would leave one hidden", "4222222222222", 8, "2222", ""},
		{"14 digits bin 8", "30569309025904", 8, "5904", "30569309"},
		{"n too large", "4242424242424242", 9, "4242", ""},
		{"n zero", "4242424242424242", 0, "4242", ""},
		{"too short", "42424242424", 6, "", ""},
		{"not digits", "4242 4242 4242 4242", 6, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Last4(tt.number); got != tt.last4 {
				t.Errorf("Last4(%q) = %q, want %q", tt.number, got, tt.last4)
			}
			if got := BIN(tt.number, tt.n); got != tt.bin {
				t.Errorf("BIN(%q, %d) = %q, want %q", tt.number, tt.n, got, tt.bin)
			}
		})
	}
}

func TestDigits(t *testing.T) {
	tests := []struct {
		s    string
		want bool
	}{
		{"0123456789", true},
		{"", false},
		{" 1", false},
		{"1a", false},
		{"１２", false},
	}
	for _, tt := range tests {
		t.Run(tt.s, func(t *testing.T) {
			if got := Digits(tt.s); got != tt.want {
				t.Errorf("Digits(%q) = %v, want %v", tt.s, got, tt.want)
			}
		})
	}
}

// TestMaskRevealsAtMostTen is docs/design/decisions.md section 8 as a
// property: whatever the input, the mask shows at most ten digits, they are
// the first six and last four, and at least two digits stay hidden.
func TestMaskRevealsAtMostTen(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		number := rapid.StringMatching(`[0-9]{0,25}`).Draw(t, "number")
		m := Mask(number)
		if len(m) != len(number) {
			t.Fatalf("Mask(%q) = %q: length changed", number, m)
		}
		shown := len(m) - strings.Count(m, "*")
		if shown > 10 {
			t.Fatalf("Mask(%q) = %q shows %d digits", number, m, shown)
		}
		if hidden := strings.Count(m, "*"); hidden < min(len(number), 2) {
			t.Fatalf("Mask(%q) = %q hides only %d digits", number, m, hidden)
		}
		if shown > 0 && (m[:6] != number[:6] || m[len(m)-4:] != number[len(number)-4:]) {
			t.Fatalf("Mask(%q) = %q: not the first six and last four", number, m)
		}
	})
}
