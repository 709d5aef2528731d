package clock

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/paygate/paygate/internal/fault"
)

type expireArgs struct{ ID string }

func (expireArgs) Kind() string { return "thing.expire" }

// TestExpiryWorker: before the key's deadline the job snoozes for the wait;
// at it, the expiry's own answer (done, or an error River retries on).
func TestExpiryWorker(t *testing.T) {
	boom := errors.New("boom")
	for _, tc := range []struct {
		name   string
		wait   time.Duration
		err    error
		snooze time.Duration // 0: no snooze
		want   error
	}{
		{"before the deadline", 90 * time.Second, nil, 90 * time.Second, nil},
		{"at the deadline", 0, nil, 0, nil},
		{"failed", 0, boom, 0, boom},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got string
			w := &ExpiryWorker[expireArgs]{Expire: func(a expireArgs) Expiry {
				return func(context.Context) (bool, time.Duration, error) { got = a.ID; return tc.wait == 0, tc.wait, tc.err }
			}}
			err := w.Work(context.Background(), &river.Job[expireArgs]{JobRow: &rivertype.JobRow{}, Args: expireArgs{ID: "p1"}})
			if got != "p1" {
				t.Errorf("the expiry of %q ran, want p1", got)
			}
			var snooze *rivertype.JobSnoozeError
			switch {
			case tc.snooze > 0:
				if !errors.As(err, &snooze) || snooze.Duration != tc.snooze {
					t.Errorf("err %v, want a snooze of %s", err, tc.snooze)
				}
			case !errors.Is(err, tc.want) || (tc.want == nil && err != nil):
				t.Errorf("err %v, want %v", err, tc.want)
			}
		})
	}
}

// TestExpired: an advance counts a change, nothing for a resource that
// moved meanwhile (any resource's lost compare-and-set), and fails on any
// other error.
func TestExpired(t *testing.T) {
	conflict := fmt.Errorf("save: %w", fault.Conflict("payout", fault.InvalidPayoutState))
	boom := errors.New("boom")
	for _, tc := range []struct {
		changed bool
		err     error
		want    string
		wantErr error
	}{
		{true, nil, RanExpirations, nil},
		{false, nil, "", nil},
		{false, conflict, "", nil},
		{false, boom, "", boom},
	} {
		got, err := DueAt(time.Time{}, func(context.Context) (bool, time.Duration, error) { return tc.changed, 0, tc.err }).Run(context.Background())
		if got != tc.want || !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) {
			t.Errorf("changed %v, err %v: got %q, %v", tc.changed, tc.err, got, err)
		}
	}
}
