package acquirer

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/sandbox"
)

func TestFaultKinds(t *testing.T) {
	tests := []struct {
		name    string
		faults  Faults
		kind    provider.ErrorKind
		charges int // a fault before processing leaves none
	}{
		{"server error before processing", Faults{ServerErrorRate: 1}, provider.Transient, 0},
		{"rate limited before processing", Faults{RateLimitRate: 1, RetryAfter: 3 * time.Second}, provider.RateLimited, 0},
		{"timeout after processing", Faults{TimeoutRate: 1}, provider.OutcomeUnknown, 1},
		{"unreadable after processing", Faults{UnreadableRate: 1}, provider.Unreadable, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, func(c *Config) { c.Faults = tt.faults })
			a := sandbox.NewAdapter(e.run.URL, e.run.APIKey, &http.Client{Timeout: 200 * time.Millisecond})
			r := payReq("4242424242424242")
			_, err := a.Pay(context.Background(), r)
			kind(t, err, tt.kind)
			if tt.kind == provider.RateLimited {
				var pe *provider.Error
				require.True(t, errors.As(err, &pe))
				require.Equal(t, 3*time.Second, pe.RetryAfter)
			}
			require.Equal(t, tt.charges, e.srv.Count(EntryCharge, r.OperationID))
			// The ledger is the measuring stick: faults never touch it.
			entries, err := a.Ledger(context.Background())
			require.NoError(t, err)
			require.Len(t, entries, tt.charges)
		})
	}
}

func TestFaultLatency(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.Faults = Faults{LatencyRate: 1, Latency: 50 * time.Millisecond} })
	start := time.Now()
	res := e.pay(payReq("4242424242424242"))
	require.Equal(t, provider.StatusSucceeded, res.Status)
	require.GreaterOrEqual(t, time.Since(start), 50*time.Millisecond)
}

// faultRun sends n BIN lookups one after another and returns the kind of
// each outcome ("" for success).
func faultRun(t *testing.T, f Faults, n int) []provider.ErrorKind {
	e := newEnv(t, func(c *Config) { c.Faults = f })
	kinds := make([]provider.ErrorKind, n)
	for i := range kinds {
		if _, err := e.a.BIN(context.Background(), "424242"); err != nil {
			kinds[i] = provider.KindOf(err)
		}
	}
	return kinds
}

func TestFaultRates(t *testing.T) {
	f := Faults{Seed: 42, ServerErrorRate: 0.2, RateLimitRate: 0.2, UnreadableRate: 0.2}
	const n = 500
	kinds := faultRun(t, f, n)
	counts := map[provider.ErrorKind]int{}
	for _, k := range kinds {
		counts[k]++
	}
	for k, want := range map[provider.ErrorKind]int{
		provider.Transient: n / 5, provider.RateLimited: n / 5, provider.Unreadable: n / 5, "": 2 * n / 5,
	} {
		require.InDelta(t, want, counts[k], float64(n)/10, "kind %q: %v", k, counts)
	}
	require.Len(t, counts, 4)

	t.Run("the same seed gives the same faults", func(t *testing.T) {
		require.Equal(t, kinds, faultRun(t, f, n))
	})
}
