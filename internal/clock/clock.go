// Package clock is the sandbox's per-key clock (docs/design/decisions.md
// section 14): in the sandbox every access key has its own time, the
// process's time plus the key's offset, and everything Paygate decides by
// time for that key's resources reads it. The offset travels in the
// context: the API sets it from the authenticated key, a job from the key
// of the resource it works on. A context without one is the process's
// time (production keys, and anything not tied to a key).
//
// Request signing, nonces, webhook retries and leases keep the process's
// time: they are not the merchant's business rules.
package clock

import (
	"context"
	"time"
)

type offsetKey struct{}

// With returns ctx carrying a key's clock offset.
func With(ctx context.Context, offset time.Duration) context.Context {
	return context.WithValue(ctx, offsetKey{}, offset)
}

// Known reports whether ctx carries a key's clock (With was called).
func Known(ctx context.Context) bool {
	_, ok := ctx.Value(offsetKey{}).(time.Duration)
	return ok
}

// Offset is the key clock's offset carried by ctx (zero without one).
func Offset(ctx context.Context) time.Duration {
	d, _ := ctx.Value(offsetKey{}).(time.Duration)
	return d
}

// Now is base's time moved to ctx's key clock, in UTC to the microsecond
// (what the databases keep).
func Now(ctx context.Context, base func() time.Time) time.Time {
	return base().Add(Offset(ctx)).UTC().Truncate(time.Microsecond)
}

// Furthest is the furthest one advance may move a clock that reads now
// (docs/design/decisions.md section 14: at most 5 years a call), in
// calendar years.
func Furthest(now time.Time) time.Time { return now.AddDate(5, 0, 0) }

// Reader reads a key's clock offset (the store and its transactions).
type Reader interface {
	KeyClockOffset(ctx context.Context, keyID string) (time.Duration, error)
}

// OfKey returns ctx carrying the clock of the key keyID, read through r,
// unless ctx carries a key's clock already (a request's, or an advance's,
// moved to the item it runs). A job uses it for the resource it works on;
// inside a transaction r must be that transaction: on SQLite a read
// beside an open write transaction of the same goroutine waits for it.
func OfKey(ctx context.Context, r Reader, keyID string) (context.Context, error) {
	if Known(ctx) {
		return ctx, nil
	}
	off, err := r.KeyClockOffset(ctx, keyID)
	if err != nil {
		return ctx, err
	}
	return With(ctx, off), nil
}

// Process is the process's time at which ctx's key clock reads t: what a
// job that must run at a key's time t is scheduled at (River schedules by
// the process's clock). If the key's clock is moved on meanwhile, the job
// finds its work already due, or done by the advance.
func Process(ctx context.Context, t time.Time) time.Time { return t.Add(-Offset(ctx)) }
