package payment

import (
	"context"
	"time"

	"github.com/paygate/paygate/internal/clock"
)

// DueStore finds the payments' expiries that fall due for a key by a
// sandbox clock advance; an empty id when none.
type DueStore interface {
	NextSessionExpiry(ctx context.Context, keyID string, upTo time.Time) (string, time.Time, error)
	NextAuthorizationExpiry(ctx context.Context, keyID string, upTo time.Time) (string, time.Time, error)
}

// ClockSource is the payments' part of a sandbox clock advance
// (docs/design/decisions.md section 14): a hosted session's expiry and an
// authorization's, each at its own time, as their jobs do them. A 3DS or
// redirect step left waiting is not among them: its poll job asks the
// provider and ends it by the key's clock within PollEvery.
func (e *Engine) ClockSource() clock.Source { return clockSource{e} }

type clockSource struct{ e *Engine }

// NextDue implements clock.Source.
func (c clockSource) NextDue(ctx context.Context, keyID string, upTo time.Time) (*clock.Due, error) {
	sid, sat, err := c.e.Store.NextSessionExpiry(ctx, keyID, upTo)
	if err != nil {
		return nil, err
	}
	aid, aat, err := c.e.Store.NextAuthorizationExpiry(ctx, keyID, upTo)
	if err != nil {
		return nil, err
	}
	switch {
	case sid != "" && (aid == "" || !aat.Before(sat)):
		return clock.DueAt(sat, c.e.expireSessionJob(ExpireSessionArgs{PaymentID: sid})), nil
	case aid != "":
		return clock.DueAt(aat, c.e.expireAuthorizationJob(ExpireAuthorizationArgs{PaymentID: aid})), nil
	}
	return nil, nil
}
