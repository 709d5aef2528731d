package store_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/merchant"
	"github.com/paygate/paygate/internal/payment"
	"github.com/paygate/paygate/internal/store"
	"github.com/paygate/paygate/internal/store/storetest"
)

// TestConformance runs the same store suite on every database
// (docs/design/style.md: one conformance suite, both drivers).
func TestConformance(t *testing.T) {
	t.Parallel()
	for _, db := range storetest.Databases(t) {
		t.Run(db.Name, func(t *testing.T) {
			t.Run("migrate twice", func(t *testing.T) {
				s := storetest.Open(t, db)
				require.NoError(t, s.Migrate(context.Background()))
				v, err := s.MigrationVersion(context.Background())
				require.NoError(t, err)
				require.GreaterOrEqual(t, v, int64(1))
			})
			t.Run("keys", func(t *testing.T) { testKeys(t, storetest.Open(t, db)) })
			t.Run("channels", func(t *testing.T) { testChannels(t, storetest.Open(t, db)) })
			t.Run("nonces", func(t *testing.T) { testNonces(t, storetest.Open(t, db)) })
			t.Run("idempotency", func(t *testing.T) { testIdempotency(t, storetest.Open(t, db)) })
			t.Run("payments", func(t *testing.T) { testPayments(t, storetest.Open(t, db)) })
			t.Run("transactions", func(t *testing.T) { testTransactions(t, storetest.Open(t, db)) })
		})
	}
}

var t0 = time.Date(2026, 11, 22, 10, 0, 0, 123456000, time.UTC)

func newKey(t *testing.T, s *store.Store, name string) merchant.Key {
	t.Helper()
	k := merchant.Key{ID: uuid.NewString(), AccessKey: "ak_sandbox_" + name, Name: name, Environment: "sandbox",
		SecretSealed: []byte{1, 2, 3}, CreatedAt: t0}
	require.NoError(t, s.CreateKey(context.Background(), k))
	return k
}

func newChannel(t *testing.T, s *store.Store, alias string, currencies ...string) merchant.Channel {
	t.Helper()
	c, err := s.EnsureChannel(context.Background(), merchant.Channel{ID: uuid.NewString(), Alias: alias,
		Provider: "sandbox", Profile: "default", PaymentMethods: []string{"card"}, Currencies: currencies,
		CheckoutMode: merchant.CheckoutPlatform, CreatedAt: t0})
	require.NoError(t, err)
	return c
}

func testKeys(t *testing.T, s *store.Store) {
	ctx := context.Background()
	k := newKey(t, s, "a")
	got, err := s.FindKeyByAccessKey(ctx, k.AccessKey)
	require.NoError(t, err)
	require.Equal(t, k, got)
	require.True(t, got.Active())

	_, err = s.FindKeyByAccessKey(ctx, "ak_sandbox_missing")
	require.ErrorIs(t, err, store.ErrNotFound)
	require.Error(t, s.CreateKey(ctx, k), "access keys are unique")

	require.NoError(t, s.RevokeKey(ctx, k.AccessKey, t0.Add(time.Hour)))
	require.NoError(t, s.RevokeKey(ctx, k.AccessKey, t0.Add(2*time.Hour)))
	got, err = s.FindKeyByAccessKey(ctx, k.AccessKey)
	require.NoError(t, err)
	require.Equal(t, t0.Add(time.Hour), *got.RevokedAt, "the first revocation time is kept")
	require.ErrorIs(t, s.RevokeKey(ctx, "ak_sandbox_missing", t0), store.ErrNotFound)

	newKey(t, s, "b")
	keys, err := s.ListKeys(ctx)
	require.NoError(t, err)
	require.Len(t, keys, 2)
}

func testChannels(t *testing.T, s *store.Store) {
	ctx := context.Background()
	a := newChannel(t, s, "alpha", "USD", "EUR")
	again := newChannel(t, s, "alpha", "JPY")
	require.Equal(t, a, again, "EnsureChannel keeps the existing channel")
	b := newChannel(t, s, "beta", "USD")
	k, other := newKey(t, s, "k"), newKey(t, s, "other")

	require.NoError(t, s.AssignChannel(ctx, k.ID, b.ID, t0))
	require.NoError(t, s.AssignChannel(ctx, k.ID, a.ID, t0.Add(time.Second)))
	require.NoError(t, s.AssignChannel(ctx, k.ID, a.ID, t0.Add(time.Hour)), "assigning twice is harmless")
	got, err := s.ChannelsForKey(ctx, k.ID)
	require.NoError(t, err)
	require.Equal(t, []string{"beta", "alpha"}, aliases(got), "assignment order")
	require.Equal(t, []string{"USD", "EUR"}, got[1].Currencies)

	none, err := s.ChannelsForKey(ctx, other.ID)
	require.NoError(t, err)
	require.Empty(t, none)

	require.NoError(t, s.UnassignChannel(ctx, k.ID, b.ID))
	require.ErrorIs(t, s.UnassignChannel(ctx, k.ID, b.ID), store.ErrNotFound)
	got, err = s.ChannelsForKey(ctx, k.ID)
	require.NoError(t, err)
	require.Equal(t, []string{"alpha"}, aliases(got))

	all, err := s.ListChannels(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{"alpha", "beta"}, aliases(all))
	_, err = s.FindChannelByAlias(ctx, "gamma")
	require.ErrorIs(t, err, store.ErrNotFound)
}

func aliases(cs []merchant.Channel) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Alias)
	}
	return out
}

func testNonces(t *testing.T, s *store.Store) {
	ctx := context.Background()
	fresh, _, err := s.Admit(ctx, "k1", "nonce-0000000000001", t0, false)
	require.NoError(t, err)
	require.True(t, fresh)
	fresh, _, err = s.Admit(ctx, "k1", "nonce-0000000000001", t0.Add(time.Minute), false)
	require.NoError(t, err)
	require.False(t, fresh, "a nonce is single-use per key")
	fresh, _, err = s.Admit(ctx, "k2", "nonce-0000000000001", t0, false)
	require.NoError(t, err)
	require.True(t, fresh, "nonces are scoped to the key")

	for i := range 5 {
		_, _, err := s.Admit(ctx, "k3", fmt.Sprintf("nonce-rate-%010d", i), t0.Add(time.Duration(i)*100*time.Millisecond), false)
		require.NoError(t, err)
	}
	_, recent, err := s.Admit(ctx, "k3", "nonce-rate-last-0000", t0.Add(900*time.Millisecond), true)
	require.NoError(t, err)
	require.Equal(t, 5, recent)
	_, recent, err = s.Admit(ctx, "k3", "nonce-rate-later-000", t0.Add(1350*time.Millisecond), true)
	require.NoError(t, err)
	require.Equal(t, 2, recent, "only the last second counts (400 ms and 900 ms)")

	n, err := s.PurgeNonces(ctx, t0.Add(time.Second))
	require.NoError(t, err)
	require.Equal(t, int64(8), n, "rows before the cutoff")
	fresh, _, err = s.Admit(ctx, "k1", "nonce-0000000000001", t0.Add(time.Hour), false)
	require.NoError(t, err)
	require.True(t, fresh, "a purged nonce is forgotten")
}

func testIdempotency(t *testing.T, s *store.Store) {
	ctx := context.Background()
	_, err := s.FindIdempotentResponse(ctx, "k1", "idem-key-1")
	require.ErrorIs(t, err, store.ErrNotFound)
	r := store.StoredResponse{Fingerprint: "fp", StatusCode: 201, Body: []byte(`{"a":1}`), CreatedAt: t0}
	require.NoError(t, s.SaveIdempotentResponse(ctx, "k1", "idem-key-1", r))
	require.Error(t, s.SaveIdempotentResponse(ctx, "k1", "idem-key-1", r), "one answer per key")
	got, err := s.FindIdempotentResponse(ctx, "k1", "idem-key-1")
	require.NoError(t, err)
	require.Equal(t, r, got)
	_, err = s.FindIdempotentResponse(ctx, "k2", "idem-key-1")
	require.ErrorIs(t, err, store.ErrNotFound, "scoped to the access key")

	n, err := s.PurgeIdempotencyKeys(ctx, t0.Add(24*time.Hour))
	require.NoError(t, err)
	require.Equal(t, int64(1), n)

	// The claim: while one transaction holds it, no other can take it.
	tx1, err := s.Begin(ctx)
	require.NoError(t, err)
	ok, err := tx1.LockIdempotencyKey(ctx, "k1", "idem-key-2")
	require.NoError(t, err)
	require.True(t, ok)
	if s.Dialect() == store.Postgres {
		tx2, err := s.Begin(ctx)
		require.NoError(t, err)
		ok, err := tx2.LockIdempotencyKey(ctx, "k1", "idem-key-2")
		require.NoError(t, err)
		require.False(t, ok, "held by tx1")
		ok, err = tx2.LockIdempotencyKey(ctx, "k1", "idem-key-3")
		require.NoError(t, err)
		require.True(t, ok, "another key is free")
		require.NoError(t, tx2.Rollback())
	}
	require.NoError(t, tx1.Commit())
}

func testPayments(t *testing.T, s *store.Store) {
	ctx := context.Background()
	k, other := newKey(t, s, "pk"), newKey(t, s, "po")
	c := newChannel(t, s, "pay", "USD")
	exp := t0.Add(30 * time.Minute)
	consent := true
	p := &payment.Payment{
		ID: uuid.NewString(), SessionID: uuid.NewString(), AccessKeyID: k.ID, ChannelID: c.ID,
		Kind: payment.KindHosted, Status: payment.Created, OrderID: "order-1", AmountMinor: 1999, Currency: "USD",
		Description: "Tea", FirstName: "Ada", LastName: "Lovelace", CustomerSealed: []byte{9, 9},
		CustomerReference: "cust-1", ReturnURL: "https://shop.example/return", Locale: "en",
		OperationMode: payment.ModeCharge, SavePaymentMethod: true,
		Subscription: &payment.SubscriptionTerms{IntervalUnit: "month", IntervalCount: 1, FirstChargeAt: t0.Add(24 * time.Hour),
			DisclosureVersion: "v1", Consent: &consent},
		Metadata: []byte(`{"cart":"42"}`), ExpiresAt: &exp, BankReference: &payment.BankReference{Name: "Bank"},
		CreatedAt: t0, UpdatedAt: t0,
	}
	require.NoError(t, s.InTx(ctx, func(tx *store.Tx) error { return tx.CreatePayment(ctx, p) }))
	got, err := s.FindPaymentByID(ctx, p.ID)
	require.NoError(t, err)
	p.StoredStatus = p.Status // a read knows the status it read (the domain records events against it)
	require.Equal(t, p, got)
	// What an operation reads before its call, in one statement: the same
	// payment and channel as the two reads.
	got, ch, err := s.FindPaymentWithChannel(ctx, p.ID)
	require.NoError(t, err)
	require.Equal(t, p, got)
	wantCh, err := s.FindChannelByID(ctx, c.ID)
	require.NoError(t, err)
	require.Equal(t, wantCh, ch)
	_, _, err = s.FindPaymentWithChannel(ctx, uuid.NewString())
	require.ErrorIs(t, err, store.ErrNotFound)
	got, err = s.FindSessionForKey(ctx, k.ID, p.SessionID)
	require.NoError(t, err)
	require.Equal(t, p.ID, got.ID)
	_, err = s.FindSessionForKey(ctx, other.ID, p.SessionID)
	require.ErrorIs(t, err, store.ErrNotFound, "another key's session is not found")
	_, err = s.FindPaymentForKey(ctx, other.ID, p.ID)
	require.ErrorIs(t, err, store.ErrNotFound)

	expire := func(now time.Time) bool {
		var changed bool
		require.NoError(t, s.InTx(ctx, func(tx *store.Tx) (err error) {
			changed, err = (&payment.Service{}).ExpireSession(ctx, tx, p.ID, now)
			return err
		}))
		return changed
	}
	require.False(t, expire(exp.Add(-time.Second)), "not before expires_at")
	require.True(t, expire(exp))
	require.False(t, expire(exp.Add(time.Hour)), "only once")
	got, err = s.FindPaymentByID(ctx, p.ID)
	require.NoError(t, err)
	require.Equal(t, payment.Expired, got.Status)
	require.Equal(t, exp, got.UpdatedAt)

	// A direct payment has no session id; many may exist.
	for range 2 {
		d := &payment.Payment{ID: uuid.NewString(), AccessKeyID: k.ID, ChannelID: c.ID, Kind: payment.KindDirect,
			Status: payment.Processing, OrderID: "o", AmountMinor: 1, Currency: "USD", Locale: "ru",
			OperationMode: payment.ModeCharge, Method: "card", CreatedAt: t0, UpdatedAt: t0}
		require.NoError(t, s.InTx(ctx, func(tx *store.Tx) error { return tx.CreatePayment(ctx, d) }))
	}
}

func testTransactions(t *testing.T, s *store.Store) {
	ctx := context.Background()
	boom := errors.New("boom")
	err := s.InTx(ctx, func(tx *store.Tx) error {
		_, _, err := tx.Admit(ctx, "k", "rolled-back-nonce-0", t0, false)
		require.NoError(t, err)
		return boom
	})
	require.ErrorIs(t, err, boom)
	fresh, _, err := s.Admit(ctx, "k", "rolled-back-nonce-0", t0, false)
	require.NoError(t, err)
	require.True(t, fresh, "a rolled back write is gone")

	require.NoError(t, s.InTx(ctx, func(tx *store.Tx) error {
		require.NoError(t, tx.Savepoint(ctx, "sp"))
		_, _, err := tx.Admit(ctx, "k", "savepoint-nonce-000", t0, false)
		require.NoError(t, err)
		require.NoError(t, tx.RollbackTo(ctx, "sp"))
		_, _, err = tx.Admit(ctx, "k", "kept-nonce-00000000", t0, false)
		return err
	}))
	fresh, _, err = s.Admit(ctx, "k", "savepoint-nonce-000", t0, false)
	require.NoError(t, err)
	require.True(t, fresh, "rolled back to the savepoint")
	fresh, _, err = s.Admit(ctx, "k", "kept-nonce-00000000", t0, false)
	require.NoError(t, err)
	require.False(t, fresh, "committed after the savepoint")

	// Concurrent writers all land (SQLite serialises them on one connection).
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for i := range 20 {
		wg.Go(func() {
			errs <- s.InTx(ctx, func(tx *store.Tx) error {
				_, _, err := tx.Admit(ctx, "k", fmt.Sprintf("concurrent-%010d", i), t0, false)
				return err
			})
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}
