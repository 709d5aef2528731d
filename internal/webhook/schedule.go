package webhook

import (
	"math/rand/v2"
	"time"
)

// retryDelays are the waits after the first failed attempts of a round
// (docs/design/decisions.md section 6): 5 s, 5 min, 30 min, 2 h, 5 h, 10 h,
// 10 h; then retryEvery.
var retryDelays = []time.Duration{
	5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour, 10 * time.Hour, 10 * time.Hour,
}

const (
	retryEvery = 12 * time.Hour
	// RetryWindow is how long after the first attempt of a round a delivery
	// is retried; then it is abandoned (failed).
	RetryWindow = 72 * time.Hour
	// MaxRetryAfter bounds how far an endpoint's Retry-After can push the
	// next attempt.
	MaxRetryAfter = 12 * time.Hour
)

// RetryDelay is the schedule's wait after the nth failed attempt (n ≥ 1),
// before jitter.
func RetryDelay(n int) time.Duration {
	if n < 1 {
		n = 1
	}
	if n <= len(retryDelays) {
		return retryDelays[n-1]
	}
	return retryEvery
}

// Jitter spreads d by up to ±10 %, so that the retries of many deliveries
// that failed together (a receiver outage) do not arrive together.
func Jitter(d time.Duration) time.Duration {
	spread := int64(d) / 5 // the width of ±10 %
	if spread <= 0 {
		return d
	}
	return d - time.Duration(spread/2) + time.Duration(rand.Int64N(spread+1))
}

// NextAttempt says when a delivery is tried again after its nth failed
// attempt of a round that began at first, the last one at now. retryAfter
// is the endpoint's Retry-After (0 when absent): it can postpone the
// schedule's next attempt, up to MaxRetryAfter, never hasten it. ok is
// false when the next attempt would fall past RetryWindow: the delivery is
// abandoned.
func NextAttempt(first, now time.Time, n int, retryAfter time.Duration, jitter func(time.Duration) time.Duration) (next time.Time, ok bool) {
	if jitter == nil {
		jitter = Jitter
	}
	d := jitter(RetryDelay(n))
	if retryAfter > d {
		d = min(retryAfter, MaxRetryAfter)
	}
	next = now.Add(d)
	if next.After(first.Add(RetryWindow)) {
		return time.Time{}, false
	}
	return next, true
}
