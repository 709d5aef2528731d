package payment_test

import (
	"errors"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/app"
	"github.com/paygate/paygate/internal/app/apptest"
	"github.com/paygate/paygate/internal/fault"
	"github.com/paygate/paygate/internal/instrument"
	"github.com/paygate/paygate/internal/merchant"
	"github.com/paygate/paygate/internal/payment"
	"github.com/paygate/paygate/internal/store"
)

// rig is the payment domain as internal/app builds it, on a fresh store of
// one database, paying through the sandbox acquirer over real HTTP
// (internal/app/apptest).
type rig struct {
	*apptest.Rig
	svc *payment.Service
}

// each runs fn on a rig of its own for each database, in parallel.
func each(t *testing.T, fn func(t *testing.T, r *rig)) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, r *apptest.Rig) { fn(t, &rig{Rig: r, svc: r.App.Payments}) })
}

// key is a new sandbox key allowed raw card data; with refunds, its one
// channel is the sandbox's profile that refunds (sandbox-refunds).
func (r *rig) key(refunds bool) merchant.Key {
	r.T.Helper()
	k := r.Key(true)
	if !refunds {
		return k
	}
	chans, err := r.Store.ChannelsForKey(r.Ctx, k.ID)
	require.NoError(r.T, err)
	for _, c := range chans {
		require.NoError(r.T, r.Store.UnassignChannel(r.Ctx, k.ID, c.ID))
	}
	for _, c := range merchant.SandboxChannels() {
		if c.Alias == "sandbox-refunds" {
			c, err := r.Store.EnsureChannel(r.Ctx, c)
			require.NoError(r.T, err)
			require.NoError(r.T, r.Store.AssignChannel(r.Ctx, k.ID, c.ID, r.Clock.Now()))
		}
	}
	return k
}

// card is a direct payment of 1000 USD with the card number and the
// customer a Visa card needs, in mode (charge or authorize).
func (r *rig) card(number, mode string) payment.NewDirect {
	return payment.NewDirect{NewSession: payment.NewSession{OrderID: "o-" + uuid.NewString(), AmountMinor: 1000,
		Currency: "USD", Customer: &instrument.Customer{FirstName: "Ada", LastName: "Lovelace", Email: "ada@example.com",
			BillingAddress: &instrument.BillingAddress{Country: "GB", Line1: "1 Street"}}},
		OperationMode: mode, Method: payment.MethodCard,
		Card: &instrument.Card{Number: number, ExpMonth: 12, ExpYear: r.Clock.Now().Year() + 2, CVV: "123"}}
}

// direct accepts a direct payment in its own transaction, as a request does.
func (r *rig) direct(k merchant.Key, in payment.NewDirect) (*payment.Payment, error) {
	var p *payment.Payment
	err := r.InTx(func(tx *store.Tx) error {
		var err error
		p, err = r.svc.CreateDirect(r.Ctx, tx, k, in)
		return err
	})
	return p, err
}

// settled accepts a direct payment, runs its provider call and answers
// the payment with its outcome, which must be want.
func (r *rig) settled(k merchant.Key, in payment.NewDirect, want payment.Status) *payment.Payment {
	r.T.Helper()
	p, err := r.direct(k, in)
	require.NoError(r.T, err)
	r.Run(p.ID)
	p = r.payment(p.ID)
	require.Equal(r.T, want, p.Status, p.DeclineCode)
	return p
}

// act runs fn with process a's payment service on the key's payment id,
// locked in a transaction of its own, as a capture, cancel or refund
// request does.
func (r *rig) act(a *app.App, k merchant.Key, id string, fn func(svc *payment.Service, tx *store.Tx, p *payment.Payment) error) error {
	return a.Store.InTx(r.Ctx, func(tx *store.Tx) error {
		p, err := a.Payments.LockForKey(r.Ctx, tx, k.ID, id)
		if err != nil {
			return err
		}
		return fn(a.Payments, tx, p)
	})
}

// captureOn captures through process a; capture through the rig's.
func (r *rig) captureOn(a *app.App, k merchant.Key, id string, amount *int64) error {
	return r.act(a, k, id, func(svc *payment.Service, tx *store.Tx, p *payment.Payment) error {
		_, err := svc.Capture(r.Ctx, tx, p, amount)
		return err
	})
}

func (r *rig) capture(k merchant.Key, id string, amount *int64) error {
	return r.captureOn(r.App, k, id, amount)
}

// cancelOn cancels through process a; cancel through the rig's.
func (r *rig) cancelOn(a *app.App, k merchant.Key, id string) error {
	return r.act(a, k, id, func(svc *payment.Service, tx *store.Tx, p *payment.Payment) error {
		_, err := svc.Cancel(r.Ctx, tx, p)
		return err
	})
}

func (r *rig) cancel(k merchant.Key, id string) error { return r.cancelOn(r.App, k, id) }

// refundOn refunds through process a; refund through the rig's.
func (r *rig) refundOn(a *app.App, k merchant.Key, id string, amount *int64) error {
	return r.act(a, k, id, func(svc *payment.Service, tx *store.Tx, p *payment.Payment) error {
		_, _, err := svc.Refund(r.Ctx, tx, p, amount)
		return err
	})
}

func (r *rig) refund(k merchant.Key, id string, amount *int64) error {
	return r.refundOn(r.App, k, id, amount)
}

func (r *rig) payment(id string) *payment.Payment {
	r.T.Helper()
	p, err := r.Store.FindPaymentByID(r.Ctx, id)
	require.NoError(r.T, err)
	return p
}

// ledger sums the acquirer's entries of the payment by kind: how many,
// and their amount.
func (r *rig) ledger(p *payment.Payment) map[string][2]int64 {
	r.T.Helper()
	out := map[string][2]int64{}
	for _, en := range r.Acquirer.Ledger() {
		if en.OperationID == r.firstOperation(p.ID) {
			v := out[en.Kind]
			out[en.Kind] = [2]int64{v[0] + 1, v[1] + en.AmountMinor}
		}
	}
	return out
}

// firstOperation is the payment's pay operation, which names the
// acquirer's payment.
func (r *rig) firstOperation(id string) string {
	r.T.Helper()
	var op string
	require.NoError(r.T, r.Store.DB().QueryRowContext(r.Ctx, `SELECT id FROM operations WHERE resource = 'payment'
		AND resource_id = $1 ORDER BY created_at, id LIMIT 1`, id).Scan(&op))
	return op
}

// race calls fn n times at once (each its own goroutine, released
// together) and returns what each answered.
func race(n int, fn func(i int) error) []error {
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			errs[i] = fn(i)
		}()
	}
	close(start)
	wg.Wait()
	return errs
}

// tally counts answers: "ok", the fault's code (with its field), or any
// other error as itself, so that a test's want lists every answer.
func tally(errs []error) map[string]int {
	out := map[string]int{}
	for _, err := range errs {
		var f *fault.Error
		switch {
		case err == nil:
			out["ok"]++
		case errors.As(err, &f) && f.Field != "":
			out[string(f.Code)+" "+f.Field]++
		case errors.As(err, &f):
			out[string(f.Code)]++
		default:
			out[err.Error()]++
		}
	}
	return out
}

// faultOf is err's fault, failing the test when err is none.
func faultOf(t *testing.T, err error) *fault.Error {
	t.Helper()
	var f *fault.Error
	require.True(t, errors.As(err, &f), "want a fault, got %v", err)
	return f
}

// openOperations are the payment's operations not yet done.
func (r *rig) openOperations(id string) []payment.Operation {
	r.T.Helper()
	ops, err := r.Store.OpenOperations(r.Ctx, id)
	require.NoError(r.T, err)
	return ops
}
