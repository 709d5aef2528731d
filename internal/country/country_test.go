package country

import "testing"

func TestTableSize(t *testing.T) {
	if len(numeric) != 249 {
		t.Fatalf("%d codes, want the 249 current ISO 3166-1 codes", len(numeric))
	}
	seen := map[string]string{}
	for a2, n := range numeric {
		if len(a2) != 2 || a2[0] < 'A' || a2[0] > 'Z' || a2[1] < 'A' || a2[1] > 'Z' {
			t.Errorf("bad alpha-2 %q", a2)
		}
		if len(n) != 3 || n[0] < '0' || n[0] > '9' || n[1] < '0' || n[1] > '9' || n[2] < '0' || n[2] > '9' {
			t.Errorf("%s: bad numeric %q", a2, n)
		}
		if other, dup := seen[n]; dup {
			t.Errorf("numeric %s used by %s and %s", n, other, a2)
		}
		seen[n] = a2
	}
}

func TestNumeric(t *testing.T) {
	tests := []struct {
		alpha2 string
		want   string
		ok     bool
	}{
		{"US", "840", true},
		{"us", "840", true},
		{"Us", "840", true},
		{"GB", "826", true},
		{"AX", "248", true},
		{"AF", "004", true},
		{"DE", "276", true},
		{"FR", "250", true},
		{"JP", "392", true},
		{"BQ", "535", true},
		{"CW", "531", true},
		{"SS", "728", true},
		{"SX", "534", true},
		{"PS", "275", true},
		{"TW", "158", true},
		{"ZW", "716", true},
		{"XK", "", false},
		{"EU", "", false},
		{"UK", "", false},
		{"AN", "", false},
		{"", "", false},
		{"USA", "", false},
		{"840", "", false},
		{"ｕｓ", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.alpha2, func(t *testing.T) {
			got, ok := Numeric(tt.alpha2)
			if got != tt.want || ok != tt.ok {
				t.Errorf("Numeric(%q) = %q, %v; want %q, %v", tt.alpha2, got, ok, tt.want, tt.ok)
			}
			if Known(tt.alpha2) != tt.ok {
				t.Errorf("Known(%q) = %v, want %v", tt.alpha2, !tt.ok, tt.ok)
			}
		})
	}
}
