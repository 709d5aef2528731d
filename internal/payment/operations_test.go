package payment_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/app"
	"github.com/paygate/paygate/internal/fault"
	"github.com/paygate/paygate/internal/operation"
	"github.com/paygate/paygate/internal/payment"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/sandbox/acquirer"
	"github.com/paygate/paygate/internal/store"
	"github.com/paygate/paygate/internal/store/storetest"
)

// TestDirectOutcomes: a direct payment answers processing with its provider
// call queued in the same transaction; the sandbox's answer moves it once
// (docs/sandbox.md, the test cards), each move recorded as its event.
func TestDirectOutcomes(t *testing.T) {
	each(t, func(t *testing.T, r *rig) {
		k := r.key(false)
		for _, tc := range []struct {
			number  string
			status  payment.Status
			decline string
		}{
			{"4242424242424242", payment.Succeeded, ""},
			{"4000000000000002", payment.Declined, "card_declined"},
			{"4000000000009995", payment.Declined, "insufficient_funds"},
			{"4000000000000119", payment.Failed, "processing_error"},
		} {
			t.Run(tc.number, func(t *testing.T) {
				p, err := r.direct(k, r.card(tc.number, payment.ModeCharge))
				require.NoError(t, err)
				require.Equal(t, payment.Processing, p.Status)
				require.Equal(t, []string{"payment.processing"}, r.Events(k, p.ID))
				ops := r.Run(p.ID)
				require.Len(t, ops, 1, "one provider call, queued with the payment")
				got := r.payment(p.ID)
				require.Equal(t, tc.status, got.Status)
				require.Equal(t, tc.decline, got.DeclineCode)
				require.Equal(t, []string{"payment.processing", "payment." + string(tc.status)}, r.Events(k, p.ID))
				if tc.status == payment.Succeeded {
					require.Equal(t, int64(1000), got.CapturedAmountMinor)
					require.Equal(t, [2]int64{1, 1000}, r.ledger(got)[acquirer.EntryCharge])
				}
			})
		}
	})
}

// TestOperationsRunOnce: the operation id is the acquirer's idempotency
// key (docs/design/decisions.md section 4): the same operation run twice at
// once, run again after its outcome, or resent after an answer that never
// came, charges once and records one outcome.
func TestOperationsRunOnce(t *testing.T) {
	each(t, func(t *testing.T, r *rig) {
		k := r.key(false)
		t.Run("run twice at once, and again", func(t *testing.T) {
			p, err := r.direct(k, r.card("4242424242424242", payment.ModeCharge))
			require.NoError(t, err)
			op := r.firstOperation(p.ID)
			race(2, func(int) error { return r.App.Operations.Run(r.Ctx, op, 1, 5) })
			require.NoError(t, r.App.Operations.Run(r.Ctx, op, 2, 5), "a run after the outcome finds it done")
			got := r.payment(p.ID)
			require.Equal(t, payment.Succeeded, got.Status)
			require.Equal(t, [2]int64{1, 1000}, r.ledger(got)[acquirer.EntryCharge])
			require.Equal(t, []string{"payment.processing", "payment.succeeded"}, r.Events(k, p.ID))
		})
		t.Run("an answer that never came", func(t *testing.T) {
			// The sandbox withholds the first answer (4000000000000341): the
			// outcome is unknown, so the run asks for it instead of
			// sending again.
			p, err := r.direct(k, r.card("4000000000000341", payment.ModeCharge))
			require.NoError(t, err)
			op := r.firstOperation(p.ID)
			require.NoError(t, r.App.Operations.Run(r.Ctx, op, 1, 5))
			got := r.payment(p.ID)
			require.Equal(t, payment.Succeeded, got.Status)
			require.Equal(t, [2]int64{1, 1000}, r.ledger(got)[acquirer.EntryCharge], "one charge")
			require.Equal(t, []string{"payment.processing", "payment.succeeded"}, r.Events(k, p.ID))
		})
	})
}

// TestLateAnswer: an outcome the life cycle does not allow from the
// payment's status (payment.CanMove) moves nothing and records no event:
// a declined payment stays declined whatever comes after.
func TestLateAnswer(t *testing.T) {
	each(t, func(t *testing.T, r *rig) {
		k := r.key(false)
		p := r.settled(k, r.card("4000000000000002", payment.ModeCharge), payment.Declined)
		h := payment.NewHandler[app.Reader, *store.Tx](r.App.PaymentEngine)
		op := &operation.Operation{ID: r.firstOperation(p.ID), Resource: payment.Resource, ResourceID: p.ID, Kind: payment.OpPay}
		require.NoError(t, r.InTx(func(tx *store.Tx) error {
			return h.Apply(r.Ctx, tx, op, payment.Outcome{PayResult: provider.PayResult{Status: provider.StatusSucceeded}})
		}))
		require.Equal(t, payment.Declined, r.payment(p.ID).Status)
		require.Equal(t, []string{"payment.processing", "payment.declined"}, r.Events(k, p.ID))
	})
}

// TestCapture: an authorized payment is captured whole or in part, never
// more than was authorized; the rest is released; one capture or cancel at
// a time; nothing after the capture (docs/payments.md).
func TestCapture(t *testing.T) {
	each(t, func(t *testing.T, r *rig) {
		k := r.key(false)
		p := r.settled(k, r.card("4242424242424242", payment.ModeAuthorize), payment.Authorized)
		require.False(t, p.Status.Final())
		require.NotNil(t, p.AuthorizationExpiresAt)

		more := int64(1001)
		f := faultOf(t, r.capture(k, p.ID, &more))
		require.Equal(t, fault.ValidationError, f.Code)
		require.Equal(t, "amount_minor", f.Field)
		require.Empty(t, r.openOperations(p.ID), "nothing queued")

		part := int64(600)
		require.NoError(t, r.capture(k, p.ID, &part))
		require.Equal(t, payment.Authorized, r.payment(p.ID).Status, "authorized until the provider answers")
		require.Equal(t, fault.InvalidPaymentState, faultOf(t, r.capture(k, p.ID, nil)).Code, "a capture is queued")
		require.Equal(t, fault.InvalidPaymentState, faultOf(t, r.cancel(k, p.ID)).Code, "a capture is queued")

		r.Run(p.ID)
		got := r.payment(p.ID)
		require.Equal(t, payment.Succeeded, got.Status)
		require.Equal(t, int64(600), got.CapturedAmountMinor)
		l := r.ledger(got)
		require.Equal(t, [2]int64{1, 600}, l[acquirer.EntryCapture])
		require.Equal(t, [2]int64{1, 400}, l[acquirer.EntryRelease], "the rest released")
		require.Equal(t, fault.InvalidPaymentState, faultOf(t, r.capture(k, p.ID, nil)).Code, "captured")
		require.Equal(t, []string{"payment.processing", "payment.authorized", "payment.succeeded"}, r.Events(k, p.ID))
	})
}

// TestCancel: an authorized payment's hold is released by a cancel, once;
// a payment with an outcome cannot be canceled.
func TestCancel(t *testing.T) {
	each(t, func(t *testing.T, r *rig) {
		k := r.key(false)
		p := r.settled(k, r.card("4242424242424242", payment.ModeAuthorize), payment.Authorized)
		require.NoError(t, r.cancel(k, p.ID))
		require.Equal(t, fault.InvalidPaymentState, faultOf(t, r.cancel(k, p.ID)).Code, "a cancel is queued")
		require.Equal(t, fault.InvalidPaymentState, faultOf(t, r.capture(k, p.ID, nil)).Code, "a cancel is queued")
		r.Run(p.ID)
		got := r.payment(p.ID)
		require.Equal(t, payment.Canceled, got.Status)
		require.Equal(t, [2]int64{1, 1000}, r.ledger(got)[acquirer.EntryRelease])
		require.Zero(t, r.ledger(got)[acquirer.EntryCapture][0])
		require.Equal(t, fault.InvalidPaymentState, faultOf(t, r.cancel(k, p.ID)).Code, "canceled")

		charged := r.settled(k, r.card("4242424242424242", payment.ModeCharge), payment.Succeeded)
		require.Equal(t, fault.InvalidPaymentState, faultOf(t, r.cancel(k, charged.ID)).Code)
	})
}

// TestUnreadableFollowUp: a hold's capture or cancel whose answer could
// not be read shows manual_review while the engine asks
// (docs/design/decisions.md section 4); the answer it reads then applies:
// a cancel carried out ends canceled, a capture that failed leaves the
// hold authorized, to be captured or canceled again.
func TestUnreadableFollowUp(t *testing.T) {
	each(t, func(t *testing.T, r *rig) {
		k := r.key(false)
		h := payment.NewHandler[app.Reader, *store.Tx](r.App.PaymentEngine)
		unreadable := func(p *payment.Payment, queue func() error, answer provider.PayResult) *payment.Payment {
			t.Helper()
			require.NoError(t, queue())
			ids := storetest.OpenOperations(t, r.Store, p.ID)
			require.Len(t, ids, 1)
			op, err := r.Store.FindOperation(r.Ctx, ids[0])
			require.NoError(t, err)
			require.NoError(t, r.InTx(func(tx *store.Tx) error { return h.Unreadable(r.Ctx, tx, op) }))
			require.Equal(t, payment.ManualReview, r.payment(p.ID).Status)
			require.NoError(t, r.App.Operations.Record(r.Ctx, op.ID, payment.Outcome{PayResult: answer, Provider: "sandbox"}))
			return r.payment(p.ID)
		}

		p := r.settled(k, r.card("4242424242424242", payment.ModeAuthorize), payment.Authorized)
		got := unreadable(p, func() error { return r.cancel(k, p.ID) }, provider.PayResult{Status: provider.StatusCanceled})
		require.Equal(t, payment.Canceled, got.Status)

		p = r.settled(k, r.card("4242424242424242", payment.ModeAuthorize), payment.Authorized)
		got = unreadable(p, func() error { return r.capture(k, p.ID, nil) }, provider.PayResult{Status: provider.StatusFailed})
		require.Equal(t, payment.Authorized, got.Status, "the hold stands")
		require.NoError(t, r.capture(k, p.ID, nil), "and may be captured again")
	})
}

// TestRefund: a refund needs the channel's refund capability (refused
// before anything is queued); it takes at most what is left of the
// captured amount, counting refunds queued and not yet done; the whole
// amount refunded ends the payment refunded.
func TestRefund(t *testing.T) {
	each(t, func(t *testing.T, r *rig) {
		plain := r.key(false)
		p := r.settled(plain, r.card("4242424242424242", payment.ModeCharge), payment.Succeeded)
		require.Equal(t, fault.CapabilityNotSupported, faultOf(t, r.refund(plain, p.ID, nil)).Code)
		refunds, err := r.Store.ListRefunds(r.Ctx, p.ID)
		require.NoError(t, err)
		require.Empty(t, refunds, "nothing was queued")

		k := r.key(true)
		p = r.settled(k, r.card("4242424242424242", payment.ModeCharge), payment.Succeeded)
		n := func(v int64) *int64 { return &v }
		require.NoError(t, r.refund(k, p.ID, n(300)))
		f := faultOf(t, r.refund(k, p.ID, n(701)))
		require.Equal(t, fault.ValidationError, f.Code, "700 left: the queued 300 counts")
		require.Equal(t, "amount_minor", f.Field)
		require.NoError(t, r.refund(k, p.ID, n(100)))
		r.Run(p.ID)
		got := r.payment(p.ID)
		require.Equal(t, payment.PartiallyRefunded, got.Status)
		require.Equal(t, int64(400), got.RefundedAmountMinor)

		require.Equal(t, "amount_minor", faultOf(t, r.refund(k, p.ID, n(601))).Field, "more than is left")
		require.Equal(t, "amount_minor", faultOf(t, r.refund(k, p.ID, n(0))).Field)
		require.NoError(t, r.refund(k, p.ID, nil), "the rest")
		r.Run(p.ID)
		got = r.payment(p.ID)
		require.Equal(t, payment.Refunded, got.Status)
		require.Equal(t, int64(1000), got.RefundedAmountMinor)
		require.Equal(t, [2]int64{3, 1000}, r.ledger(got)[acquirer.EntryRefund])
		refunds, err = r.Store.ListRefunds(r.Ctx, p.ID)
		require.NoError(t, err)
		require.Len(t, refunds, 3)
		for _, rf := range refunds {
			require.Equal(t, payment.RefundSucceeded, rf.Status)
		}
		require.Equal(t, fault.InvalidPaymentState, faultOf(t, r.refund(k, p.ID, nil)).Code, "refunded")
	})
}

// TestConcurrentOperations fires many captures, cancels and refunds at one
// payment at once, each in its own transaction as requests are, half of
// them through another process on its own pool: exactly one is accepted
// where only one fits, the others are refused, and the acquirer moves the
// money once (docs/payments.md, "Concurrent operations"). The payment's
// lock in the database (LockForKey) makes the check of what is queued and
// the queuing one step.
func TestConcurrentOperations(t *testing.T) {
	const n = 16
	each(t, func(t *testing.T, r *rig) {
		k := r.key(false)
		procs := []*app.App{r.App, r.Peer()}
		authorized := func() *payment.Payment {
			return r.settled(k, r.card("4242424242424242", payment.ModeAuthorize), payment.Authorized)
		}
		t.Run("full captures", func(t *testing.T) {
			p := authorized()
			got := tally(race(n, func(i int) error { return r.captureOn(procs[i%2], k, p.ID, nil) }))
			require.Equal(t, map[string]int{"ok": 1, string(fault.InvalidPaymentState): n - 1}, got)
			r.Run(p.ID)
			q := r.payment(p.ID)
			require.Equal(t, payment.Succeeded, q.Status)
			require.Equal(t, int64(1000), q.CapturedAmountMinor)
			require.Equal(t, [2]int64{1, 1000}, r.ledger(q)[acquirer.EntryCapture], "one capture at the acquirer")
		})
		t.Run("partial captures", func(t *testing.T) {
			p := authorized()
			part := int64(600)
			got := tally(race(n, func(i int) error { return r.captureOn(procs[i%2], k, p.ID, &part) }))
			require.Equal(t, map[string]int{"ok": 1, string(fault.InvalidPaymentState): n - 1}, got)
			r.Run(p.ID)
			q := r.payment(p.ID)
			require.Equal(t, int64(600), q.CapturedAmountMinor)
			l := r.ledger(q)
			require.Equal(t, [2]int64{1, 600}, l[acquirer.EntryCapture])
			require.Equal(t, [2]int64{1, 400}, l[acquirer.EntryRelease], "the rest released once")
		})
		t.Run("captures and cancels", func(t *testing.T) {
			p := authorized()
			got := tally(race(n, func(i int) error {
				if i%4 < 2 {
					return r.cancelOn(procs[i%2], k, p.ID)
				}
				return r.captureOn(procs[i%2], k, p.ID, nil)
			}))
			require.Equal(t, map[string]int{"ok": 1, string(fault.InvalidPaymentState): n - 1}, got)
			r.Run(p.ID)
			q := r.payment(p.ID)
			l := r.ledger(q)
			switch q.Status {
			case payment.Succeeded:
				require.Equal(t, [2]int64{1, 1000}, l[acquirer.EntryCapture])
				require.Zero(t, l[acquirer.EntryRelease][0])
			case payment.Canceled:
				require.Equal(t, [2]int64{1, 1000}, l[acquirer.EntryRelease])
				require.Zero(t, l[acquirer.EntryCapture][0])
			default:
				t.Fatalf("status %s", q.Status)
			}
		})
		t.Run("refunds", func(t *testing.T) {
			rk := r.key(true)
			p := r.settled(rk, r.card("4242424242424242", payment.ModeCharge), payment.Succeeded)
			part := int64(600)
			got := tally(race(n, func(i int) error { return r.refundOn(procs[i%2], rk, p.ID, &part) }))
			require.Equal(t, map[string]int{"ok": 1, string(fault.ValidationError) + " amount_minor": n - 1}, got)
			// The rest, raced while the first is still queued: one takes
			// the 400 left, none more.
			got = tally(race(n, func(i int) error { return r.refundOn(procs[i%2], rk, p.ID, nil) }))
			require.Equal(t, map[string]int{"ok": 1, string(fault.ValidationError) + " amount_minor": n - 1}, got)
			r.Run(p.ID)
			q := r.payment(p.ID)
			require.Equal(t, payment.Refunded, q.Status)
			require.Equal(t, int64(1000), q.RefundedAmountMinor)
			require.Equal(t, [2]int64{2, 1000}, r.ledger(q)[acquirer.EntryRefund])
		})
	})
}
