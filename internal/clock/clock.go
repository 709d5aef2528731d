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
