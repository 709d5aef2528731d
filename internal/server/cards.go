package server

import (
	"context"
	"net/http"
	"net/url"

	"github.com/paygate/paygate/internal/cardinfo"
	"github.com/paygate/paygate/internal/fault"
	"github.com/paygate/paygate/internal/openapi"
	"github.com/paygate/paygate/internal/provider"
)

// cardInformation is getCardInformation (GET /cards/information), ?bin=…:
// the active BIN version answers, the key's provider only for BINs it does
// not cover. As a read it is signed over the whole request target, query
// string included (docs/design/decisions.md section 1), and counts against
// the rate limit.
func (s *Server) cardInformation() http.Handler {
	return s.readQuery([]string{"bin"}, func(ctx context.Context, c *call) (answer, error) {
		bin, err := binParam(c.query)
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

// binParam reads the one query parameter the endpoint takes, through
// queryParams like every endpoint; a missing bin is 400 validation_error.
// Whether the value is a BIN is cardinfo's to say (400 invalid_bin).
func binParam(q url.Values) (string, error) {
	if _, ok := q["bin"]; !ok {
		return "", fault.OnField(fault.ValidationError, "bin", "the bin query parameter is required")
	}
	return q.Get("bin"), nil
}
