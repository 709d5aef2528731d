package clock

import (
	"context"
	"fmt"
	"time"
)

// Due is one thing that falls due for a key at At: a subscription's
// charge or retry, an expiry.
type Due struct {
	At time.Time
	// Run does it; ctx carries the key's clock, moved to At. It answers
	// what it ran (a name of AdvanceResult's counts) or "" when, by then,
	// there was nothing to do.
	Run func(ctx context.Context) (ran string, err error)
}

// Source finds, for one kind of resource, what falls due next for a key
// no later than upTo (nil: nothing).
type Source interface {
	NextDue(ctx context.Context, keyID string, upTo time.Time) (*Due, error)
}

// Offsets keeps the keys' clock offsets.
type Offsets interface {
	KeyClockOffset(ctx context.Context, keyID string) (time.Duration, error)
	// MoveKeyClock moves the key's offset forward to offset (never back).
	MoveKeyClock(ctx context.Context, keyID string, offset time.Duration) error
}

// Advancer moves a key's sandbox clock (docs/design/decisions.md section
// 14): forward only, running everything that falls due on the way, in
// time order, each at its own time.
type Advancer struct {
	Base    func() time.Time // the process's clock
	Offsets Offsets
	Sources []Source
}

// The counts of an advance's answer (schema SandboxClockAdvanced, ran).
const (
	RanSubscriptionCharges = "subscription_charges"
	RanRetries             = "retries"
	RanExpirations         = "expirations"
)

// maxSteps bounds one advance: five years of daily subscriptions of a
// busy key is far below it; a source that keeps answering the same due
// item would otherwise spin for ever.
const maxSteps = 200_000

// Advance moves key's clock to `to` (or leaves it where it is if it is
// already later) and returns the clock's time then and how many of each
// kind of thing ran.
func (a *Advancer) Advance(ctx context.Context, keyID string, to time.Time) (time.Time, map[string]int, error) {
	ran := map[string]int{RanSubscriptionCharges: 0, RanRetries: 0, RanExpirations: 0}
	off, err := a.Offsets.KeyClockOffset(ctx, keyID)
	if err != nil {
		return time.Time{}, nil, err
	}
	idle := 0
	for step := 0; ; step++ {
		if step == maxSteps {
			return time.Time{}, nil, fmt.Errorf("clock advance: more than %d steps", maxSteps)
		}
		var next *Due
		for _, src := range a.Sources {
			d, err := src.NextDue(ctx, keyID, to)
			if err != nil {
				return time.Time{}, nil, err
			}
			if d != nil && (next == nil || d.At.Before(next.At)) {
				next = d
			}
		}
		if next == nil {
			break
		}
		if o := next.At.Sub(a.Base()); o > off {
			if err := a.Offsets.MoveKeyClock(ctx, keyID, o); err != nil {
				return time.Time{}, nil, err
			}
			off = o
		}
		kind, err := next.Run(With(ctx, off))
		if err != nil {
			return time.Time{}, nil, err
		}
		if kind == "" {
			// Another process did it first, or it changed meanwhile: look
			// again, but not for ever.
			if idle++; idle > 100 {
				break
			}
			continue
		}
		idle = 0
		ran[kind]++
	}
	if o := to.Sub(a.Base()); o > off {
		if err := a.Offsets.MoveKeyClock(ctx, keyID, o); err != nil {
			return time.Time{}, nil, err
		}
		off = o
	}
	return Now(With(ctx, off), a.Base), ran, nil
}
