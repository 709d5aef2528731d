package server

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"slices"

	"github.com/paygate/paygate/internal/cardinfo"
	"github.com/paygate/paygate/internal/fault"
	"github.com/paygate/paygate/internal/openapi"
	"github.com/paygate/paygate/internal/provider"
)

// cardInformation is #17 GET /cards/information?bin=… (client API rule 1):
// the active BIN version answers, the key's provider only for BINs it does
// not cover. As a read it is signed over the whole request target, query
// string included (decisions 1), and counts against the rate limit.
func (s *Server) cardInformation() http.Handler {
	return s.read(func(ctx context.Context, c *call) (answer, error) {
		bin, err := binParam(c.r)
		if err != nil {
			return answer{}, err
		}
		var fallback cardinfo.Fallback
		if s.binFallback != nil {
			fallback = func(ctx context.Context, bin string) (provider.BINInfo, error) {
				return s.binFallback(ctx, c.key.ID, bin)
			}
		}
		info, err := s.bins.Lookup(ctx, bin, fallback)
		if err != nil {
			return answer{}, err
		}
		return answer{http.StatusOK, openapi.CardInformation{
			Bin: info.BIN, Scheme: info.Scheme, Type: info.Type, Level: info.Level, Issuer: info.Issuer,
			Country: info.Country, CountryCode: info.CountryCode, IssuerWebsite: info.IssuerWebsite,
			IssuerPhone: info.IssuerPhone, Source: string(info.Source),
		}}, nil
	})
}

// plainParam is a query parameter name that may be named back in `field`;
// any other (a card number sent as a name, say) is not repeated.
var plainParam = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)

// binParam reads the one query parameter the endpoint takes. Like a body's
// properties (decisions 3): another parameter is 400 unknown_field, a
// missing or repeated bin 400 validation_error. Whether the value is a BIN
// is cardinfo's to say (400 invalid_bin).
func binParam(r *http.Request) (string, error) {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return "", fault.New(fault.ValidationError, "the query string is not well formed")
	}
	names := make([]string, 0, len(q))
	for name := range q {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if name == "bin" {
			continue
		}
		if plainParam.MatchString(name) {
			return "", fault.OnField(fault.UnknownField, name, "this endpoint takes no query parameter but bin")
		}
		return "", fault.New(fault.UnknownField, "this endpoint takes no query parameter but bin")
	}
	switch len(q["bin"]) {
	case 0:
		return "", fault.OnField(fault.ValidationError, "bin", "the bin query parameter is required")
	case 1:
		return q["bin"][0], nil
	}
	return "", fault.OnField(fault.ValidationError, "bin", "give the bin query parameter once")
}
