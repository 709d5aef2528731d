package money

import (
	"fmt"
	"math/big"
	"strings"
)

// Sum is an exact total of amounts in minor units, in decimal digits with
// a leading "-" when negative ("" is 0). Each amount the API accepts fits
// an int64, but a total of many need not, so totals are never int64
// (docs/api.md, "Amounts and totals"). It is written in JSON as a number,
// exactly: a client that reads numbers as float64 must read a total above
// 2^53 as a big integer.
type Sum string

// SumOf is the Sum of int64 amounts.
func SumOf(amounts ...int64) Sum {
	var t big.Int
	for _, a := range amounts {
		t.Add(&t, big.NewInt(a))
	}
	return Sum(t.String())
}

// SumOfParts is hi·2³² + lo: a database adds up the high and the low 32
// bits of amounts separately, each of which fits an int64 for any
// number of rows a table can hold, and the parts are joined here.
func SumOfParts(hi, lo int64) Sum {
	t := big.NewInt(hi)
	t.Lsh(t, 32)
	t.Add(t, big.NewInt(lo))
	return Sum(t.String())
}

// Add returns s plus an amount.
func (s Sum) Add(amount int64) Sum {
	t := s.big()
	t.Add(t, big.NewInt(amount))
	return Sum(t.String())
}

func (s Sum) big() *big.Int {
	t, ok := new(big.Int).SetString(string(s), 10)
	if !ok {
		return new(big.Int)
	}
	return t
}

// String is the decimal digits ("0" for the zero value).
func (s Sum) String() string { return s.big().String() }

// MarshalJSON writes the sum as a JSON number.
func (s Sum) MarshalJSON() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalJSON reads a JSON integer of any size.
func (s *Sum) UnmarshalJSON(b []byte) error {
	t, ok := new(big.Int).SetString(string(b), 10)
	if !ok {
		return fmt.Errorf("money: %.40s is not an integer", b)
	}
	*s = Sum(t.String())
	return nil
}

// FormatSum renders a sum as Format renders an amount.
func FormatSum(s Sum, code string) string {
	d := s.String()
	return format(strings.HasPrefix(d, "-"), strings.TrimPrefix(d, "-"), code)
}
