package card

// The scheme names Scheme returns. They are the values of `scheme` in the
// client API's answers (CardInformation, saved cards), so they are lower
// case and never change once published.
const (
	Visa       = "visa"
	Mastercard = "mastercard"
	Amex       = "amex"
	Discover   = "discover"
	JCB        = "jcb"
	UnionPay   = "unionpay"
	Diners     = "diners"
	Maestro    = "maestro"
	Mir        = "mir"
)

// prefixRange is one row of the scheme table: numbers whose first len(lo)
// digits lie in lo..hi (inclusive) belong to scheme. lo and hi have the same
// length, so comparing them as strings compares them as numbers.
type prefixRange struct {
	lo, hi string
	scheme string
}

// schemes is the scheme table, as data (docs/design/dependencies.md: written
// here on purpose). When rows overlap, the longest prefix wins: 6011 is
// Discover although 60 is nothing, 2221–2720 is Mastercard beside Mir's
// 2200–2204. The published ranges of each scheme; co-branded and regional
// ranges are the BIN base's job (internal/cardinfo), not this table's.
var schemes = []prefixRange{
	{"4", "4", Visa},
	{"51", "55", Mastercard},
	{"2221", "2720", Mastercard},
	{"34", "34", Amex},
	{"37", "37", Amex},
	{"6011", "6011", Discover},
	{"644", "649", Discover},
	{"65", "65", Discover},
	{"3528", "3589", JCB},
	{"62", "62", UnionPay},
	{"300", "305", Diners},
	{"3095", "3095", Diners},
	{"36", "36", Diners},
	{"38", "39", Diners},
	{"5018", "5018", Maestro},
	{"5020", "5020", Maestro},
	{"5038", "5038", Maestro},
	{"5893", "5893", Maestro},
	{"6304", "6304", Maestro},
	{"6759", "6759", Maestro},
	{"6761", "6763", Maestro},
	{"2200", "2204", Mir},
}

// Scheme returns the card scheme of a card number or of a BIN (any leading
// digits will do), or "" when the table knows none. The longest matching
// prefix wins. Anything but ASCII digits is "".
func Scheme(number string) string {
	if !Digits(number) {
		return ""
	}
	best, bestLen := "", 0
	for _, r := range schemes {
		n := len(r.lo)
		if n <= bestLen || len(number) < n {
			continue
		}
		if p := number[:n]; r.lo <= p && p <= r.hi {
			best, bestLen = r.scheme, n
		}
	}
	return best
}
