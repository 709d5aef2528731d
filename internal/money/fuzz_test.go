package money

import (
	"math/big"
	"regexp"
	"strings"
	"testing"
)

var codeRe = regexp.MustCompile(`^[A-Z]{3}$`)

// parseFormatted reads Format's output back into minor units: the code, a
// space, an optional minus, the whole units without leading zeros, and
// exactly digits decimals after a point (none when digits is 0). ok is
// false for anything else.
func parseFormatted(s, code string, digits int) (*big.Int, bool) {
	num, found := strings.CutPrefix(s, code+" ")
	if !found {
		return nil, false
	}
	neg := strings.HasPrefix(num, "-")
	num = strings.TrimPrefix(num, "-")
	whole, frac := num, ""
	if digits > 0 {
		var dot bool
		if whole, frac, dot = strings.Cut(num, "."); !dot || len(frac) != digits {
			return nil, false
		}
	}
	if whole == "" || strings.Trim(whole+frac, "0123456789") != "" || len(whole) > 1 && whole[0] == '0' {
		return nil, false
	}
	v, ok := new(big.Int).SetString(whole+frac, 10)
	if !ok || neg && v.Sign() == 0 {
		return nil, false
	}
	if neg {
		v.Neg(v)
	}
	return v, true
}

// FuzzFormat: Format never panics, and what it writes reads back as the
// same amount with exactly the currency's minor-unit digits, for every
// int64 (math.MinInt64 included); a code is known only when it is three
// upper-case letters of ISO 4217, and it has minor units exactly then.
func FuzzFormat(f *testing.F) {
	for _, s := range []struct {
		amount int64
		code   string
	}{{1234, "USD"}, {5, "USD"}, {-5, "KWD"}, {1234, "JPY"}, {-9223372036854775808, "CLF"}, {9223372036854775807, "BHD"},
		{0, "EUR"}, {100, "usd"}, {100, "US"}, {100, "USDX"}, {100, ""}, {100, "ÜSD"}, {100, "XXX"}, {100, "XTS"}} {
		f.Add(s.amount, s.code)
	}
	f.Fuzz(func(t *testing.T, amount int64, code string) {
		known := Known(code)
		digits, ok := MinorUnits(code)
		if known && !codeRe.MatchString(code) {
			t.Fatalf("Known(%q): not three upper-case letters", code)
		}
		if ok != known || !ok && digits != 0 || ok && (digits < 0 || digits > 4) {
			t.Fatalf("MinorUnits(%q) = %d, %v; Known %v", code, digits, ok, known)
		}
		s := Format(amount, code)
		v, parsed := parseFormatted(s, code, digits)
		if !parsed || v.Cmp(big.NewInt(amount)) != 0 {
			t.Fatalf("Format(%d, %q) = %q does not read back as %d", amount, code, s, amount)
		}
	})
}
