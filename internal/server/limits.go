package server

import (
	"context"
	"net/http"

	"github.com/paygate/paygate/internal/openapi"
)

// listLimits is listLimits (GET /limits): the calling key's allowances with
// the figures of the current UTC day (docs/design/decisions.md section 12).
// An allowance not listed is unlimited.
func (s *Server) listLimits() http.Handler {
	return s.read(func(ctx context.Context, c *call) (answer, error) {
		figures, err := s.allowances.Figures(ctx, c.key.ID) // the key's day, by its clock in ctx
		if err != nil {
			return answer{}, err
		}
		out := openapi.LimitList{Items: []openapi.Limit{}}
		for _, f := range figures {
			out.Items = append(out.Items, openapi.Limit{Allowance: string(f.Allowance), Currency: f.Currency,
				PerTransactionMinor: f.PerTransactionMinor, DailyMinor: f.DailyMinor, UsedMinor: f.UsedMinor,
				ReservedMinor: f.ReservedMinor, RemainingMinor: f.RemainingMinor, ResetsAt: openapi.Time(f.ResetsAt)})
		}
		return answer{http.StatusOK, out}, nil
	})
}
