package server

import (
	"context"
	"net/http"

	"github.com/paygate/paygate/internal/allowance"
	"github.com/paygate/paygate/internal/openapi"
)

// listLimits is listLimits (GET /limits): the calling key's allowances with
// the figures of the current UTC day (docs/design/decisions.md section 12).
// An allowance not listed is unlimited.
func (s *Server) listLimits() http.Handler {
	return s.read(func(ctx context.Context, c *call) (answer, error) {
		settings, err := s.store.ListAllowances(ctx, c.key.ID)
		if err != nil {
			return answer{}, err
		}
		now := s.keyNow(ctx) // the allowance day is the key's (docs/design/decisions.md section 14)
		out := openapi.LimitList{Items: []openapi.Limit{}}
		for _, set := range settings {
			u, err := s.store.AllowanceUsage(ctx, c.key.ID, set.Allowance, set.Currency, allowance.Day(now))
			if err != nil {
				return answer{}, err
			}
			f := allowance.FiguresOf(set, u, now)
			out.Items = append(out.Items, openapi.Limit{Allowance: string(set.Allowance), Currency: set.Currency,
				PerTransactionMinor: set.PerTransactionMinor, DailyMinor: set.DailyMinor, UsedMinor: u.UsedMinor,
				ReservedMinor: u.ReservedMinor, RemainingMinor: f.RemainingMinor, ResetsAt: openapi.Time(f.ResetsAt)})
		}
		return answer{http.StatusOK, out}, nil
	})
}
