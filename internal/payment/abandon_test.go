package payment_test

import (
	"errors"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/fault"
	"github.com/paygate/paygate/internal/payment"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/sandbox/acquirer"
	"github.com/paygate/paygate/internal/store"
)

// TestAbandonedStep: a payer's 3DS step that outlives
// payment.ActionLifetime is canceled at the acquirer before the payment
// expires, so a payer who comes back later is charged nothing; a payer
// who finished just before the cancel is charged once, and the payment
// succeeds (docs/payments.md, "The payer's step expires").
func TestAbandonedStep(t *testing.T) {
	each(t, func(t *testing.T, r *rig) {
		k := r.key(false)
		// work runs the payment's poll job once, as River would.
		work := func(p *payment.Payment) error {
			w := &payment.PollWorker{Engine: r.App.PaymentEngine}
			return w.Work(r.Ctx, &river.Job[payment.PollArgs]{
				Args: payment.PollArgs{PaymentID: p.ID, OperationID: r.firstOperation(p.ID)}})
		}
		// poll runs it once past the step's hour: it ends.
		poll := func(t *testing.T, p *payment.Payment) { t.Helper(); require.NoError(t, work(p)) }
		// approve is the payer approving the challenge on the acquirer's
		// page.
		approve := func(p *payment.Payment) *http.Response {
			t.Helper()
			res, err := http.PostForm(p.NextActionURL, url.Values{"outcome": {"approve"}})
			require.NoError(t, err)
			res.Body.Close()
			return res
		}

		// polls counts the payment's queued poll jobs.
		polls := func(p *payment.Payment) int {
			t.Helper()
			var n int
			require.NoError(t, r.Store.DB().QueryRowContext(r.Ctx, `SELECT count(*) FROM river_job
				WHERE kind = 'payment.poll' AND CAST(args AS TEXT) LIKE $1`, "%"+p.ID+"%").Scan(&n))
			return n
		}

		t.Run("nobody came back", func(t *testing.T) {
			p := r.settled(k, r.card("4000000000003220", payment.ModeCharge), payment.RequiresAction)
			r.Clock.Add(payment.ActionLifetime + time.Minute)
			// Polls at once, in two processes: one abandon.
			engines := []*payment.Engine{r.App.PaymentEngine, r.Peer().PaymentEngine}
			for _, err := range race(6, func(i int) error {
				w := &payment.PollWorker{Engine: engines[i%2]}
				return w.Work(r.Ctx, &river.Job[payment.PollArgs]{
					Args: payment.PollArgs{PaymentID: p.ID, OperationID: r.firstOperation(p.ID)}})
			}) {
				require.NoError(t, err)
			}
			require.Equal(t, payment.RequiresAction, r.payment(p.ID).Status, "waiting until the acquirer has canceled it")
			poll(t, p)
			require.Len(t, r.Run(p.ID), 1, "one abandon at a time")
			got := r.payment(p.ID)
			require.Equal(t, payment.Expired, got.Status)
			require.Empty(t, got.NextActionType)
			require.Equal(t, []string{"payment.processing", "payment.requires_action", "payment.expired"}, r.Events(k, p.ID))

			// The payer comes back to the acquirer's page: the payment is
			// gone there, and nothing is charged.
			approve(p)
			require.Empty(t, r.ledger(got)[acquirer.EntryCharge])
			require.Empty(t, r.Run(p.ID))
			require.Equal(t, payment.Expired, r.payment(p.ID).Status)
		})

		t.Run("the payer finished first", func(t *testing.T) {
			p := r.settled(k, r.card("4000000000003220", payment.ModeCharge), payment.RequiresAction)
			r.Clock.Add(payment.ActionLifetime + time.Minute)
			poll(t, p) // the step is still open: the abandon is queued
			require.Equal(t, http.StatusOK, approve(p).StatusCode)
			before := polls(p)
			r.Run(p.ID) // its cancel is refused: the payment was charged
			require.Equal(t, payment.RequiresAction, r.payment(p.ID).Status)
			require.Equal(t, before+1, polls(p), "the refused abandon polls the step again")
			poll(t, p) // the poll reads the step's outcome
			got := r.payment(p.ID)
			require.Equal(t, payment.Succeeded, got.Status)
			require.Equal(t, [2]int64{1, 1000}, r.ledger(got)[acquirer.EntryCharge])
			require.Equal(t, []string{"payment.processing", "payment.requires_action", "payment.succeeded"}, r.Events(k, p.ID))
		})

		t.Run("no confirm while the step is being canceled", func(t *testing.T) {
			p := r.settled(k, r.card("4000000000003220", payment.ModeCharge), payment.RequiresAction)
			r.Clock.Add(payment.ActionLifetime + time.Minute)
			poll(t, p)
			err := r.act(r.App, k, p.ID, func(svc *payment.Service, tx *store.Tx, p *payment.Payment) error {
				_, err := svc.Confirm(r.Ctx, tx, p, "")
				return err
			})
			f, ok := fault.As(err)
			require.True(t, ok, "%v", err)
			require.Equal(t, fault.InvalidPaymentState, f.Code)
			r.Run(p.ID)
			require.Equal(t, payment.Expired, r.payment(p.ID).Status)
		})

		t.Run("canceled at the acquirer meanwhile", func(t *testing.T) {
			// A cancel Paygate did not see through (made in the
			// acquirer's dashboard, or an abandon whose answer was lost):
			// the poll reads it, and the payment expires.
			p := r.settled(k, r.card("4000000000003220", payment.ModeCharge), payment.RequiresAction)
			prov, err := r.App.Providers.Provider("sandbox")
			require.NoError(t, err)
			_, err = provider.PaymentsOf(prov).Cancel(r.Ctx, provider.CancelRequest{OperationID: uuid.NewString(),
				ProviderID: p.ProviderPaymentID, Profile: "default"})
			require.NoError(t, err)
			var snooze *river.JobSnoozeError
			require.False(t, errors.As(work(p), &snooze), "the step ended")
			require.Equal(t, payment.Expired, r.payment(p.ID).Status)
		})

		t.Run("a hold recorded before the cancel went stays", func(t *testing.T) {
			p := r.settled(k, r.card("4000000000003220", payment.ModeAuthorize), payment.RequiresAction)
			r.Clock.Add(payment.ActionLifetime + time.Minute)
			poll(t, p) // the abandon is queued
			approve(p)
			poll(t, p) // another poll (or a notification) records the hold first
			require.Equal(t, payment.Authorized, r.payment(p.ID).Status)
			r.Run(p.ID) // the abandon sends nothing
			got := r.payment(p.ID)
			require.Equal(t, payment.Authorized, got.Status)
			require.Empty(t, r.ledger(got)[acquirer.EntryRelease])
		})

		t.Run("a one-time code nobody confirms", func(t *testing.T) {
			in := r.card("", payment.ModeCharge)
			in.Method, in.Card, in.Phone = payment.MethodMobile, nil, "+12025550100"
			p := r.settled(k, in, payment.RequiresAction)
			require.Equal(t, "otp", p.NextActionType)
			var snooze *river.JobSnoozeError
			require.ErrorAs(t, work(p), &snooze, "nothing to ask: it waits for the hour")
			require.Empty(t, r.Run(p.ID))
			r.Clock.Add(payment.ActionLifetime + time.Minute)
			poll(t, p)
			require.Len(t, r.Run(p.ID), 1)
			got := r.payment(p.ID)
			require.Equal(t, payment.Expired, got.Status)
			require.Equal(t, []string{"payment.processing", "payment.requires_action", "payment.expired"}, r.Events(k, p.ID))
		})

		t.Run("a hold the payer approved first is released", func(t *testing.T) {
			p := r.settled(k, r.card("4000000000003220", payment.ModeAuthorize), payment.RequiresAction)
			r.Clock.Add(payment.ActionLifetime + time.Minute)
			poll(t, p)
			approve(p)
			r.Run(p.ID) // the acquirer cancels the hold it took meanwhile
			got := r.payment(p.ID)
			require.Equal(t, payment.Expired, got.Status)
			require.Equal(t, [2]int64{1, 1000}, r.ledger(got)[acquirer.EntryHold])
			require.Equal(t, [2]int64{1, 1000}, r.ledger(got)[acquirer.EntryRelease])
		})
	})
}
