package store

import (
	"context"
	"errors"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/paygate/paygate/internal/handoff"
)

// A transaction hands jobs off to this process (internal/handoff): it
// queues them with their id, runs what waits for its commit, and deletes
// a job whose outcome it records.

// UseHandoff sets the workers that run jobs queued here in this process;
// nil: River runs every job.
func (s *Store) UseHandoff(w *handoff.Workers) { s.handoff = w }

// Handoff implements handoff.Tx.
func (t *Tx) Handoff() *handoff.Workers { return t.store.handoff }

// EnqueueJob implements handoff.Tx: Enqueue, with the job's id.
func (t *Tx) EnqueueJob(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) (int64, bool, error) {
	if t.store.queue == nil {
		return 0, false, errors.New("store: no job queue configured")
	}
	res, err := t.store.queue.InsertTx(t.stmtCtx(ctx), t.tx, args, opts)
	if err != nil {
		return 0, false, err
	}
	return res.Job.ID, !res.UniqueSkippedAsDuplicate, nil
}

// DeleteJob implements handoff.Deleter: the job is deleted with this
// transaction. One already gone, or running (River's own run, which finds
// the outcome recorded), is left as it is.
func (t *Tx) DeleteJob(ctx context.Context, id int64) error {
	if t.store.queue == nil {
		return errors.New("store: no job queue configured")
	}
	_, err := t.store.queue.JobDeleteTx(t.stmtCtx(ctx), t.tx, id)
	if errors.Is(err, rivertype.ErrNotFound) || errors.Is(err, rivertype.ErrJobRunning) {
		return nil
	}
	return err
}

// AfterCommit implements handoff.Tx: fn runs once the transaction's fate
// is known, true after its commit, false after a rollback, a failed
// commit, or a rollback to a savepoint taken before fn was added.
func (t *Tx) AfterCommit(fn func(committed bool)) { t.after.fns = append(t.after.fns, fn) }

// afterCommit holds a transaction's AfterCommit functions and the
// savepoints taken among them.
type afterCommit struct {
	fns   []func(bool)
	marks []savepointMark
}

type savepointMark struct {
	name string
	n    int // len(fns) when it was taken
}

func (a *afterCommit) mark(name string) {
	a.marks = append(a.marks, savepointMark{name, len(a.fns)})
}

// undo runs, with false, the functions added since savepoint name, which
// stays (ROLLBACK TO keeps it; later ones are gone).
func (a *afterCommit) undo(name string) {
	for i := len(a.marks) - 1; i >= 0; i-- {
		if a.marks[i].name == name {
			a.fire(a.marks[i].n, false)
			a.marks = a.marks[:i+1]
			return
		}
	}
}

// fire runs the functions from the from'th on, once each.
func (a *afterCommit) fire(from int, committed bool) {
	if from >= len(a.fns) {
		return
	}
	fns := a.fns[from:]
	a.fns = a.fns[:from]
	for _, fn := range fns {
		fn(committed)
	}
}
