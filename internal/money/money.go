// Package money answers the questions Paygate asks about currencies: is a
// code a current ISO 4217 currency, how many minor units it has, and how an
// amount reads on a payer's page. Amounts are int64 minor units everywhere
// (docs/design/style.md: never a float), so formatting is integer arithmetic
// only.
//
// The data comes from github.com/bojanz/currency
// (docs/design/dependencies.md: ISO 4217 minor units, where golang.org/x/text
// gives CLDR cash rounding instead).
package money

import (
	"strconv"
	"strings"

	"github.com/bojanz/currency"
)

// Known reports whether code is a current ISO 4217 currency code, as the
// client API writes it: three upper-case letters (`^[A-Z]{3}$`), so "usd" is
// not known.
func Known(code string) bool {
	return code != "" && currency.IsValid(code)
}

// MinorUnits returns how many decimal places code's minor unit has: JPY 0,
// USD 2, KWD 3, CLF 4. An amount_minor of 1234 is 1234 yen but 12.34
// dollars; ok is false for an unknown code.
func MinorUnits(code string) (digits int, ok bool) {
	if !Known(code) {
		return 0, false
	}
	d, ok := currency.GetDigits(code)
	return int(d), ok
}

// Format renders an amount for a payer's page: the code, a space, and the
// amount with exactly the currency's minor-unit digits, no grouping
// ("USD 12.34", "JPY 1234", "KWD 1.234", "USD 0.05"). A negative amount gets
// a minus sign before the digits ("USD -12.34"). An unknown code is shown as
// given with the amount in minor units, since there is nothing better to
// say about it; the API refuses such codes before any page is drawn.
func Format(amountMinor int64, code string) string {
	neg := amountMinor < 0
	// The magnitude as uint64, so that math.MinInt64 has one too.
	mag := uint64(amountMinor)
	if neg {
		mag = -mag
	}
	return format(neg, strconv.FormatUint(mag, 10), code)
}

// format renders a magnitude's decimal digits as Format does.
func format(neg bool, s, code string) string {
	digits, _ := MinorUnits(code)
	if digits > 0 {
		if len(s) <= digits {
			s = strings.Repeat("0", digits-len(s)+1) + s
		}
		s = s[:len(s)-digits] + "." + s[len(s)-digits:]
	}
	if neg {
		s = "-" + s
	}
	return code + " " + s
}
