package openapi

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/paygate/paygate/internal/fault"
)

// The one rule for text (docs/api.md, "Text and query strings"): text
// Paygate keeps is valid UTF-8 without U+0000. PostgreSQL's text columns
// refuse both with an error, so a body that reached a column with either
// would answer 500; SQLite would store it and echo it, and one such
// payment would break a strict client's whole list. Other control
// characters are allowed: both databases store them as they are, and
// JSON escapes them on the way out.

// ValidText reports whether s may be kept as text: valid UTF-8 without
// U+0000. The server applies it to query values, headers and form values
// too, so the whole API follows one rule.
func ValidText(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsRune(s, 0)
}

// EchoableName reports whether a name the client chose (an unknown
// property, an unknown query parameter) may be repeated in error.field:
// the same rule for bodies and query strings (safeKey), so that a card
// number sent as a name is never echoed.
func EchoableName(name string) bool { return safeKey(name) }

// CheckText applies the rule to a raw JSON request body, before anything
// else reads it:
//
//   - bytes that are not UTF-8 answer fault.InvalidJSON (RFC 8259 section
//     8.1: JSON exchanged between systems is UTF-8; encoding/json would
//     silently replace them with U+FFFD);
//   - an escape of a lone surrogate ("\ud800" not followed by a low
//     surrogate escape, or "\udc00" alone) answers fault.InvalidJSON: it
//     names no character, and encoding/json would silently turn it into
//     U+FFFD, storing text that is not what was sent;
//   - a string value or an object key holding U+0000 (only possible as the
//     escape "\u0000") answers fault.ValidationError with Field the dotted
//     path of the value, or of the object holding the key, cut at the
//     first name that is not echoed (echoable).
//
// A body that is not JSON at all is left to the parser (nil here).
func CheckText(body []byte) *fault.Error {
	if !utf8.Valid(body) {
		return fault.New(fault.InvalidJSON, "the request body is not valid UTF-8")
	}
	lone, nul := scanEscapes(body)
	if lone {
		return fault.New(fault.InvalidJSON, "the request body escapes a lone UTF-16 surrogate, which is no character")
	}
	if !nul {
		return nil
	}
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil // not JSON: the parser says so
	}
	if loc, key, ok := findNUL(v, nil); ok {
		msg := "must not contain the NUL character (U+0000)"
		if key {
			msg = "has a property name containing the NUL character (U+0000)"
		}
		return fault.OnField(fault.ValidationError, FieldPath(echoable(loc)), msg)
	}
	return nil
}

// echoable cuts a path at its first name that safeKey would not echo (a
// metadata key that is a card number, say), so that the field names the
// object holding it, as for an unknown property (docs/api.md, "Order of
// checks").
func echoable(loc []string) []string {
	for i, name := range loc {
		if !safeKey(name) {
			return loc[:i]
		}
	}
	return loc
}

// scanEscapes reads the escapes of the JSON strings of body and reports
// whether one is a lone surrogate and whether one is \u0000. It does not
// check the syntax otherwise (the parser does).
func scanEscapes(body []byte) (lone, nul bool) {
	inString := false
	for i := 0; i < len(body); i++ {
		c := body[i]
		if !inString {
			inString = c == '"'
			continue
		}
		switch c {
		case '"':
			inString = false
		case '\\':
			if i+1 < len(body) && body[i+1] != 'u' {
				i++ // \" \\ \n ...: one character escaped
				continue
			}
			u, ok := hex4(body, i+2)
			if !ok {
				continue // malformed: the parser refuses it
			}
			i += 5
			switch {
			case u == 0:
				nul = true
			case 0xDC00 <= u && u <= 0xDFFF:
				return true, nul
			case 0xD800 <= u && u <= 0xDBFF:
				if low, ok := hex4(body, i+3); !ok || body[i+1] != '\\' || body[i+2] != 'u' || low < 0xDC00 || low > 0xDFFF {
					return true, nul
				}
				i += 6
			}
		}
	}
	return false, nul
}

// hex4 reads the four hexadecimal digits at body[at:].
func hex4(body []byte, at int) (rune, bool) {
	if at < 2 || at+4 > len(body) {
		return 0, false
	}
	n, err := strconv.ParseUint(string(body[at:at+4]), 16, 16)
	return rune(n), err == nil
}

// findNUL finds the first string (in field path order) holding U+0000;
// key reports that it is a property name of the object at loc.
func findNUL(v any, loc []string) ([]string, bool, bool) {
	switch v := v.(type) {
	case string:
		return loc, false, strings.ContainsRune(v, 0)
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			if strings.ContainsRune(k, 0) {
				return loc, true, true
			}
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if l, key, ok := findNUL(v[k], append(slices.Clip(loc), k)); ok {
				return l, key, true
			}
		}
	case []any:
		for i, item := range v {
			if l, key, ok := findNUL(item, append(slices.Clip(loc), strconv.Itoa(i))); ok {
				return l, key, true
			}
		}
	}
	return nil, false, false
}
