package allowance

import (
	"context"
	"time"

	"github.com/paygate/paygate/internal/clock"
)

// Store is what the service reads outside a transaction: a key's settings
// and a day's usage (the store's Store is one).
type Store interface {
	ListAllowances(ctx context.Context, keyID string) ([]Setting, error)
	AllowanceUsage(ctx context.Context, keyID string, a Kind, currency, day string) (Usage, error)
}

// Service reads a key's allowances for the API.
type Service struct {
	Store Store
	Now   func() time.Time // the process's clock; a key's is clock.Now(ctx, Now)
}

// NewService builds the allowances' service; every dependency is an
// argument (docs/architecture.md, "The composition root").
func NewService(st Store, now func() time.Time) *Service {
	return &Service{Store: st, Now: now}
}

// Figures are the key's allowances, each with the figures of its current
// day (listLimits (GET /limits)): the day is the key's, by the clock ctx
// carries (docs/design/decisions.md section 14). An allowance not listed
// is unlimited.
func (s *Service) Figures(ctx context.Context, keyID string) ([]Figures, error) {
	settings, err := s.Store.ListAllowances(ctx, keyID)
	if err != nil {
		return nil, err
	}
	now := clock.Now(ctx, s.Now)
	out := make([]Figures, 0, len(settings))
	for _, set := range settings {
		u, err := s.Store.AllowanceUsage(ctx, keyID, set.Allowance, set.Currency, Day(now))
		if err != nil {
			return nil, err
		}
		out = append(out, FiguresOf(set, u, now))
	}
	return out, nil
}
