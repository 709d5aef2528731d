package handoff

import (
	"context"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"
)

type args struct{}

func (args) Kind() string { return "test.job" }

// TestPool: a run that panics frees its slot and is reported; a run's
// context ends before its lease lapses; Stop waits for the runs,
// then cancels them when its context ends.
func TestPool(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	start := func(fn Func) (*Workers, chan string) {
		w := NewWorkers()
		w.Add(args{}.Kind(), fn, nil, nil)
		finished := make(chan string, 10)
		w.OnFinished = func(_, outcome string) { finished <- outcome }
		w.Start(map[string]int{river.QueueDefault: 1}, time.Minute, clock)
		return w, finished
	}
	job := Job{Args: args{}, Due: now.Add(time.Minute)}

	t.Run("a panic frees the slot", func(t *testing.T) {
		w, finished := start(func(context.Context, Job) error { panic("boom") })
		p := w.reserve(args{})
		require.NotNil(t, p)
		require.Nil(t, w.reserve(args{}), "one slot")
		p.run(job)
		require.Equal(t, "panicked", <-finished)
		p = w.reserve(args{})
		require.NotNil(t, p, "the slot is free again")
		p.release()
	})

	t.Run("the run ends before its lease lapses", func(t *testing.T) {
		deadline := make(chan time.Duration, 1)
		w, finished := start(func(ctx context.Context, _ Job) error {
			d, ok := ctx.Deadline()
			require.True(t, ok)
			deadline <- time.Until(d)
			return nil
		})
		w.reserve(args{}).run(job)
		require.Equal(t, "completed", <-finished)
		d := <-deadline
		margin := Margin(time.Minute) // 6 s: a tenth of the window
		require.Equal(t, 6*time.Second, margin)
		require.Less(t, d, time.Minute-margin+time.Millisecond)
		require.Greater(t, d, time.Minute-margin-time.Second)
	})

	t.Run("stop waits, then cancels", func(t *testing.T) {
		running := make(chan struct{})
		w, finished := start(func(ctx context.Context, _ Job) error {
			close(running)
			<-ctx.Done()
			return ctx.Err()
		})
		w.reserve(args{}).run(job)
		<-running
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		require.ErrorIs(t, w.Stop(ctx), context.Canceled)
		require.Equal(t, "handed_back", <-finished)
		require.Nil(t, w.reserve(args{}), "a stopped pool takes nothing")
	})
}
