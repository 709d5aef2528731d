package logging

import (
	"strings"

	"github.com/paygate/paygate/internal/card"
)

// MaskCardNumbers returns s with every card number in it masked. A card
// number is a run of 12 to 19 digits, with at most one space or dash
// between two digits, that passes the Luhn check (docs/design/decisions.md
// section 8).
//
// Within a longer run of digit groups (a number followed by its CVV, say
// "4000 0000 0000 0002 123"), consecutive groups are tried from each group
// on, and the longest that is a card number is masked. A single group of
// more than 19 digits is left alone: any 16 digits of it pass Luhn one time
// in ten, and masking ids and timestamps at random helps no one.
func MaskCardNumbers(s string) string {
	if !hasLongDigitRun(s) {
		return s
	}
	var b strings.Builder
	last := 0 // s[last:] is not yet copied to b
	for i := 0; i < len(s); {
		if !isDigit(s[i]) {
			i++
			continue
		}
		groups := digitGroups(s, i)
		for g := 0; g < len(groups); g++ {
			h, digits := longestCardNumber(s, groups[g:])
			if h < 0 {
				continue
			}
			b.WriteString(s[last:groups[g].start])
			b.WriteString(card.Mask(digits))
			last = groups[g+h].end
			g += h
		}
		i = groups[len(groups)-1].end
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// span is one group of digits, s[start:end].
type span struct{ start, end int }

// digitGroups returns the digit groups that start at i and follow one
// another with exactly one space or dash between them.
func digitGroups(s string, i int) []span {
	var groups []span
	for {
		start := i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		groups = append(groups, span{start, i})
		if i+1 < len(s) && (s[i] == ' ' || s[i] == '-') && isDigit(s[i+1]) {
			i++
			continue
		}
		return groups
	}
}

// longestCardNumber returns the largest h for which groups[0..h] spell a
// card number, and its digits; h is -1 when there is none.
func longestCardNumber(s string, groups []span) (h int, digits string) {
	var run []byte
	h = -1
	for i, g := range groups {
		run = append(run, s[g.start:g.end]...)
		if len(run) > 19 {
			break
		}
		if len(run) >= 12 && card.Luhn(string(run)) {
			h, digits = i, string(run)
		}
	}
	return h, digits
}

// hasLongDigitRun is the quick test that lets almost every string through
// untouched: it needs 12 digits with no more than single separators
// between them.
func hasLongDigitRun(s string) bool {
	n := 0
	for i := 0; i < len(s); i++ {
		switch {
		case isDigit(s[i]):
			n++
			if n >= 12 {
				return true
			}
		case (s[i] == ' ' || s[i] == '-') && i > 0 && isDigit(s[i-1]):
		default:
			n = 0
		}
	}
	return false
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
