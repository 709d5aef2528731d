package cardinfo

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/paygate/paygate/internal/card"
	"github.com/paygate/paygate/internal/country"
)

// The columns of a BIN file (docs/bins.md). A file names its columns in a
// header row, in any order; every row is a BIN or a range.
const (
	colBIN           = "bin"
	colRangeStart    = "range_start"
	colRangeEnd      = "range_end"
	colScheme        = "scheme"
	colType          = "type"
	colLevel         = "level"
	colIssuer        = "issuer"
	colCountry       = "country"
	colCountryCode   = "country_code"
	colIssuerWebsite = "issuer_website"
	colIssuerPhone   = "issuer_phone"
)

// textColumns are the columns of free text, with their longest value in
// characters.
var textColumns = []struct {
	name string
	max  int
}{
	{colScheme, 64}, {colType, 64}, {colLevel, 100}, {colIssuer, 200}, {colCountry, 100},
	{colIssuerWebsite, 200}, {colIssuerPhone, 64},
}

// maxProblems is how many problems an ImportError lists; the rest are counted.
const maxProblems = 20

// Problem is one thing wrong with a BIN file. Line is the file's line
// number (1 is the header). Messages name columns, never a row's values: a
// wrong file may hold card numbers.
type Problem struct {
	Line    int
	Message string
}

// ImportError says why a file was refused. Nothing of it was imported.
type ImportError struct {
	Problems []Problem
	More     int // problems found beyond those listed
}

// Error lists the problems, one a line.
func (e *ImportError) Error() string {
	var b strings.Builder
	b.WriteString("the BIN file was not imported:")
	for _, p := range e.Problems {
		if p.Line > 0 {
			fmt.Fprintf(&b, "\n  line %d: %s", p.Line, p.Message)
		} else {
			fmt.Fprintf(&b, "\n  %s", p.Message)
		}
	}
	if e.More > 0 {
		fmt.Fprintf(&b, "\n  … and %d more problems", e.More)
	}
	return b.String()
}

// reader reads and checks a BIN file row by row.
type reader struct {
	csv      *csv.Reader
	cols     map[string]int
	problems ImportError
	bins     map[string]int    // BIN → line, for duplicates
	ranges   map[[2]string]int // range → line
}

func (r *reader) problem(line int, format string, args ...any) {
	if len(r.problems.Problems) < maxProblems {
		r.problems.Problems = append(r.problems.Problems, Problem{line, fmt.Sprintf(format, args...)})
	} else {
		r.problems.More++
	}
}

func (r *reader) failed() bool { return len(r.problems.Problems) > 0 }

// readEntries checks every row of a BIN file and hands the entries to emit
// in batches of up to batch. Once a row is wrong, emit is no longer called
// but the rest is still checked, so one run reports every problem. It
// returns the number of entries, or an *ImportError.
func readEntries(in io.Reader, batch int, emit func([]Entry) error) (int64, error) {
	br := bufio.NewReader(in)
	if bom, _ := br.Peek(3); bytes.Equal(bom, []byte("\xef\xbb\xbf")) {
		_, _ = br.Discard(3) // spreadsheets write a byte order mark
	}
	r := &reader{csv: csv.NewReader(br), bins: map[string]int{}, ranges: map[[2]string]int{}}
	r.csv.Comment = '#'
	r.csv.ReuseRecord = true
	if !r.header() {
		return 0, &r.problems
	}
	var (
		n   int64
		buf []Entry
	)
	for {
		rec, err := r.csv.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		var pe *csv.ParseError
		if errors.As(err, &pe) && errors.Is(pe.Err, csv.ErrFieldCount) {
			r.problem(pe.StartLine, "has %d fields, the header has %d", len(rec), len(r.cols))
			continue
		}
		if err != nil {
			if errors.As(err, &pe) {
				r.problem(pe.StartLine, "is not valid CSV (%v); nothing after it was read", pe.Err)
			} else {
				r.problem(0, "the file could not be read: %v", err)
			}
			break
		}
		line, _ := r.csv.FieldPos(0)
		e, ok := r.entry(line, rec)
		if !ok || r.failed() {
			continue
		}
		n++
		buf = append(buf, e)
		if len(buf) == batch {
			if err := emit(buf); err != nil {
				return 0, err
			}
			buf = buf[:0]
		}
	}
	if r.failed() {
		return 0, &r.problems
	}
	if n == 0 {
		return 0, &ImportError{Problems: []Problem{{0, "the file has a header but no entries"}}}
	}
	if len(buf) > 0 {
		if err := emit(buf); err != nil {
			return 0, err
		}
	}
	return n, nil
}

// plainName is a column name that may be quoted back in a message.
var plainName = regexp.MustCompile(`^[A-Za-z_ ]{1,40}$`)

// header reads the header row and maps column names to positions.
func (r *reader) header() bool {
	rec, err := r.csv.Read()
	if errors.Is(err, io.EOF) {
		r.problem(0, "the file is empty: it needs a header row naming its columns")
		return false
	}
	if err != nil {
		r.problem(1, "the header row is not valid CSV")
		return false
	}
	line, _ := r.csv.FieldPos(0)
	known := map[string]bool{colBIN: true, colRangeStart: true, colRangeEnd: true, colCountryCode: true}
	for _, c := range textColumns {
		known[c.name] = true
	}
	r.cols = map[string]int{}
	for i, name := range rec {
		name = strings.ToLower(strings.TrimSpace(name))
		_, twice := r.cols[name]
		switch {
		case !known[name] && plainName.MatchString(name):
			r.problem(line, "unknown column %q (docs/bins.md lists the columns)", name)
		case !known[name]:
			r.problem(line, "column %d has no known name: is the header row missing?", i+1)
		case twice:
			r.problem(line, "column %q is named twice", name)
		default:
			r.cols[name] = i
		}
	}
	_, hasBIN := r.cols[colBIN]
	_, hasStart := r.cols[colRangeStart]
	_, hasEnd := r.cols[colRangeEnd]
	if _, ok := r.cols[colScheme]; !ok {
		r.problem(line, "the header needs a %q column", colScheme)
	}
	if hasStart != hasEnd {
		r.problem(line, "%q and %q go together", colRangeStart, colRangeEnd)
	}
	if !hasBIN && !hasStart {
		r.problem(line, "the header needs a %q column, or %q and %q", colBIN, colRangeStart, colRangeEnd)
	}
	return !r.failed()
}

// entry checks one row and turns it into an Entry.
func (r *reader) entry(line int, rec []string) (Entry, bool) {
	get := func(col string) string {
		if i, ok := r.cols[col]; ok {
			return strings.TrimSpace(rec[i])
		}
		return ""
	}
	bad := false
	fail := func(format string, args ...any) {
		r.problem(line, format, args...)
		bad = true
	}
	var e Entry
	bin, start, end := get(colBIN), get(colRangeStart), get(colRangeEnd)
	switch {
	case bin != "" && (start != "" || end != ""):
		fail("give either bin or range_start and range_end, not both")
	case bin != "":
		if !ValidBIN(bin) {
			fail("bin must be 6 or 8 digits")
		} else if prev, dup := r.bins[bin]; dup {
			fail("the same bin as line %d", prev)
		} else {
			r.bins[bin] = line
			e.BIN = bin
		}
	case start == "" && end == "":
		fail("needs a bin, or range_start and range_end")
	case !rangeBound(start) || !rangeBound(end):
		fail("range_start and range_end must be 1 to 8 digits each")
	default:
		e.RangeLow, e.RangeHigh = pad(start, '0'), pad(end, '9')
		key := [2]string{e.RangeLow, e.RangeHigh}
		if e.RangeLow > e.RangeHigh {
			fail("range_start is after range_end")
		} else if prev, dup := r.ranges[key]; dup {
			fail("the same range as line %d", prev)
		} else {
			r.ranges[key] = line
		}
	}

	for _, c := range textColumns {
		v := get(c.name)
		if !utf8.ValidString(v) || strings.IndexFunc(v, unicode.IsControl) >= 0 {
			fail("%s must be text without control characters", c.name)
		} else if utf8.RuneCountInString(v) > c.max {
			fail("%s is longer than %d characters", c.name, c.max)
		}
	}
	e.Details = Details{
		Scheme: strings.ToLower(get(colScheme)), Type: strings.ToLower(get(colType)), Level: get(colLevel),
		Issuer: get(colIssuer), Country: get(colCountry), CountryCode: strings.ToUpper(get(colCountryCode)),
		IssuerWebsite: get(colIssuerWebsite), IssuerPhone: get(colIssuerPhone),
	}
	if e.Scheme == "" {
		fail("scheme is empty: every entry needs one")
	}
	if e.CountryCode != "" && !country.Known(e.CountryCode) {
		fail("country_code must be an assigned ISO 3166-1 alpha-2 code")
	}
	return e, !bad
}

// rangeBound reports whether s is 1 to 8 digits.
func rangeBound(s string) bool { return len(s) >= 1 && len(s) <= 8 && card.Digits(s) }

// pad extends a prefix to 8 digits: with zeros for a range's start, with
// nines for its end, so "51","55" covers 51000000 to 55999999.
func pad(prefix string, fill byte) string {
	return prefix + strings.Repeat(string(fill), 8-len(prefix))
}

// Span returns the 8-digit BINs a 6- or 8-digit BIN stands for: itself for
// 8 digits, its 100 extensions for 6. A range covers a BIN when it holds
// the whole span, so a 6-digit query never takes a range that holds only
// some of its cards.
func Span(bin string) (low, high string) {
	if len(bin) == 6 {
		return pad(bin, '0'), pad(bin, '9')
	}
	return bin, bin
}
