package acquirer

import (
	"math/rand/v2"
	"sync"
	"time"
)

// Faults injects failures into the /v1 API (never into the ledger or the
// pages) at the given rates, each a probability from 0 to 1. Every request
// rolls once, from a source seeded with Seed, so a run of sequential
// requests meets the same faults each time.
//
// ServerError, RateLimit, Timeout and Unreadable exclude one another (their
// rates add up to at most 1); Latency is rolled on its own.
type Faults struct {
	Seed int64

	// LatencyRate delays an answer by Latency before anything happens.
	LatencyRate float64
	Latency     time.Duration
	// ServerErrorRate answers 503 before processing: nothing happened, the
	// same request may be sent again.
	ServerErrorRate float64
	// RateLimitRate answers 429 before processing, with Retry-After
	// (RetryAfter, 1 s when zero).
	RateLimitRate float64
	RetryAfter    time.Duration
	// TimeoutRate processes the request, then withholds the answer until
	// the client gives up (bounded by Config.MaxHang): the outcome is
	// unknown to the client and must be learned by a status inquiry.
	TimeoutRate float64
	// UnreadableRate processes the request, then sends half of the answer:
	// the client cannot read what happened.
	UnreadableRate float64
}

func (f Faults) retryAfter() time.Duration {
	if f.RetryAfter <= 0 {
		return time.Second
	}
	return f.RetryAfter
}

type faultKind int

const (
	faultNone faultKind = iota
	faultServerError
	faultRateLimit
	faultTimeout
	faultUnreadable
)

// fate is what one roll decided for one request.
type fate struct {
	latency bool
	kind    faultKind
}

// dice is the seeded random source; one lock, since requests roll
// concurrently.
type dice struct {
	mu  sync.Mutex
	rng *rand.Rand
}

func newDice(seed int64) *dice {
	return &dice{rng: rand.New(rand.NewPCG(uint64(seed), 0x5a4db0c5))}
}

// roll draws the fate of one request. It always draws twice, so that the
// sequence of fates does not depend on which rates are zero.
func (d *dice) roll(f Faults) fate {
	d.mu.Lock()
	a, b := d.rng.Float64(), d.rng.Float64()
	d.mu.Unlock()
	out := fate{latency: f.Latency > 0 && a < f.LatencyRate}
	for _, k := range []struct {
		rate float64
		kind faultKind
	}{
		{f.ServerErrorRate, faultServerError},
		{f.RateLimitRate, faultRateLimit},
		{f.TimeoutRate, faultTimeout},
		{f.UnreadableRate, faultUnreadable},
	} {
		if b < k.rate {
			out.kind = k.kind
			return out
		}
		b -= k.rate
	}
	return out
}
