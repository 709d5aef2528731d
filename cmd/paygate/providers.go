package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/paygate/paygate/internal/merchant"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/circuit"
	"github.com/paygate/paygate/internal/provider/sandbox"
	"github.com/paygate/paygate/internal/provider/sandbox/acquirer"
)

// providerFlags choose the acquirers serve talks to.
type providerFlags struct {
	sandboxURL, sandboxKey string
	callTimeout            time.Duration
}

func (f *providerFlags) register(fs *flag.FlagSet, getenv func(string) string) {
	fs.StringVar(&f.sandboxURL, "sandbox-url", getenv("PAYGATE_SANDBOX_URL"),
		"a standalone sandbox acquirer (paygate sandbox-acquirer); empty: run one inside serve (PAYGATE_SANDBOX_URL)")
	fs.StringVar(&f.sandboxKey, "sandbox-key", getenv("PAYGATE_SANDBOX_KEY"), "the standalone sandbox acquirer's API key (PAYGATE_SANDBOX_KEY)")
	fs.DurationVar(&f.callTimeout, "provider-timeout", 10*time.Second, "how long one provider call may take before its outcome counts as unknown")
}

// start returns the built-in providers and the origins of the providers'
// payer pages (3DS, hosted checkout), which the checkout's forms may lead
// to. In the sandbox environment the sandbox acquirer runs in-process (its
// ledger kept in DATA_DIR so that it survives a restart) unless
// --sandbox-url names a standalone one. The production environment refuses
// the sandbox acquirer (docs/design/decisions.md section 7).
func (f *providerFlags) start(env, dataDir string, a *opened, breaker *circuit.Breaker) (provider.Registry, []string, func(), error) {
	// The built-in sandbox's calls go through its circuit, as the stored
	// accounts' do (docs/design/decisions.md section 17).
	client := breaker.Client(sandbox.Name, &http.Client{Timeout: f.callTimeout})
	if env == merchant.Production {
		if f.sandboxURL != "" {
			return nil, nil, nil, errors.New("the sandbox acquirer cannot be used in production: remove --sandbox-url")
		}
		return provider.Registry{}, nil, func() {}, nil
	}
	if f.sandboxURL != "" {
		return provider.Registry{sandbox.Name: sandbox.NewAdapter(f.sandboxURL, f.sandboxKey, client)},
			[]string{f.sandboxURL}, func() {}, nil
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, nil, nil, err
	}
	run, err := acquirer.Start(acquirer.Config{StateFile: filepath.Join(dataDir, "sandbox-acquirer.json"), Logger: a.log})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("start the sandbox acquirer: %w", err)
	}
	return provider.Registry{sandbox.Name: sandbox.NewAdapter(run.URL, run.APIKey, client)}, []string{run.URL}, func() { run.Close() }, nil
}

// sandboxAcquirer runs the sandbox acquirer on its own
// (docs/design/decisions.md section 7), so its ledger outlives Paygate
// processes in crash tests.
func sandboxAcquirer(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlagSet("sandbox-acquirer", stderr)
	addr := fs.String("addr", "127.0.0.1:8090", "address to listen on")
	key := fs.String("api-key", getenv("PAYGATE_SANDBOX_KEY"), "the API key adapters must present; empty: a random one, printed (PAYGATE_SANDBOX_KEY)")
	state := fs.String("state-file", "", "keep the ledger and operations in this JSON file across restarts")
	base := fs.String("base-url", "", "public base of its pages (3DS, checkout); default from each request's Host")
	// Faults, to rehearse an outage (docs/sandbox.md, "Faults";
	// docs/design/decisions.md section 17).
	var f acquirer.Faults
	fs.Int64Var(&f.Seed, "fault-seed", 1, "seed of the fault dice: one seed, one sequence of faults")
	fs.Float64Var(&f.ServerErrorRate, "fault-503-rate", 0, "share of /v1 requests answered 503 before anything happens (0 to 1)")
	fs.Float64Var(&f.TimeoutRate, "fault-timeout-rate", 0, "share of /v1 requests carried out whose answer never comes (0 to 1)")
	fs.Float64Var(&f.UnreadableRate, "fault-unreadable-rate", 0, "share of /v1 requests carried out whose answer is cut short (0 to 1)")
	fs.Float64Var(&f.RateLimitRate, "fault-429-rate", 0, "share of /v1 requests answered 429 before anything happens (0 to 1)")
	fs.Float64Var(&f.LatencyRate, "fault-latency-rate", 0, "share of /v1 requests delayed by --fault-latency (0 to 1)")
	fs.DurationVar(&f.Latency, "fault-latency", 0, "the delay of --fault-latency-rate")
	if err := fs.Parse(args); err != nil {
		return usageError{err.Error()}
	}
	for _, r := range []float64{f.ServerErrorRate, f.TimeoutRate, f.UnreadableRate, f.RateLimitRate, f.LatencyRate} {
		if r < 0 || r > 1 {
			return usageError{"a fault rate is a share from 0 to 1"}
		}
	}
	if f.ServerErrorRate+f.TimeoutRate+f.UnreadableRate+f.RateLimitRate > 1 {
		return usageError{"--fault-503-rate, --fault-timeout-rate, --fault-unreadable-rate and --fault-429-rate add up to at most 1"}
	}
	run, err := acquirer.Listen(*addr, acquirer.Config{APIKey: *key, StateFile: *state, BaseURL: *base, Faults: f})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "sandbox acquirer listening on %s\napi key %s\n", run.URL, run.APIKey)
	<-ctx.Done()
	return run.Close()
}
