package cardinfo

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/card"
)

// read parses a file, returning its entries or its problems.
func read(t *testing.T, file string) ([]Entry, *ImportError) {
	t.Helper()
	var got []Entry
	n, err := readEntries(strings.NewReader(file), 2, func(es []Entry) error {
		got = append(got, es...)
		return nil
	})
	if err != nil {
		var ie *ImportError
		require.True(t, errors.As(err, &ie), "%v", err)
		require.Zero(t, n)
		return nil, ie
	}
	require.Equal(t, int64(len(got)), n)
	return got, nil
}

func TestReadEntries(t *testing.T) {
	t.Run("bins and ranges, any column order", func(t *testing.T) {
		got, ie := read(t, "\xef\xbb\xbf# a comment\n"+
			"Scheme , BIN,range_start,range_end,country_code,Type,issuer\n"+
			"VISA,424242,,,us,Credit,\"Bank, Ltd\"\n"+
			"\n"+
			"mastercard,,51,55,,,\n"+
			"mir,,2200,2204,,,\n"+
			"visa,42424242,,,,,\n")
		require.Nil(t, ie)
		require.Equal(t, []Entry{
			{BIN: "424242", Details: Details{Scheme: "visa", Type: "credit", Issuer: "Bank, Ltd", CountryCode: "US"}},
			{RangeLow: "51000000", RangeHigh: "55999999", Details: Details{Scheme: "mastercard"}},
			{RangeLow: "22000000", RangeHigh: "22049999", Details: Details{Scheme: "mir"}},
			{BIN: "42424242", Details: Details{Scheme: "visa"}},
		}, got)
	})

	t.Run("only the columns needed", func(t *testing.T) {
		got, ie := read(t, "bin,scheme\n555555,mastercard\n")
		require.Nil(t, ie)
		require.Equal(t, []Entry{{BIN: "555555", Details: Details{Scheme: "mastercard"}}}, got)
	})

	for _, tc := range []struct {
		name, file string
		want       []Problem
	}{
		{"empty", "", []Problem{{0, "the file is empty: it needs a header row naming its columns"}}},
		{"header only", "bin,scheme\n", []Problem{{0, "the file has a header but no entries"}}},
		{"no header", "424242,visa\n", []Problem{
			{1, "column 1 has no known name: is the header row missing?"},
			{1, `unknown column "visa" (docs/bins.md lists the columns)`},
			{1, `the header needs a "scheme" column`},
			{1, `the header needs a "bin" column, or "range_start" and "range_end"`},
		}},
		{"unknown and twice", "bin,shceme,bin\n", []Problem{
			{1, `unknown column "shceme" (docs/bins.md lists the columns)`},
			{1, `column "bin" is named twice`},
			{1, `the header needs a "scheme" column`},
		}},
		{"half a range", "range_start,scheme\n", []Problem{
			{1, `"range_start" and "range_end" go together`},
		}},
		{"rows", "bin,range_start,range_end,scheme,country_code\n" +
			"4242424242424242,,,visa,\n" + // a card number
			"42424,,,visa,\n" +
			"4242424,,,visa,\n" +
			"42424a,,,visa,\n" +
			"424242,,,,\n" +
			"424243,,,visa,XX\n" +
			",,,visa,\n" +
			"424242,4,4,visa,\n" +
			",5,4,visa,\n" +
			",123456789,9,visa,\n" +
			"555555,,,mastercard,US\n" +
			"555555,,,mastercard,US\n" +
			",4,4,visa,\n" +
			",4,4,visa,\n" +
			"1,2\n",
			[]Problem{
				{2, "bin must be 6 or 8 digits"},
				{3, "bin must be 6 or 8 digits"},
				{4, "bin must be 6 or 8 digits"},
				{5, "bin must be 6 or 8 digits"},
				{6, "scheme is empty: every entry needs one"},
				{7, "country_code must be an assigned ISO 3166-1 alpha-2 code"},
				{8, "needs a bin, or range_start and range_end"},
				{9, "give either bin or range_start and range_end, not both"},
				{10, "range_start is after range_end"},
				{11, "range_start and range_end must be 1 to 8 digits each"},
				{13, "the same bin as line 12"},
				{15, "the same range as line 14"},
				{16, "has 2 fields, the header has 5"},
			}},
		{"text", "bin,scheme,issuer\n424242,visa,\"a\x01b\"\n424243,visa," + strings.Repeat("é", 201) + "\n", []Problem{
			{2, "issuer must be text without control characters"},
			{3, "issuer is longer than 200 characters"},
		}},
		{"bad quoting", "bin,scheme\n424242,\"visa\n", []Problem{
			{2, `is not valid CSV (extraneous or missing " in quoted-field); nothing after it was read`},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ie := read(t, tc.file)
			require.NotNil(t, ie)
			require.Equal(t, tc.want, ie.Problems)
			require.NotContains(t, ie.Error(), "4242424242424242", "values are never quoted")
		})
	}

	t.Run("nothing is written once a row is wrong, every row is still checked", func(t *testing.T) {
		var file strings.Builder
		file.WriteString("bin,scheme\n")
		for i := range 30 {
			fmt.Fprintf(&file, "%06d,visa\n", 100000+i)
		}
		file.WriteString("1,visa\n")
		for i := range 30 {
			fmt.Fprintf(&file, "%d,visa\n", i)
		}
		emitted := 0
		_, err := readEntries(strings.NewReader(file.String()), 10, func(es []Entry) error {
			emitted += len(es)
			return nil
		})
		var ie *ImportError
		require.ErrorAs(t, err, &ie)
		require.Len(t, ie.Problems, maxProblems)
		require.Equal(t, 31-maxProblems, ie.More)
		require.Equal(t, 32, ie.Problems[0].Line)
		require.Equal(t, 30, emitted, "batches before the first problem only; the transaction rolls them back")
		require.Contains(t, ie.Error(), "… and 11 more problems")
	})
}

// TestDefaultVersion checks the built-in data: it parses, its scheme ranges
// classify every prefix exactly as internal/card's table does, and the
// sandbox's test cards are in it.
func TestDefaultVersion(t *testing.T) {
	es, ie := read(t, string(defaultCSV))
	require.Nil(t, ie)
	var ranges []Entry
	bins := map[string]Entry{}
	for _, e := range es {
		if e.IsRange() {
			ranges = append(ranges, e)
		} else {
			bins[e.BIN] = e
		}
	}
	narrowest := func(bin8 string) string {
		best, width := "", ""
		for _, r := range ranges {
			w := fmt.Sprintf("%08d", mustAtoi(r.RangeHigh)-mustAtoi(r.RangeLow))
			if r.RangeLow <= bin8 && bin8 <= r.RangeHigh && (best == "" || w < width) {
				best, width = r.Scheme, w
			}
		}
		return best
	}
	for p := range 10000 {
		for _, tail := range []string{"0000", "5555", "9999"} {
			bin8 := fmt.Sprintf("%04d", p) + tail
			require.Equal(t, card.Scheme(bin8), narrowest(bin8), bin8)
		}
	}

	for _, number := range []string{"4242424242424242", "5555555555554444", "4000000000003220", "4000000000000002",
		"4000000000009995", "4000000000000119", "4000000000000259", "4000000000000341"} {
		for _, n := range []int{6, 8} {
			e, ok := bins[card.BIN(number, n)]
			require.True(t, ok, "the BIN of test card %s", card.Mask(number))
			require.Equal(t, card.Scheme(number), e.Scheme)
			require.True(t, strings.HasPrefix(e.Issuer, "Paygate Sandbox Bank"), e.Issuer)
			require.Equal(t, "US", e.CountryCode)
		}
	}
	require.NotEqual(t, bins["42424242"].Level, bins["424242"].Level, "the 8-digit entry is told apart from the 6-digit one")
	require.True(t, bytes.HasPrefix(defaultCSV, []byte("# Paygate's default BIN version")))
}

func mustAtoi(s string) int64 {
	var n int64
	for _, c := range s {
		n = n*10 + int64(c-'0')
	}
	return n
}
