package payout_test

import (
	"errors"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/allowance"
	"github.com/paygate/paygate/internal/app"
	"github.com/paygate/paygate/internal/app/apptest"
	"github.com/paygate/paygate/internal/fault"
	"github.com/paygate/paygate/internal/instrument"
	"github.com/paygate/paygate/internal/merchant"
	"github.com/paygate/paygate/internal/operation"
	"github.com/paygate/paygate/internal/payout"
	"github.com/paygate/paygate/internal/provider/sandbox/acquirer"
	"github.com/paygate/paygate/internal/store"
	"github.com/paygate/paygate/internal/store/storetest"
)

// rig is the payout domain as internal/app builds it, on a fresh store of
// one database, paying out through the sandbox acquirer over real HTTP
// (internal/app/apptest).
type rig struct {
	*apptest.Rig
	svc    *payout.Service
	engine *payout.Engine
	// handler is the payout's operation handler, as the engine calls it.
	handler operation.Handler[app.Reader, *store.Tx]
}

func newRig(t *testing.T, db storetest.Database) *rig {
	t.Helper()
	r := apptest.New(t, db)
	return &rig{Rig: r, svc: r.App.Payouts.Service, engine: r.App.Payouts,
		handler: payout.NewHandler[app.Reader, *store.Tx](r.App.Payouts)}
}

// key is a new sandbox key allowed raw card data, with a payout allowance
// in USD of daily minor units (0: none set).
func (r *rig) key(daily int64) merchant.Key {
	r.T.Helper()
	k := r.Key(true)
	if daily > 0 {
		require.NoError(r.T, r.Store.PutAllowance(r.Ctx, allowance.Setting{KeyID: k.ID, Allowance: allowance.Payout,
			Currency: "USD", DailyMinor: &daily, UpdatedAt: r.Clock.Now()}))
	}
	return k
}

// toCard is a valid payout of 2500 USD to the card number, with the
// customer a Visa card needs.
func (r *rig) toCard(number string) payout.New {
	return payout.New{OrderID: "po-" + uuid.NewString(), AmountMinor: 2500, Currency: "USD", Account: "main",
		Method: payout.MethodCard, Card: &instrument.Card{Number: number, ExpMonth: 12, ExpYear: r.Clock.Now().Year() + 2, CVV: "123"},
		Customer: &instrument.Customer{FirstName: "Ada", LastName: "Lovelace", Email: "ada@example.com",
			BillingAddress: &instrument.BillingAddress{Country: "GB", Line1: "1 Street"}}}
}

// create accepts a payout in its own transaction, as a request does.
func (r *rig) create(k merchant.Key, in payout.New) (*payout.Payout, error) {
	var p *payout.Payout
	err := r.InTx(func(tx *store.Tx) error {
		var err error
		p, err = r.svc.Create(r.Ctx, tx, k, in)
		return err
	})
	return p, err
}

// accepted creates a payout that must be accepted.
func (r *rig) accepted(k merchant.Key, in payout.New) *payout.Payout {
	r.T.Helper()
	p, err := r.create(k, in)
	require.NoError(r.T, err)
	return p
}

// confirm confirms the payout in a transaction that reads it locked, as
// the confirm request does.
func (r *rig) confirm(k merchant.Key, id, code string) error {
	return r.InTx(func(tx *store.Tx) error {
		p, err := tx.LockPayoutForKey(r.Ctx, k.ID, id)
		if err != nil {
			return err
		}
		_, err = r.svc.Confirm(r.Ctx, tx, p, code)
		return err
	})
}

func (r *rig) payout(id string) *payout.Payout {
	r.T.Helper()
	p, err := r.Store.FindPayoutByID(r.Ctx, id)
	require.NoError(r.T, err)
	return p
}

// usage is the key's payout allowance today in USD.
func (r *rig) usage(k merchant.Key) allowance.Usage {
	r.T.Helper()
	u, err := r.Store.AllowanceUsage(r.Ctx, k.ID, allowance.Payout, "USD", allowance.Day(r.Clock.Now()))
	require.NoError(r.T, err)
	return u
}

// transfers counts the acquirer's transfers made for an operation.
func (r *rig) transfers(opID string) int {
	return r.Acquirer.Count(acquirer.EntryTransfer, opID)
}

// faultOf is err's fault, failing the test when err is none.
func faultOf(t *testing.T, err error) *fault.Error {
	t.Helper()
	var f *fault.Error
	require.True(t, errors.As(err, &f), "want a fault, got %v", err)
	return f
}
