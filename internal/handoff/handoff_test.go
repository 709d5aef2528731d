package handoff

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"
)

type args struct{}

func (args) Kind() string { return "test.job" }

// tx is a transaction that commits when told.
type tx struct {
	w     *Workers
	after []func(bool)
}

func (t *tx) AfterCommit(fn func(bool)) { t.after = append(t.after, fn) }
func (t *tx) Handoff() *Workers         { return t.w }
func (t *tx) end(committed bool) {
	for _, fn := range t.after {
		fn(committed)
	}
}

// hand reserves a slot for a job in a transaction of w and hands it data,
// and returns the transaction (not yet ended), or nil when no slot was
// free.
func hand(w *Workers, data int) *tx {
	t := &tx{w: w}
	slot := Reserve[int](t, args{})
	if slot == nil {
		return nil
	}
	slot.Hand(context.Background(), data)
	return t
}

// TestPool: a run that panics frees its slot and is reported; a run's
// context ends before its lease lapses; Stop waits for the runs,
// then cancels them when its context ends; a rollback runs nothing.
func TestPool(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	start := func(fn Func[int]) (*Workers, chan string) {
		w := NewWorkers()
		Add(w, args{}.Kind(), fn, nil)
		finished := make(chan string, 10)
		w.OnFinished = func(_, outcome string) { finished <- outcome }
		w.Start(map[string]int{river.QueueDefault: 1}, time.Minute, clock)
		return w, finished
	}

	t.Run("a panic frees the slot", func(t *testing.T) {
		w, finished := start(func(context.Context, Job[int]) error { panic("boom") })
		tx := hand(w, 1)
		require.NotNil(t, tx)
		require.Nil(t, hand(w, 2), "one slot")
		tx.end(true)
		require.Equal(t, "panicked", <-finished)
		tx = hand(w, 3)
		require.NotNil(t, tx, "the slot is free again")
		tx.end(false)
	})

	t.Run("the run gets what it was handed, and ends before its lease lapses", func(t *testing.T) {
		deadline := make(chan time.Duration, 1)
		got := make(chan Job[int], 1)
		w, finished := start(func(ctx context.Context, j Job[int]) error {
			d, ok := ctx.Deadline()
			require.True(t, ok)
			deadline <- time.Until(d)
			got <- j
			return nil
		})
		hand(w, 7).end(true)
		require.Equal(t, "completed", <-finished)
		j := <-got
		require.True(t, j.Prepared)
		require.Equal(t, 7, j.Data)
		require.Equal(t, now.Add(time.Minute), j.Due)
		d := <-deadline
		margin := Margin(time.Minute) // 6 s: a tenth of the window
		require.Equal(t, 6*time.Second, margin)
		require.Less(t, d, time.Minute-margin+time.Millisecond)
		require.Greater(t, d, time.Minute-margin-time.Second)
	})

	t.Run("a rollback runs nothing and frees the slot", func(t *testing.T) {
		w, finished := start(func(context.Context, Job[int]) error { return nil })
		hand(w, 1).end(false)
		tx := hand(w, 2)
		require.NotNil(t, tx, "the slot is free again")
		tx.end(true)
		require.Equal(t, "completed", <-finished)
	})

	t.Run("stop waits, then cancels", func(t *testing.T) {
		running := make(chan struct{})
		w, finished := start(func(ctx context.Context, _ Job[int]) error {
			close(running)
			<-ctx.Done()
			return ctx.Err()
		})
		hand(w, 1).end(true)
		<-running
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		require.ErrorIs(t, w.Stop(ctx), context.Canceled)
		require.Equal(t, "handed_back", <-finished)
		require.Nil(t, hand(w, 2), "a stopped pool takes nothing")
	})
}

// TestPrepare: what the queuing transaction prepares reaches the run; a
// preparation that fails leaves the run to read for itself; handing a
// kind what it was not registered with is a programming error.
func TestPrepare(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	got := make(chan Job[string], 1)
	w := NewWorkers()
	AddPrepared(w, args{}.Kind(), func(_ context.Context, j Job[string]) error { got <- j; return nil },
		func(_ context.Context, t *tx, _ river.JobArgs, given int) (string, error) {
			if given < 0 {
				return "", errors.New("cannot read")
			}
			return strings.Repeat("x", given), nil
		}, nil)
	w.Start(map[string]int{river.QueueDefault: 1}, time.Minute, func() time.Time { return now })
	defer w.Stop(context.Background())

	hand(w, 3).end(true)
	j := <-got
	require.True(t, j.Prepared)
	require.Equal(t, "xxx", j.Data)

	hand(w, -1).end(true)
	j = <-got
	require.False(t, j.Prepared, "the run reads for itself")

	require.Panics(t, func() { Reserve[string](&tx{w: w}, args{}) })

	other := struct{ *tx }{&tx{w: w}} // a transaction of another type
	require.Panics(t, func() {
		slot := Reserve[int](other, args{})
		defer slot.Release() // as the queuing code defers it
		slot.Hand(context.Background(), 1)
	})
	tx := hand(w, 2)
	require.NotNil(t, tx, "the slot of the run that panicked is free again")
	tx.end(true)
	require.Equal(t, "xx", (<-got).Data)
}
