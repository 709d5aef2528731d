// Package country converts ISO 3166-1 alpha-2 country codes to the numeric
// codes providers expect. The client API takes billing_address.country as
// `^[A-Za-z]{2}$`, a current assigned alpha-2 code, "converted by the backend
// to a numeric-3 code for the provider"; this package is that conversion
// and the check that the code is current.
package country

import "strings"

// Numeric returns the ISO 3166-1 numeric-3 code of an alpha-2 code, with its
// leading zeros ("AX" → "248", "AF" → "004"). Case does not matter, since
// the client API accepts "us" as well as "US". ok is false for anything that
// is not a current assigned code, including reserved ones like "XK" and "EU".
func Numeric(alpha2 string) (code string, ok bool) {
	if len(alpha2) != 2 {
		return "", false
	}
	code, ok = numeric[strings.ToUpper(alpha2)]
	return code, ok
}

// Known reports whether alpha2 is a current assigned ISO 3166-1 alpha-2
// code, in either case.
func Known(alpha2 string) bool {
	_, ok := Numeric(alpha2)
	return ok
}
