// Package card holds the few facts about card numbers that Paygate needs
// before any provider sees them: the Luhn check, the scheme by prefix, and
// the masked form that is the only one ever shown (docs/design/decisions.md
// section 8: "A masked card shows at most the first six and the last four
// digits").
//
// It is written here on purpose (docs/design/dependencies.md: no well-kept
// library exists). The functions expect a number of ASCII digits only, as the
// API validates it, and answer false or "" for anything else; only Mask first
// drops separators, so that whatever it is given comes out masked. None of
// them logs or keeps its input.
package card

import "strings"

// Digits reports whether s is non-empty and made of ASCII digits only.
// Card numbers, BINs and verification codes are all digit strings in the
// client API, and callers check that before anything else.
func Digits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// Luhn reports whether number passes the Luhn (mod 10) check that every
// card scheme uses for its last digit. It is false for anything but two or
// more ASCII digits: a check digit needs something to check.
func Luhn(number string) bool {
	if len(number) < 2 || !Digits(number) {
		return false
	}
	sum := 0
	double := false
	for i := len(number) - 1; i >= 0; i-- {
		d := int(number[i] - '0')
		if double {
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
		double = !double
	}
	return sum%10 == 0
}

// minMasked is the shortest number Mask, BIN and Last4 show any digit of.
// The client API's card numbers are 12 to 19 digits; anything shorter is not
// a card number, and showing six plus four of it would show all of it.
const minMasked = 12

// hiddenDigits is how many digits must stay hidden between a number's BIN
// and its last four. One is not enough: the Luhn check digit lets anyone
// recover a single missing digit, so a 12-digit number masks as 6+2+4.
const hiddenDigits = 2

// Mask returns the only form of a card number Paygate shows or stores:
// the first six digits, a `*` for each middle digit, and the last four
// (docs/design/decisions.md section 8), e.g. "424242******4242". Separators
// (anything that is not a digit) are dropped first. A string of fewer than 12
// digits is not a card number and is masked whole.
func Mask(number string) string {
	digits := onlyDigits(number)
	n := len(digits)
	if n < minMasked {
		return strings.Repeat("*", n)
	}
	return digits[:6] + strings.Repeat("*", n-10) + digits[n-4:]
}

// Last4 returns the last four digits of a card number of at least 12
// digits, or "" for anything else. It is what a saved card, a payout and a
// card verification show next to the scheme.
func Last4(number string) string {
	if len(number) < minMasked || !Digits(number) {
		return ""
	}
	return number[len(number)-4:]
}

// BIN returns the first n digits of a card number (n is 1 to 8; the client
// API looks BINs up by 6 or 8 digits), or "" when number is not a card
// number of at least 12 digits or when that BIN and the last four together
// would leave fewer than two digits hidden (see Mask): so BIN(number, 8) is
// "" for a 12- or 13-digit number.
func BIN(number string, n int) string {
	if n < 1 || n > 8 || len(number) < minMasked || !Digits(number) {
		return ""
	}
	if len(number)-n-4 < hiddenDigits {
		return ""
	}
	return number[:n]
}

func onlyDigits(s string) string {
	if Digits(s) {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] >= '0' && s[i] <= '9' {
			b = append(b, s[i])
		}
	}
	return string(b)
}

// FullYear reads an expiry year the way cards print it: two digits mean
// 20YY (30 is 2030); anything else is taken as written. The API, the
// hosted page and the sandbox acquirer all read years through it, so the
// same input means the same card everywhere (docs/payments.md).
func FullYear(y int) int {
	if y >= 0 && y < 100 {
		return 2000 + y
	}
	return y
}
