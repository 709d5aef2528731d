package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/operation"
	"github.com/paygate/paygate/internal/payment"
	"github.com/paygate/paygate/internal/store"
	"github.com/paygate/paygate/internal/store/storetest"
)

// TestOperationResourcesMigration: operations written before migration 8
// (payment_id only) read back afterwards as the payment's, with their
// sealed secret; rows an earlier version writes during a rollout
// (resource_id NULL) read the same; and an operation of another resource
// needs no payment.
func TestOperationResourcesMigration(t *testing.T) {
	for _, db := range storetest.Databases(t) {
		t.Run(db.Name, func(t *testing.T) {
			ctx := context.Background()
			s, err := store.Open(ctx, db.Config(t))
			require.NoError(t, err)
			t.Cleanup(func() { s.Close() })
			require.NoError(t, s.MigrateTo(ctx, 7))

			k := newKey(t, s, "mig")
			c := newChannel(t, s, "mig", "USD")
			p := &payment.Payment{ID: uuid.NewString(), AccessKeyID: k.ID, ChannelID: c.ID, Kind: payment.KindDirect,
				Status: payment.Processing, OrderID: "o", AmountMinor: 100, Currency: "USD", CreatedAt: t0, UpdatedAt: t0}
			require.NoError(t, s.InTx(ctx, func(tx *store.Tx) error { return tx.CreatePaymentBefore13(ctx, p) }))
			old := uuid.NewString()
			_, err = s.DB().ExecContext(ctx, `INSERT INTO operations (id, payment_id, kind, state, amount_minor,
				refund_id, result, created_at, updated_at) VALUES ($1, $2, 'refund', 'pending', 40, 'r-1', '', 1, 1)`, old, p.ID)
			require.NoError(t, err)
			_, err = s.DB().ExecContext(ctx, `INSERT INTO operation_secrets (operation_id, sealed) VALUES ($1, $2)`, old, []byte{7})
			require.NoError(t, err)

			require.NoError(t, s.Migrate(ctx))
			op, err := s.FindOperation(ctx, old)
			require.NoError(t, err)
			require.Equal(t, payment.Resource, op.Resource)
			require.Equal(t, p.ID, op.ResourceID)
			require.Equal(t, "r-1", op.Ref)
			require.Equal(t, operation.Pending, op.State)
			sealed, err := s.OperationSecret(ctx, old)
			require.NoError(t, err)
			require.Equal(t, []byte{7}, sealed)
			open, err := s.OpenOperations(ctx, p.ID)
			require.NoError(t, err)
			require.Len(t, open, 1)

			// What a process of the earlier version writes during a rollout.
			rollout := uuid.NewString()
			_, err = s.DB().ExecContext(ctx, `INSERT INTO operations (id, payment_id, kind, state, amount_minor,
				refund_id, result, created_at, updated_at) VALUES ($1, $2, 'capture', 'pending', 0, '', '', 2, 2)`, rollout, p.ID)
			require.NoError(t, err)
			op, err = s.FindOperation(ctx, rollout)
			require.NoError(t, err)
			require.Equal(t, payment.Resource, op.Resource)
			require.Equal(t, p.ID, op.ResourceID)

			// Another resource's operation: no payment behind it.
			other := &operation.Operation{ID: uuid.NewString(), Resource: "payout", ResourceID: uuid.NewString(),
				Kind: "send", State: operation.Pending, CreatedAt: t0, UpdatedAt: t0}
			require.NoError(t, s.CreateOperation(ctx, other, []byte{1}))
			got, err := s.FindOperation(ctx, other.ID)
			require.NoError(t, err)
			require.Equal(t, other, got)

			// The engine's read before a call: the same rows in one
			// statement, with the secret and the owning key's clock.
			require.NoError(t, s.MoveKeyClock(ctx, k.ID, 90*time.Minute))
			for _, c := range []struct {
				id     string
				sealed []byte
				clock  time.Duration
			}{{old, []byte{7}, 90 * time.Minute}, {rollout, nil, 90 * time.Minute}, {other.ID, []byte{1}, 0}} {
				want, err := s.FindOperation(ctx, c.id)
				require.NoError(t, err)
				op, sealed, off, err := s.FindOperationToRun(ctx, c.id)
				require.NoError(t, err)
				require.Equal(t, want, op)
				require.Equal(t, c.sealed, sealed)
				require.Equal(t, c.clock, off)
			}
			_, _, _, err = s.FindOperationToRun(ctx, "missing")
			require.ErrorIs(t, err, store.ErrNotFound)
		})
	}
}
