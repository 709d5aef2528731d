package card

import (
	"slices"
	"strings"
	"testing"
)

// luhnSum is the Luhn sum by the other textbook method (a table of the
// doubled digits), to check Luhn against.
func luhnSum(digits string) int {
	doubled := [10]int{0, 2, 4, 6, 8, 1, 3, 5, 7, 9}
	sum := 0
	for i := range len(digits) {
		d := int(digits[len(digits)-1-i] - '0')
		if i%2 == 1 {
			d = doubled[d]
		}
		sum += d
	}
	return sum
}

// FuzzLuhn: Luhn accepts only strings of two or more ASCII digits, agrees
// with the table method, accepts a number completed with its check digit
// and refuses it with any other last digit (a single mistyped digit is
// always caught).
func FuzzLuhn(f *testing.F) {
	for _, s := range []string{"4242424242424242", "4242424242424241", "", "0", "00", "18", "4242 4242 4242 4242", "٤٢٤٢", "42424242424242\x00", "-4242"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Luhn(s)
		if got && (len(s) < 2 || !Digits(s)) {
			t.Fatalf("Luhn(%q) accepts what is not a digit string of two or more", s)
		}
		if !Digits(s) {
			return
		}
		if want := len(s) >= 2 && luhnSum(s)%10 == 0; got != want {
			t.Fatalf("Luhn(%q) = %v, want %v", s, got, want)
		}
		check := byte('0' + (10-luhnSum(s+"0")%10)%10)
		for d := byte('0'); d <= '9'; d++ {
			if ok := Luhn(s + string(d)); ok != (d == check) {
				t.Fatalf("Luhn(%q) = %v: the check digit of %q is %c", s+string(d), ok, s, check)
			}
		}
	})
}

// FuzzMask: a masked number keeps one character per digit, shows at most
// the first six and the last four, hides at least two, and shows none of
// a string too short to be a card number; Last4 and BIN never show more.
func FuzzMask(f *testing.F) {
	for _, s := range []string{"4242424242424242", "4242 4242 4242 4242", "4242-4242-4242", "424242424242", "42424242424", "", "abc", "1234567890123456789", "4\u0664242424242424242"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		digits := onlyDigits(s)
		n := len(digits)
		m := Mask(s)
		if len(m) != n || strings.Trim(m, "0123456789*") != "" {
			t.Fatalf("Mask(%q) = %q: one digit or * per digit of the input", s, m)
		}
		shown := n - strings.Count(m, "*")
		switch {
		case n < minMasked && shown != 0:
			t.Fatalf("Mask(%q) = %q shows digits of a string too short to be a card number", s, m)
		case n >= minMasked && (m[:6] != digits[:6] || m[n-4:] != digits[n-4:] || strings.Trim(m[6:n-4], "*") != "" || n-shown < hiddenDigits):
			t.Fatalf("Mask(%q) = %q, want the first six and last four digits only", s, m)
		}
		last4 := Last4(s)
		if last4 != "" && (len(s) < minMasked || !Digits(s) || last4 != s[len(s)-4:]) {
			t.Fatalf("Last4(%q) = %q", s, last4)
		}
		for k := -1; k <= 9; k++ {
			bin := BIN(s, k)
			if bin == "" {
				continue
			}
			if k < 1 || k > 8 || !Digits(s) || len(s) < minMasked || bin != s[:k] || len(s)-k-4 < hiddenDigits {
				t.Fatalf("BIN(%q, %d) = %q", s, k, bin)
			}
		}
	})
}

// FuzzScheme: only digit strings have a scheme, it is one of the published
// names, and it depends on the first four digits only (the longest prefix
// in the table), so a BIN and its card always agree.
func FuzzScheme(f *testing.F) {
	for _, s := range []string{"4242424242424242", "5555555555554444", "2221000000000009", "2200", "6011", "60", "36", "3", "", "4a", "۴"} {
		f.Add(s)
	}
	names := []string{"", Visa, Mastercard, Amex, Discover, JCB, UnionPay, Diners, Maestro, Mir}
	f.Fuzz(func(t *testing.T, s string) {
		got := Scheme(s)
		if !slices.Contains(names, got) {
			t.Fatalf("Scheme(%q) = %q, not a published name", s, got)
		}
		if !Digits(s) {
			if got != "" {
				t.Fatalf("Scheme(%q) = %q for a string that is not digits", s, got)
			}
			return
		}
		if len(s) > 4 {
			if short := Scheme(s[:4]); short != got {
				t.Fatalf("Scheme(%q) = %q but Scheme(%q) = %q", s, got, s[:4], short)
			}
		}
		if got != "" && !slices.ContainsFunc(schemes, func(r prefixRange) bool {
			return r.scheme == got && len(s) >= len(r.lo) && r.lo <= s[:len(r.lo)] && s[:len(r.lo)] <= r.hi
		}) {
			t.Fatalf("Scheme(%q) = %q: no row of the table says so", s, got)
		}
	})
}
