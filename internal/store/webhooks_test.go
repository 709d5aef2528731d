package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/jobs"
	"github.com/paygate/paygate/internal/store"
	"github.com/paygate/paygate/internal/store/storetest"
	"github.com/paygate/paygate/internal/webhook"
)

// TestWebhooks runs the webhook tables' suite on every database.
func TestWebhooks(t *testing.T) {
	t.Parallel()
	for _, db := range storetest.Databases(t) {
		t.Run(db.Name, func(t *testing.T) {
			t.Run("endpoints", func(t *testing.T) { testEndpoints(t, storetest.Open(t, db)) })
			t.Run("deliveries", func(t *testing.T) { testDeliveries(t, storetest.Open(t, db)) })
		})
	}
}

func newEndpoint(t *testing.T, q interface {
	CreateWebhookEndpoint(context.Context, *webhook.Endpoint) error
}, keyID string, at time.Time, types ...string) *webhook.Endpoint {
	t.Helper()
	e := &webhook.Endpoint{ID: uuid.NewString(), AccessKeyID: keyID, URL: "https://hooks.example/" + keyID,
		EventTypes: types, SecretSealed: []byte("sealed-" + keyID), CreatedAt: at}
	require.NoError(t, q.CreateWebhookEndpoint(context.Background(), e))
	if e.EventTypes == nil {
		e.EventTypes = []string{}
	}
	return e
}

func testEndpoints(t *testing.T, s *store.Store) {
	ctx := context.Background()
	k, other := newKey(t, s, "wh"), newKey(t, s, "other")
	a := newEndpoint(t, s, k.ID, t0, "payment.succeeded", "payment.declined")
	b := newEndpoint(t, s, k.ID, t0.Add(time.Second))
	o := newEndpoint(t, s, other.ID, t0)

	got, err := s.FindWebhookEndpoint(ctx, a.ID)
	require.NoError(t, err)
	require.Equal(t, a, got)
	_, err = s.FindWebhookEndpointForKey(ctx, other.ID, a.ID)
	require.ErrorIs(t, err, store.ErrNotFound, "another key's endpoint is not found")

	list, err := s.ListWebhookEndpoints(ctx, k.ID)
	require.NoError(t, err)
	require.Equal(t, []*webhook.Endpoint{a, b}, list)
	all, err := s.ListAllWebhookEndpoints(ctx)
	require.NoError(t, err)
	require.Len(t, all, 3)

	until := t0.Add(24 * time.Hour)
	require.NoError(t, s.RotateWebhookSecret(ctx, a.ID, []byte("new"), a.SecretSealed, &until))
	got, err = s.FindWebhookEndpoint(ctx, a.ID)
	require.NoError(t, err)
	require.Equal(t, []byte("new"), got.SecretSealed)
	require.Equal(t, []byte("sealed-"+k.ID), got.PreviousSecretSealed)
	require.Equal(t, until, *got.PreviousSecretUntil)
	require.True(t, got.Rotating(t0))
	require.False(t, got.Rotating(until))
	require.NoError(t, s.RotateWebhookSecret(ctx, a.ID, []byte("newer"), nil, nil))
	got, err = s.FindWebhookEndpoint(ctx, a.ID)
	require.NoError(t, err)
	require.Nil(t, got.PreviousSecretSealed)
	require.Nil(t, got.PreviousSecretUntil)

	require.NoError(t, s.DisableWebhookEndpoint(ctx, b.ID, t0.Add(time.Hour), "gone"))
	require.NoError(t, s.DisableWebhookEndpoint(ctx, b.ID, t0.Add(2*time.Hour), "again"))
	got, err = s.FindWebhookEndpoint(ctx, b.ID)
	require.NoError(t, err)
	require.Equal(t, t0.Add(time.Hour), *got.DisabledAt, "the first disabling is kept")
	require.Equal(t, "gone", got.DisabledReason)
	require.False(t, got.Enabled())

	require.ErrorIs(t, s.RemoveWebhookEndpoint(ctx, other.ID, a.ID, t0), store.ErrNotFound, "not another key's")
	require.NoError(t, s.RemoveWebhookEndpoint(ctx, k.ID, a.ID, t0.Add(time.Hour)))
	require.ErrorIs(t, s.RemoveWebhookEndpoint(ctx, k.ID, a.ID, t0), store.ErrNotFound, "removed once")
	_, err = s.FindWebhookEndpointForKey(ctx, k.ID, a.ID)
	require.ErrorIs(t, err, store.ErrNotFound)
	got, err = s.FindWebhookEndpoint(ctx, a.ID)
	require.NoError(t, err, "the row stays for its deliveries")
	require.False(t, got.Enabled())
	list, err = s.ListWebhookEndpoints(ctx, k.ID)
	require.NoError(t, err)
	require.Len(t, list, 1)
	require.Equal(t, b.ID, list[0].ID)
	list, err = s.ListWebhookEndpoints(ctx, other.ID)
	require.NoError(t, err)
	require.Equal(t, []*webhook.Endpoint{o}, list)
}

func testDeliveries(t *testing.T, s *store.Store) {
	ctx := context.Background()
	workers := river.NewWorkers()
	river.AddWorker(workers, noopDeliver{})
	_, err := jobs.NewClient(s, workers, time.Now, jobs.Options{})
	require.NoError(t, err)
	k := newKey(t, s, "del")
	ev := webhook.Event{ID: uuid.NewString(), AccessKeyID: k.ID, Type: "payment.succeeded", ResourceType: "payment",
		ResourceID: uuid.NewString(), Object: []byte(`{"payment_id":"p","note":"<&>"}`), CreatedAt: t0}
	// Recorded before the endpoint exists: no delivery is made for it here.
	require.NoError(t, s.InTx(ctx, func(tx *store.Tx) error { return webhook.Record(ctx, tx, ev) }))
	ep := newEndpoint(t, s, k.ID, t0)
	rec, err := s.FindRecordedEvent(ctx, ev.ID)
	require.NoError(t, err)
	body, err := ev.Body()
	require.NoError(t, err)
	require.Equal(t, &webhook.Recorded{ID: ev.ID, AccessKeyID: k.ID, Type: ev.Type, Body: body}, rec)

	due := t0.Add(time.Minute)
	d := &webhook.Delivery{ID: uuid.NewString(), EventID: ev.ID, EndpointID: ep.ID, Status: webhook.Pending,
		NextAttemptAt: &due, CreatedAt: t0, UpdatedAt: t0}

	// A rolled back transaction leaves nothing.
	boom := errors.New("boom")
	require.ErrorIs(t, s.InTx(ctx, func(tx *store.Tx) error {
		created, err := tx.CreateDelivery(ctx, d)
		require.NoError(t, err)
		require.True(t, created)
		return boom
	}), boom)
	_, err = s.FindDelivery(ctx, d.ID)
	require.ErrorIs(t, err, store.ErrNotFound)

	created, err := s.CreateDelivery(ctx, d)
	require.NoError(t, err)
	require.True(t, created)
	twin := *d
	twin.ID = uuid.NewString()
	created, err = s.CreateDelivery(ctx, &twin)
	require.NoError(t, err)
	require.False(t, created, "one delivery per event and endpoint")
	got, err := s.FindDelivery(ctx, d.ID)
	require.NoError(t, err)
	require.Equal(t, d, got)

	// Compare-and-set on the generation.
	first := t0.Add(time.Minute)
	next := first.Add(5 * time.Second)
	upd := *got
	upd.Attempts, upd.FirstAttemptAt, upd.NextAttemptAt, upd.Generation, upd.UpdatedAt = 1, &first, &next, 1, first
	ok, err := s.UpdateDelivery(ctx, &upd, 0)
	require.NoError(t, err)
	require.True(t, ok)
	ok, err = s.UpdateDelivery(ctx, &upd, 0)
	require.NoError(t, err)
	require.False(t, ok, "generation 0 is gone")
	got, err = s.FindDelivery(ctx, d.ID)
	require.NoError(t, err)
	require.Equal(t, &upd, got)

	// A deliver job's read: the three rows in one statement, as read one by one.
	del, gotEp, gotEv, err := s.FindDeliveryToSend(ctx, d.ID)
	require.NoError(t, err)
	require.Equal(t, &upd, del)
	wantEp, err := s.FindWebhookEndpoint(ctx, ep.ID)
	require.NoError(t, err)
	require.Equal(t, wantEp, gotEp)
	require.Equal(t, rec, gotEv)
	_, _, _, err = s.FindDeliveryToSend(ctx, "missing")
	require.ErrorIs(t, err, store.ErrNotFound)

	for i, code := range []int{500, 0} {
		a := &webhook.Attempt{ID: uuid.NewString(), DeliveryID: d.ID, At: first.Add(time.Duration(i) * time.Second),
			StatusCode: code, Latency: 1500 * time.Microsecond, Response: "oops ✓"}
		if code == 0 {
			a.Response, a.Error = "", webhook.ErrTimeout
		}
		require.NoError(t, s.RecordAttempt(ctx, a))
	}
	attempts, err := s.ListAttempts(ctx, ev.ID)
	require.NoError(t, err)
	require.Len(t, attempts, 2)
	require.Equal(t, 500, attempts[0].StatusCode)
	require.Equal(t, "oops ✓", attempts[0].Response)
	require.Equal(t, 1500*time.Microsecond, attempts[0].Latency)
	require.Equal(t, webhook.ErrTimeout, attempts[1].Error)

	// A resend restarts the round of the existing delivery.
	now := t0.Add(time.Hour)
	again, err := s.RequeueDelivery(ctx, &webhook.Delivery{ID: uuid.NewString(), EventID: ev.ID, EndpointID: ep.ID,
		Status: webhook.Pending, NextAttemptAt: &now, CreatedAt: now, UpdatedAt: now})
	require.NoError(t, err)
	require.Equal(t, d.ID, again.ID)
	require.Equal(t, 2, again.Generation)
	require.Equal(t, 0, again.Attempts)
	require.Nil(t, again.FirstAttemptAt)
	require.Equal(t, now, *again.NextAttemptAt)
	require.Equal(t, t0, again.CreatedAt)

	// And creates one for an endpoint that had none.
	ep2 := newEndpoint(t, s, k.ID, t0)
	fresh, err := s.RequeueDelivery(ctx, &webhook.Delivery{ID: uuid.NewString(), EventID: ev.ID, EndpointID: ep2.ID,
		Status: webhook.Pending, NextAttemptAt: &now, CreatedAt: now, UpdatedAt: now})
	require.NoError(t, err)
	require.Equal(t, 0, fresh.Generation)
	ds, err := s.ListDeliveries(ctx, ev.ID)
	require.NoError(t, err)
	require.Len(t, ds, 2)
}
