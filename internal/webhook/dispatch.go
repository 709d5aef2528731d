package webhook

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/paygate/paygate/internal/handoff"
)

// Queue is the River queue of the webhook jobs, apart from the payment
// jobs so that slow or dead endpoints never hold payments up.
const Queue = "webhooks"

// DeliverArgs is the job that sends one delivery once. Generation must
// match the delivery's: each attempt that fails queues the next job with
// the next generation, and a resend supersedes a waiting job the same way.
type DeliverArgs struct {
	DeliveryID string `json:"delivery_id"`
	Generation int    `json:"generation"`
}

// Kind names the job.
func (DeliverArgs) Kind() string { return "webhook.deliver" }

// InsertOpts puts deliveries on the webhook queue, one live job per
// delivery and generation: the sweep's insert of a job that is merely late
// is skipped. A finished job does not count, so a resend is never skipped.
func (DeliverArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: Queue, UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: []rivertype.JobState{
		rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRetryable,
		rivertype.JobStateRunning, rivertype.JobStateScheduled,
	}}}
}

// SweepArgs asks for lost deliveries to be queued again.
type SweepArgs struct{}

// Kind names the job.
func (SweepArgs) Kind() string { return "webhook.sweep" }

// InsertOpts keeps one sweep queued at a time, on the webhook queue.
func (SweepArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: Queue, UniqueOpts: river.UniqueOpts{ByPeriod: SweepEvery / 2}}
}

// The sweep runs every SweepEvery and takes a pending delivery for lost
// when it is SweepGrace past due: its job was discarded (River gives up on
// a job after 25 errors, a database outage of days) or deleted by hand.
const (
	SweepEvery = 5 * time.Minute
	SweepGrace = 15 * time.Minute
	sweepBatch = 500
)

// Recorded is a stored event as the jobs need it: its owner, its type and
// the body exactly as kept, which is exactly what is sent.
type Recorded struct {
	ID, AccessKeyID, Type string
	Body                  []byte
}

// DispatchStore is what the jobs read outside a transaction.
type DispatchStore interface {
	FindRecordedEvent(ctx context.Context, id string) (*Recorded, error)
	FindDelivery(ctx context.Context, id string) (*Delivery, error)
	FindWebhookEndpoint(ctx context.Context, id string) (*Endpoint, error)
	// OverdueDeliveries lists pending deliveries due before the time,
	// longest overdue first.
	OverdueDeliveries(ctx context.Context, before time.Time, limit int) ([]*Delivery, error)
	SendReader
}

// DispatchTx is what the jobs write, one transaction per step.
type DispatchTx interface {
	FindRecordedEvent(ctx context.Context, id string) (*Recorded, error)
	ListWebhookEndpoints(ctx context.Context, keyID string) ([]*Endpoint, error)
	// CreateDelivery inserts d unless the event already has a delivery to
	// the endpoint, and reports whether it did.
	CreateDelivery(ctx context.Context, d *Delivery) (bool, error)
	// UpdateDelivery stores d if the stored delivery is still of generation
	// (compare-and-set), and reports whether it was.
	UpdateDelivery(ctx context.Context, d *Delivery, generation int) (bool, error)
	RecordAttempt(ctx context.Context, a *Attempt) error
	DisableWebhookEndpoint(ctx context.Context, id string, at time.Time, reason string) error
	Enqueue(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) error
	LeaseTx
	handoff.Tx // the fan-out job's first attempts are handed off too
}

// Sender sends a message to an endpoint (outbound.Client).
type Sender interface {
	Send(ctx context.Context, m Message) Answer
}

// Dispatcher runs the fan-out and delivery jobs.
type Dispatcher struct {
	Store    DispatchStore
	Transact func(ctx context.Context, fn func(DispatchTx) error) error
	Sealer   Sealer
	Sender   Sender
	Now      func() time.Time
	NewID    func() string
	Log      *slog.Logger
	// Jitter spreads retries; nil means ±10 % at random (Jitter).
	Jitter func(time.Duration) time.Duration
	// SendTimeout is the Sender's timeout; a deliver job may run that long
	// and 15 s more for its bookkeeping. 0: River's job timeout.
	SendTimeout time.Duration
}

// SendReader reads a delivery with its endpoint and its event in one
// statement (the store does): a deliver job's reads before its attempt in
// one round trip, and on PostgreSQL one commit instead of three.
type SendReader interface {
	FindDeliveryToSend(ctx context.Context, id string) (*Delivery, *Endpoint, *Recorded, error)
}

// AddWorkers registers the webhook jobs.
func AddWorkers(w *river.Workers, d *Dispatcher) {
	river.AddWorker(w, &DeliverWorker{Dispatcher: d})
	river.AddWorker(w, &SweepWorker{Dispatcher: d})
}

// SweepWorker queues a deliver job again for every delivery that is
// SweepGrace overdue. A delivery whose job is only late (a backlog) keeps
// that job: the insert is skipped as a duplicate (DeliverArgs.InsertOpts).
type SweepWorker struct {
	river.WorkerDefaults[SweepArgs]
	Dispatcher *Dispatcher
}

// Work sweeps once.
func (w *SweepWorker) Work(ctx context.Context, _ *river.Job[SweepArgs]) error {
	d := w.Dispatcher
	overdue, err := d.Store.OverdueDeliveries(ctx, d.Now().Add(-SweepGrace), sweepBatch)
	if err != nil || len(overdue) == 0 {
		return err
	}
	return d.Transact(ctx, func(tx DispatchTx) error {
		for _, del := range overdue {
			if err := tx.Enqueue(ctx, DeliverArgs{DeliveryID: del.ID, Generation: del.Generation}, nil); err != nil {
				return err
			}
		}
		return nil
	})
}

// FanOutTx is what FanOut writes with.
type FanOutTx interface {
	handoff.Tx
	ListWebhookEndpoints(ctx context.Context, keyID string) ([]*Endpoint, error)
	CreateDelivery(ctx context.Context, d *Delivery) (bool, error)
	Enqueue(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) error
}

// FanOut creates an event's deliveries, one per enabled endpoint of its key
// whose filter takes its type, each with its deliver job, due at now. The
// store calls it in the transaction that records the event, so the first
// attempt waits for no other job; a key without endpoints costs one read.
// In a process that runs jobs the first attempt is made here as soon as
// the transaction commits, with the event and the endpoint as read now
// (internal/handoff), the delivery holding the attempt's lease instead of
// a River job. Running it twice changes nothing: an event has at most one
// delivery per endpoint.
func FanOut(ctx context.Context, tx FanOutTx, ev *Recorded, now time.Time, newID func() string) error {
	eps, err := tx.ListWebhookEndpoints(ctx, ev.AccessKeyID)
	if err != nil {
		return err
	}
	now = now.UTC()
	for _, ep := range eps {
		if !ep.Enabled() || !ep.Wants(ev.Type) {
			continue
		}
		if err := fanOutTo(ctx, tx, ev, ep, now, newID()); err != nil {
			return err
		}
	}
	return nil
}

// fanOutTo creates ev's delivery to ep, and its first attempt: handed off
// to this process, the delivery holding its lease, or River's job.
func fanOutTo(ctx context.Context, tx FanOutTx, ev *Recorded, ep *Endpoint, now time.Time, id string) error {
	args := DeliverArgs{DeliveryID: id}
	slot := handoff.Reserve[*toSend](tx, args)
	defer slot.Release()
	del := &Delivery{ID: id, EventID: ev.ID, EndpointID: ep.ID, Status: Pending,
		NextAttemptAt: &now, CreatedAt: now, UpdatedAt: now, RescueAt: slot.Lease()}
	created, err := tx.CreateDelivery(ctx, del)
	if err != nil || !created {
		return err
	}
	if slot == nil {
		return tx.Enqueue(ctx, args, nil)
	}
	slot.Hand(ctx, &toSend{del, ep, ev})
	return nil
}

// toSend is what a first attempt handed off by FanOut is made with.
type toSend struct {
	del *Delivery
	ep  *Endpoint
	ev  *Recorded
}

// AddHandoff registers the first attempts handed off by FanOut, and the
// rescue of their leases.
func AddHandoff(w *handoff.Workers, d *Dispatcher) {
	handoff.Add(w, DeliverArgs{}.Kind(), d.sendHandedOff, d.rescue)
}

// LeaseTx clears and rescues the leases of handed-off first attempts (the
// store's transaction).
type LeaseTx interface {
	ClearDeliveryLease(ctx context.Context, id string) (held bool, err error)
	// LapsedDeliveries clears the leases lapsed before before, at most
	// limit, and returns their deliveries.
	LapsedDeliveries(ctx context.Context, before time.Time, limit int) ([]*Delivery, error)
}

// sendHandedOff makes a delivery's first attempt as its job would, in the
// process whose transaction created it. The attempt's record clears the
// delivery's lease (UpdateDelivery); a run that ends without a record
// hands the job back to River, due in a second. If even that fails, the
// attempt is made once its lease lapses (rescue).
func (d *Dispatcher) sendHandedOff(ctx context.Context, j handoff.Job[*toSend]) error {
	args, _ := j.Args.(DeliverArgs)
	ts := j.Data
	if t := d.timeout(); t > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, t)
		defer cancel()
	}
	err := d.send(ctx, args.Generation, ts.del, ts.ep, ts.ev)
	if err == nil {
		return nil
	}
	unlease := func(ctx context.Context, tx DispatchTx) (bool, error) {
		return tx.ClearDeliveryLease(ctx, args.DeliveryID)
	}
	if berr := handoff.HandBack(ctx, d.Transact, unlease, args, err, d.Now().Add(time.Second), d.Now()); berr != nil && d.Log != nil {
		d.Log.Warn("handing a webhook delivery back to River failed: it is attempted once its lease lapses",
			"delivery_id", args.DeliveryID, "error", berr)
	}
	return err
}

// rescue queues the job of every first attempt whose lease lapsed before
// before (its process stopped before recording it), in the transaction
// that clears the leases: a handoff.Rescuer.
func (d *Dispatcher) rescue(ctx context.Context, before time.Time) (int, error) {
	n := 0
	err := d.Transact(ctx, func(tx DispatchTx) error {
		n = 0
		lapsed, err := tx.LapsedDeliveries(ctx, before, sweepBatch)
		if err != nil {
			return err
		}
		for _, del := range lapsed {
			if del.Status != Pending {
				continue
			}
			if err := tx.Enqueue(ctx, DeliverArgs{DeliveryID: del.ID, Generation: del.Generation}, nil); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	return n, err
}

// DeliverWorker sends a delivery once.
type DeliverWorker struct {
	river.WorkerDefaults[DeliverArgs]
	Dispatcher *Dispatcher
}

// Timeout lets a delivery wait for its endpoint whatever the job timeout
// of the payment jobs is.
func (w *DeliverWorker) Timeout(*river.Job[DeliverArgs]) time.Duration { return w.Dispatcher.timeout() }

// timeout bounds one attempt with its bookkeeping; 0: River's job timeout.
func (d *Dispatcher) timeout() time.Duration {
	if d.SendTimeout <= 0 {
		return 0
	}
	return d.SendTimeout + 15*time.Second
}

// Work sends the event to the endpoint and records the attempt; on failure
// the next attempt's job is queued in the same transaction as the record,
// at the time the retry schedule gives. No transaction is open while the
// endpoint is called.
func (w *DeliverWorker) Work(ctx context.Context, job *river.Job[DeliverArgs]) error {
	d := w.Dispatcher
	del, ep, ev, err := d.Store.FindDeliveryToSend(ctx, job.Args.DeliveryID)
	if err != nil {
		return fmt.Errorf("delivery %s: %w", job.Args.DeliveryID, err)
	}
	return d.send(ctx, job.Args.Generation, del, ep, ev)
}

// send makes the attempt of generation at del, to ep, with ev, and
// records it.
func (d *Dispatcher) send(ctx context.Context, generation int, del *Delivery, ep *Endpoint, ev *Recorded) error {
	if del.Status != Pending || del.Generation != generation {
		return nil // finished, or superseded by a later job
	}
	now := d.Now().UTC()
	if del.NextAttemptAt != nil && now.Before(*del.NextAttemptAt) {
		return river.JobSnooze(del.NextAttemptAt.Sub(now)) // River's clock ran ahead of ours
	}
	if !ep.Enabled() {
		reason := ReasonEndpointGone
		if ep.DeletedAt != nil {
			reason = ReasonEndpointRemoved
		}
		return d.finish(ctx, del, generation, nil, Failed, reason, time.Time{}, false)
	}
	secrets, err := Secrets(d.Sealer, ep, now)
	if err != nil {
		return err
	}
	header, err := SignedHeaders(secrets, ev.ID, now, ev.Body)
	if err != nil {
		return err
	}
	ans := d.Sender.Send(ctx, Message{URL: ep.URL, Header: header, Body: ev.Body})
	if ctx.Err() != nil && ans.Error != "" {
		return ctx.Err() // stopped (shutdown, job timeout): not the endpoint's failure
	}
	attempt := &Attempt{ID: d.NewID(), DeliveryID: del.ID, At: now, StatusCode: ans.StatusCode,
		Latency: ans.Latency, Response: ans.Body, Error: ans.Error}

	first := now
	if del.FirstAttemptAt != nil {
		first = *del.FirstAttemptAt
	}
	del.FirstAttemptAt = &first
	del.Attempts++
	switch {
	case ans.Success():
		return d.finish(ctx, del, generation, attempt, Succeeded, "", time.Time{}, false)
	case ans.StatusCode == 410:
		return d.finish(ctx, del, generation, attempt, Failed, ReasonEndpointGone, time.Time{}, true)
	}
	if next, ok := NextAttempt(first, now, del.Attempts, ans.RetryAfter, d.Jitter); ok {
		return d.finish(ctx, del, generation, attempt, Pending, "", next, false)
	}
	return d.finish(ctx, del, generation, attempt, Failed, ReasonExpired, time.Time{}, false)
}

// finish records an attempt (when one was made) and the delivery's new
// state in one transaction; a pending delivery gets its next job, a 410
// disables the endpoint.
func (d *Dispatcher) finish(ctx context.Context, del *Delivery, generation int, a *Attempt, status, reason string, next time.Time, disable bool) error {
	del.Status, del.Reason, del.UpdatedAt = status, reason, d.Now().UTC()
	del.NextAttemptAt = nil
	if status == Pending {
		del.NextAttemptAt = &next
		del.Generation = generation + 1
	}
	err := d.Transact(ctx, func(tx DispatchTx) error {
		if a != nil {
			// The attempt happened, whatever became of the delivery meanwhile.
			if err := tx.RecordAttempt(ctx, a); err != nil {
				return err
			}
		}
		if disable {
			if err := tx.DisableWebhookEndpoint(ctx, del.EndpointID, del.UpdatedAt, "the endpoint answered 410 Gone"); err != nil {
				return err
			}
		}
		updated, err := tx.UpdateDelivery(ctx, del, generation)
		if err != nil {
			return err
		}
		if !updated || status != Pending {
			return nil
		}
		return tx.Enqueue(ctx, DeliverArgs{DeliveryID: del.ID, Generation: del.Generation},
			&river.InsertOpts{ScheduledAt: next})
	})
	if err == nil && d.Log != nil && a != nil {
		d.Log.Debug("webhook attempt", "delivery_id", del.ID, "event_id", del.EventID, "endpoint_id", del.EndpointID,
			"status_code", a.StatusCode, "error", a.Error, "delivery_status", status)
	}
	return err
}

// Secrets opens the secrets an endpoint signs with at now: its own, and
// during a rotation's overlap the previous one too.
func Secrets(s Sealer, ep *Endpoint, now time.Time) ([]string, error) {
	cur, err := s.Open(ep.SecretSealed, SecretAAD(ep.ID))
	if err != nil {
		return nil, fmt.Errorf("open the secret of webhook endpoint %s: %w", ep.ID, err)
	}
	out := []string{string(cur)}
	if ep.Rotating(now) {
		prev, err := s.Open(ep.PreviousSecretSealed, SecretAAD(ep.ID))
		if err != nil {
			return nil, fmt.Errorf("open the previous secret of webhook endpoint %s: %w", ep.ID, err)
		}
		out = append(out, string(prev))
	}
	return out, nil
}
