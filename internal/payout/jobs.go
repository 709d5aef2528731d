package payout

import (
	"context"
	"time"

	"github.com/riverqueue/river"

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

// ExpireActionWorker runs payout.expire_action jobs.
type ExpireActionWorker struct {
	river.WorkerDefaults[ExpireActionArgs]
	Engine *Engine
}

// Work asks the provider once more about a payout that still waits at its
// deadline: a final answer is recorded as any outcome is; still waiting
// (or no answer), the payout ends failed with authentication_expired
// (docs/design/decisions.md section 15). Before the deadline by Paygate's
// clock it snoozes (River's clock and ours can differ slightly).
func (w *ExpireActionWorker) Work(ctx context.Context, job *river.Job[ExpireActionArgs]) error {
	e := w.Engine
	p, err := e.Store.FindPayoutByID(ctx, job.Args.PayoutID)
	if err != nil {
		return err
	}
	if p.Status != RequiresAction || p.ActionExpiresAt == nil {
		return nil // confirmed or finished meanwhile
	}
	if now := e.Service.Now(); now.Before(*p.ActionExpiresAt) {
		return river.JobSnooze(p.ActionExpiresAt.Sub(now) + time.Second)
	}
	ch, err := e.Store.FindChannelByID(ctx, p.ChannelID)
	if err != nil {
		return err
	}
	prov, err := e.Service.Providers.Provider(ch.Provider)
	if err != nil {
		return err
	}
	// Asked by the operation that created it: a status question, which
	// changes nothing at the provider (a confirm would).
	res, err := provider.PayoutsOf(prov).PayoutStatus(ctx, provider.StatusRequest{OperationID: job.Args.OperationID, Profile: ch.Profile})
	if err == nil && (res.Status == provider.StatusSucceeded || res.Status == provider.StatusDeclined || res.Status == provider.StatusFailed) {
		return e.Ops.Record(ctx, job.Args.OperationID, Outcome{res})
	}
	return e.Transact(ctx, func(tx EngineTx) error {
		p, err := tx.FindPayoutByID(ctx, job.Args.PayoutID)
		if err != nil || p.Status != RequiresAction {
			return err
		}
		return e.apply(ctx, tx, job.Args.OperationID, p,
			provider.PayoutResult{Status: provider.StatusFailed, DeclineCode: "authentication_expired"})
	})
}

// AddWorkers registers every payout job's worker.
func AddWorkers(w *river.Workers, e *Engine) {
	river.AddWorker(w, &ExpireActionWorker{Engine: e})
}
