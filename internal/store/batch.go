package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Group commit for SQLite. SQLite writes one transaction at a time and each
// durable commit waits for an fsync, so a request's own commit bounds how
// many requests a second one file can take. Batch lets concurrent writers
// share a commit: while one transaction commits, the writers that arrive
// queue up; the next transaction runs each of them in its own savepoint, one
// after another as before, and commits them all with one fsync. Nobody is
// answered before the commit that holds their writes has returned, so every
// acknowledged write is as durable as with a commit of its own.
//
// There is no waiting for company: a writer alone is committed at once.
// PostgreSQL commits concurrent transactions together by itself, so Batch
// there is a plain transaction.

// maxBatch bounds the writers one commit carries, so one transaction's
// size and a failed commit's blast radius stay small.
const maxBatch = 64

// errBatchedCommit is returned by Commit and Rollback on a batch member's
// Tx: the batch owns its transaction.
var errBatchedCommit = errors.New("store: a batched transaction is committed by its batch")

type batchMember struct {
	ctx  context.Context
	fn   func(context.Context, *Tx) error
	done chan error
}

type batcher struct {
	once    sync.Once
	in      chan *batchMember
	commits atomic.Uint64 // transactions committed or failed
	members atomic.Uint64 // writers they carried
}

// BatchStats reports how many shared transactions SQLite's group commit ran
// and how many writers they carried (members/commits is the mean group
// size). Zero on PostgreSQL.
func (s *Store) BatchStats() (commits, members uint64) {
	return s.batch.commits.Load(), s.batch.members.Load()
}

// Batch runs fn in a transaction and returns once that transaction has
// committed (fn returned nil) or fn's writes were undone (fn returned an
// error, which Batch returns). fn must not commit or roll back its Tx. On
// SQLite fn may share the transaction with other callers' fns (see above);
// it gets a context that the caller's cancellation does not reach once fn
// has started, because interrupting a statement would roll back the
// others' writes too.
func (s *Store) Batch(ctx context.Context, fn func(context.Context, *Tx) error) error {
	if s.dialect != SQLite {
		return s.InTx(ctx, func(tx *Tx) error { return runGuarded(ctx, tx, fn) })
	}
	s.batch.once.Do(func() {
		s.batch.in = make(chan *batchMember) // unbuffered: a send after close can never be stranded
		go s.runBatches()
	})
	m := &batchMember{ctx: ctx, fn: fn, done: make(chan error, 1)}
	select {
	case s.batch.in <- m:
	case <-ctx.Done():
		return ctx.Err()
	case <-s.closed:
		return errClosed
	}
	// Once queued, wait for the verdict even if ctx ends: fn may be
	// running, and the caller must not answer before it is known.
	return <-m.done
}

var errClosed = errors.New("store: closed")

// runBatches takes whoever is waiting, up to maxBatch, and commits them
// together, until the store closes.
func (s *Store) runBatches() {
	group := make([]*batchMember, 0, maxBatch)
	for {
		select {
		case m := <-s.batch.in:
			group = append(group[:0], m)
		case <-s.closed:
			s.failQueued()
			return
		}
	more:
		for len(group) < maxBatch {
			select {
			case m := <-s.batch.in:
				group = append(group, m)
			default:
				break more
			}
		}
		s.commitGroup(group)
	}
}

// failQueued answers writers still queued when the store closes.
func (s *Store) failQueued() {
	for {
		select {
		case m := <-s.batch.in:
			m.done <- errClosed
		default:
			return
		}
	}
}

// commitGroup runs each member in a savepoint and commits once. A member's
// error undoes its own writes only; a failure of the transaction itself
// (begin, savepoint, commit) fails every member that had not failed alone.
func (s *Store) commitGroup(group []*batchMember) {
	results := make([]error, len(group))
	ctx := context.Background()
	var tx *Tx
	err := func() error {
		var err error
		if tx, err = s.Begin(ctx); err != nil {
			return err
		}
		tx.batched = true
		tx.Queries.q = detached{tx.tx}
		defer tx.tx.Rollback()
		for i, m := range group {
			if err := m.ctx.Err(); err != nil {
				results[i] = err // gave up before it started: nothing ran
				continue
			}
			if _, err := tx.tx.ExecContext(ctx, "SAVEPOINT batch_member"); err != nil {
				return err
			}
			before := len(tx.after.fns)
			tx.after.marks = nil
			if results[i] = runGuarded(context.WithoutCancel(m.ctx), tx, m.fn); results[i] != nil {
				tx.after.fire(before, false) // its writes are undone, whatever comes of the others'
				if _, err := tx.tx.ExecContext(ctx, "ROLLBACK TO SAVEPOINT batch_member"); err != nil {
					return err
				}
			}
			if _, err := tx.tx.ExecContext(ctx, "RELEASE SAVEPOINT batch_member"); err != nil {
				return err
			}
		}
		return tx.tx.Commit()
	}()
	if tx != nil {
		tx.after.fire(0, err == nil)
	}
	s.batch.commits.Add(1)
	s.batch.members.Add(uint64(len(group)))
	for i, m := range group {
		if results[i] == nil {
			results[i] = err
		}
		m.done <- results[i]
	}
}

// runGuarded runs fn, turning a panic into its error so that one bad
// request cannot take others' commit down with it.
func runGuarded(ctx context.Context, tx *Tx, fn func(context.Context, *Tx) error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("store: batched transaction panicked: %v", p)
		}
	}()
	return fn(ctx, tx)
}

// Admit records a request's nonce outside a request's own transaction (a
// read, a refused write): on SQLite through the group commit, so that a
// burst of reads shares its fsyncs; on PostgreSQL as one statement (see
// Queries.Admit).
func (s *Store) Admit(ctx context.Context, keyID, nonce string, now time.Time, countRate bool) (fresh bool, recent int, err error) {
	if s.dialect != SQLite {
		return s.Queries.Admit(ctx, keyID, nonce, now, countRate)
	}
	err = s.Batch(ctx, func(ctx context.Context, tx *Tx) error {
		fresh, recent, err = tx.Admit(ctx, keyID, nonce, now, countRate)
		return err
	})
	return fresh, recent, err
}

// detached runs a batch member's statements with its context's values but
// not its cancellation: the SQLite driver interrupts a statement whose
// context ends, and an interrupted write rolls the whole transaction back,
// the other members' writes included. (Batch's fn gets such a context too;
// this covers closures that use their caller's.)
type detached struct{ q querier }

func (d detached) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return d.q.ExecContext(context.WithoutCancel(ctx), query, args...)
}

func (d detached) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return d.q.QueryContext(context.WithoutCancel(ctx), query, args...)
}

func (d detached) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return d.q.QueryRowContext(context.WithoutCancel(ctx), query, args...)
}

// stmtCtx is the context for a statement of t: detached in a batch.
func (t *Tx) stmtCtx(ctx context.Context) context.Context {
	if t.batched {
		return context.WithoutCancel(ctx)
	}
	return ctx
}
