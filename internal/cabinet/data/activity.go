package data

import (
	"context"
	"errors"

	"github.com/paygate/paygate/internal/cabinet/pages"
	"github.com/paygate/paygate/internal/payout"
	"github.com/paygate/paygate/internal/store"
	"github.com/paygate/paygate/internal/verification"
	"github.com/paygate/paygate/internal/webhook"
)

// activityPages is what the verifications and payouts pages read
// (pages.ActivityData; docs/cabinet.md, "Verifications" and "Payouts").
type activityPages struct{ *source }

var _ pages.ActivityData = activityPages{}

func activityFilter(q pages.ActivityQuery) store.ActivityFilter {
	return store.ActivityFilter{Status: q.Status, AfterCreated: q.AfterCreated, AfterID: q.AfterID, Limit: q.Limit}
}

func (c activityPages) ListVerifications(ctx context.Context, q pages.ActivityQuery) ([]*verification.Verification, error) {
	return c.store.ListVerificationsPage(ctx, q.KeyID, activityFilter(q))
}

func (c activityPages) FindVerification(ctx context.Context, id string) (*verification.Verification, error) {
	v, err := c.store.FindVerificationByID(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	return v, err
}

func (c activityPages) ListPayouts(ctx context.Context, q pages.ActivityQuery) ([]*payout.Payout, error) {
	return c.store.ListPayoutsPage(ctx, q.KeyID, activityFilter(q))
}

func (c activityPages) FindPayout(ctx context.Context, id string) (*payout.Payout, error) {
	p, err := c.store.FindPayoutByID(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	return p, err
}

func (c activityPages) ResourceEvents(ctx context.Context, keyID, resourceID string) ([]pages.Event, error) {
	return resourceEvents(ctx, c.store, keyID, resourceID)
}

// resourceEvents lists the key's last maxEvents events about a resource,
// newest first, each with its delivery attempts: two queries.
func resourceEvents(ctx context.Context, st *store.Store, keyID, resourceID string) ([]pages.Event, error) {
	events, err := st.ListEvents(ctx, keyID, webhook.EventFilter{ResourceID: resourceID, Limit: maxEvents})
	if err != nil {
		return nil, err
	}
	attempts, err := st.ResourceAttempts(ctx, keyID, resourceID)
	if err != nil {
		return nil, err
	}
	byEvent := map[string][]pages.Attempt{}
	for _, a := range attempts {
		byEvent[a.EventID] = append(byEvent[a.EventID], pages.Attempt{EndpointID: a.EndpointID, At: a.At,
			StatusCode: a.StatusCode, Error: a.Error})
	}
	out := make([]pages.Event, 0, len(events))
	for _, e := range events {
		out = append(out, pages.Event{ID: e.ID, Type: e.Type, CreatedAt: e.CreatedAt, Attempts: byEvent[e.ID]})
	}
	return out, nil
}
