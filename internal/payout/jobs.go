package payout

import (
	"context"
	"time"

	"github.com/riverqueue/river"

	"github.com/paygate/paygate/internal/clock"
	"github.com/paygate/paygate/internal/provider"
)

// ExpireActionArgs ends a payout still in requires_action at its
// ActionExpiresAt (docs/design/decisions.md section 15). OperationID is
// the operation whose answer started the wait: the provider's last word
// is recorded on it.
type ExpireActionArgs struct {
	PayoutID    string `json:"payout_id"`
	OperationID string `json:"operation_id"`
}

// Kind names the job (dotted, docs/design/style.md).
func (ExpireActionArgs) Kind() string { return "payout.expire_action" }

// ExpireJob asks the provider once more about a payout that still waits
// at its deadline: a final answer is recorded as any outcome is; still
// waiting (or no answer), the payout ends failed with
// authentication_expired (docs/design/decisions.md section 15). Before the
// deadline by its key's clock (River schedules by the process's) it
// snoozes.
func (e *Engine) ExpireJob(args ExpireActionArgs) clock.Expiry {
	return func(ctx context.Context) (bool, time.Duration, error) {
		return e.expireAction(ctx, args.PayoutID, args.OperationID)
	}
}

// expireAction is the expiry job's work at the payout's key's time (ctx's
// when it carries a key's clock, as in an advance): whether it ended the
// wait, or how long to wait for the deadline. opID is the operation whose
// answer started the wait.
func (e *Engine) expireAction(ctx context.Context, payoutID, opID string) (done bool, wait time.Duration, err error) {
	p, err := e.Store.FindPayoutByID(ctx, payoutID)
	if err != nil {
		return false, 0, err
	}
	if p.Status != RequiresAction || p.ActionExpiresAt == nil {
		return false, 0, nil // confirmed or finished meanwhile
	}
	// No transaction is open: the key's clock is read through the store.
	if ctx, err = clock.OfKey(ctx, e.Store, p.AccessKeyID); err != nil {
		return false, 0, err
	}
	if now := e.Service.now(ctx); now.Before(*p.ActionExpiresAt) {
		return false, p.ActionExpiresAt.Sub(now) + time.Second, nil
	}
	ch, err := e.Store.FindChannelByID(ctx, p.ChannelID)
	if err != nil {
		return false, 0, err
	}
	prov, err := e.Service.Providers.Provider(ch.Provider)
	if err != nil {
		return false, 0, err
	}
	// Asked by the operation that created it: a status question, which
	// changes nothing at the provider (a confirm would).
	res, err := provider.PayoutsOf(prov).PayoutStatus(ctx, provider.StatusRequest{OperationID: opID, Profile: ch.Profile})
	if err == nil && (res.Status == provider.StatusSucceeded || res.Status == provider.StatusDeclined || res.Status == provider.StatusFailed) {
		return true, 0, e.Ops.Record(ctx, opID, Outcome{res})
	}
	err = e.Transact(ctx, func(tx EngineTx) error {
		done = false
		p, err := tx.FindPayoutByID(ctx, payoutID)
		if err != nil || p.Status != RequiresAction {
			return err
		}
		done = true
		return e.apply(ctx, tx, opID, p,
			provider.PayoutResult{Status: provider.StatusFailed, DeclineCode: "authentication_expired"})
	})
	return done, 0, err
}

// DueStore finds the payouts' action expiries that fall due for a key by
// a sandbox clock advance; an empty id when none.
type DueStore interface {
	NextPayoutActionExpiry(ctx context.Context, keyID string, upTo time.Time) (id, operationID string, at time.Time, err error)
}

// ClockSource is the payouts' part of a sandbox clock advance
// (docs/design/decisions.md section 14): a payout left in requires_action
// ends at its action_expires_at as its job ends it, the provider asked
// once more first.
func (e *Engine) ClockSource() clock.Source { return clockSource{e} }

type clockSource struct{ e *Engine }

// NextDue implements clock.Source.
func (c clockSource) NextDue(ctx context.Context, keyID string, upTo time.Time) (*clock.Due, error) {
	id, opID, at, err := c.e.Store.NextPayoutActionExpiry(ctx, keyID, upTo)
	if err != nil || id == "" {
		return nil, err
	}
	return clock.DueAt(at, c.e.ExpireJob(ExpireActionArgs{PayoutID: id, OperationID: opID})), nil
}

// AddWorkers registers every payout job's worker.
func AddWorkers(w *river.Workers, e *Engine) {
	river.AddWorker(w, &clock.ExpiryWorker[ExpireActionArgs]{Expire: e.ExpireJob})
}
