package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"runtime"
	"strings"
	"time"

	"github.com/paygate/paygate/internal/app"
	"github.com/paygate/paygate/internal/handoff"
	"github.com/paygate/paygate/internal/jobs"
	"github.com/paygate/paygate/internal/merchant"
	"github.com/paygate/paygate/internal/operation"
	"github.com/paygate/paygate/internal/payment"
	"github.com/paygate/paygate/internal/provider/account"
	"github.com/paygate/paygate/internal/provider/circuit"
	"github.com/paygate/paygate/internal/store"
)

// serve runs the API and the workers until ctx ends (SIGINT/SIGTERM), then
// stops accepting, lets in-flight requests and jobs finish, and closes.
func serve(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlagSet("serve", stderr)
	db := dbFlags{create: true} // a first start makes the data folder (docs/design/decisions.md section 10)
	db.register(fs, getenv)
	var prov providerFlags
	prov.register(fs, getenv)
	addr := fs.String("addr", envOr(getenv, "PAYGATE_ADDR", "127.0.0.1:8080"), "address to listen on (PAYGATE_ADDR)")
	publicURL := fs.String("public-url", getenv("PAYGATE_PUBLIC_URL"), "base of links given to payers; default http://ADDR (PAYGATE_PUBLIC_URL)")
	proxies := fs.String("trusted-proxies", getenv("PAYGATE_TRUSTED_PROXIES"), "comma-separated CIDRs whose X-Forwarded-For is believed (PAYGATE_TRUSTED_PROXIES)")
	rateLimit := fs.Int("rate-limit", envInt(getenv, "PAYGATE_RATE_LIMIT", 100), "requests per second per access key, 0 for none (PAYGATE_RATE_LIMIT)")
	workers := fs.Int("workers", envInt(getenv, "PAYGATE_WORKERS", 20), "background jobs run at once (PAYGATE_WORKERS)")
	maxAttempts := fs.Int("max-attempts", envInt(getenv, "PAYGATE_MAX_ATTEMPTS", payment.DefaultMaxAttempts),
		"channels a payment may be tried on when one surely did nothing (1: no failover) (PAYGATE_MAX_ATTEMPTS)")
	jobSteps := fs.Int("job-steps", envInt(getenv, "PAYGATE_JOB_STEPS", runtime.GOMAXPROCS(0)),
		"payment jobs doing their own work (not waiting for a provider) at once; more: more payments completed per second, fewer: lower request latency (PAYGATE_JOB_STEPS; default: the cores)")
	circuitCooldown := fs.Duration("circuit-cooldown", circuit.Cooldown,
		"how long an acquirer account's open circuit skips it before one call probes it (docs/providers.md, \"Circuits\")")
	rescueAfter := fs.Duration("rescue-after", 2*time.Minute, "PostgreSQL: how long a job may stay running before another process takes it over (a crashed worker's)")
	jobTimeout := fs.Duration("job-timeout", time.Minute, "the longest a background job may run; more than --provider-timeout, less than --rescue-after")
	schedulerEvery := fs.Duration("scheduler-every", 5*time.Second,
		"how often a worker looks for subscription charges that fall due (docs/subscriptions.md)")
	shutdown := fs.Duration("shutdown-timeout", 30*time.Second, "how long in-flight requests and jobs may take to finish on SIGTERM")
	webhookTimeout := fs.Duration("webhook-timeout", defaultWebhookTimeout, "how long a webhook endpoint has to answer")
	pprofAddr := fs.String("pprof-addr", getenv("PAYGATE_PPROF_ADDR"),
		"serve Go's profiles (net/http/pprof) on this address, e.g. 127.0.0.1:6060; empty: none. Loopback only: profiles show memory (PAYGATE_PPROF_ADDR)")
	metricsAddr := fs.String("metrics-addr", getenv("PAYGATE_METRICS_ADDR"),
		"serve /metrics (Prometheus, unauthenticated) on this address of its own, e.g. 127.0.0.1:9090; empty: on the API's address in the sandbox, nowhere in production (PAYGATE_METRICS_ADDR)")
	keyCache := fs.String("key-cache", getenv("PAYGATE_KEY_CACHE"),
		"how long an access key looked up is kept; a revoked key stops within it (docs/signing.md); 0: never kept; "+
			"empty: 5s in production, never in the sandbox, whose keys carry their clock (PAYGATE_KEY_CACHE)")
	role := fs.String("role", envOr(getenv, "PAYGATE_ROLE", "all"),
		"all: the API and the workers; api: the API only (jobs are queued for workers); worker: the jobs only, with /api/v1/health and /metrics (PAYGATE_ROLE)")
	if err := fs.Parse(args); err != nil {
		return usageError{err.Error()}
	}
	if *circuitCooldown <= 0 {
		return usageError{"--circuit-cooldown must be positive"}
	}
	keyCacheTTL := time.Duration(0) // the environment's default
	if *keyCache != "" {
		d, err := time.ParseDuration(*keyCache)
		if err != nil || d < 0 {
			return usageError{"--key-cache must be a duration such as 5s, or 0"}
		}
		keyCacheTTL = orNone(d)
	}
	if *role != "all" && *role != "api" && *role != "worker" {
		return usageError{"--role must be all, api or worker"}
	}
	if *role != "all" && db.databaseURL == "" {
		return usageError{"--role api and worker need PostgreSQL (--database-url): SQLite serves one process"}
	}
	// A job's run ends before River may rescue it, with the margin a
	// handed-off run keeps too (clocks): a retry never overlaps the first
	// run (operation.Engine.Run).
	if *jobTimeout <= prov.callTimeout || *rescueAfter < *jobTimeout+handoff.Margin(*rescueAfter) {
		return usageError{fmt.Sprintf("want --provider-timeout < --job-timeout, and --job-timeout at least %s under --rescue-after",
			handoff.Margin(*rescueAfter))}
	}
	if *jobSteps < 1 {
		return usageError{"--job-steps must be at least 1"}
	}
	if *maxAttempts < 1 || *maxAttempts > 2 {
		return usageError{"--max-attempts must be 1 (no failover) or 2 (docs/providers.md, Routing)"}
	}
	if *webhookTimeout <= 0 {
		return usageError{"--webhook-timeout must be positive"}
	}
	trusted, err := parsePrefixes(*proxies)
	if err != nil {
		return usageError{err.Error()}
	}

	started := time.Now()
	if db.databaseURL == "" {
		unlock, err := lockDataDir(db.dataDir)
		if err != nil {
			return err
		}
		defer unlock()
	}
	a, err := db.open(ctx, stderr)
	if err != nil {
		return err
	}
	defer a.close()
	breaker := circuit.New(time.Now)
	breaker.Cooldown = *circuitCooldown
	registry, pageOrigins, closeProviders, err := prov.start(a.env, db.dataDir, a, breaker)
	if err != nil {
		return err
	}
	defer closeProviders()

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	defer ln.Close() // once served, closed already: harmless
	base := "http://" + ln.Addr().String()
	if *publicURL == "" {
		*publicURL = base
	}
	cfg := a.config(registry)
	cfg.ProviderOrigins = pageOrigins
	cfg.ProviderClient = &http.Client{Timeout: prov.callTimeout}
	cfg.Breaker = breaker
	cfg.MaxAttempts = *maxAttempts
	cfg.PublicURL = strings.TrimRight(*publicURL, "/")
	cfg.RateLimit, cfg.TrustedProxies, cfg.KeyCache, cfg.OpsOnly = *rateLimit, trusted, keyCacheTTL, *role == "worker"
	cfg.Work = *role != "api" // an API process only queues jobs: workers run them
	cfg.Jobs = jobs.Options{MaxWorkers: *workers, RescueAfter: *rescueAfter, JobTimeout: *jobTimeout}
	cfg.Operations = operation.Options{PollEvery: 2 * time.Second, CrashAt: getenv("PAYGATE_CRASH_AT"),
		OpTimeout: *jobTimeout, Steps: *jobSteps}
	cfg.WebhookTimeout = *webhookTimeout
	// /metrics is unauthenticated: on its own address when one is given,
	// and never on the API's in production (docs/operations.md, "Metrics").
	cfg.MetricsApart = *metricsAddr != "" || a.env == merchant.Production
	p, err := app.New(cfg)
	if err != nil {
		return err
	}
	// On SQLite this process owns the data: a job running at start, and a
	// lease held, belong to a process that stopped, and run now
	// (docs/operations.md, "Background jobs" and "Jobs run where they are
	// queued (handoff)").
	if db.databaseURL == "" {
		if n, err := a.store.RequeueRunningJobs(ctx); err != nil {
			return err
		} else if n > 0 {
			a.log.Warn("requeued jobs interrupted by the last stop", "jobs", n)
		}
		if n, err := p.RescueAll(ctx); err != nil {
			return err
		} else if n > 0 {
			a.log.Warn("queued the jobs of handed-off runs interrupted by the last stop", "jobs", n)
		}
	}
	if a.env == merchant.Sandbox && *role != "worker" {
		if err := firstKey(ctx, a.store, p.Merchants, base, stdout); err != nil {
			return err
		}
	}
	if err := p.Start(ctx); err != nil {
		return err
	}
	if cfg.Work {
		// Every worker process runs the subscription scheduler; the
		// database keeps them from charging a period twice
		// (docs/subscriptions.md, "Exactly once").
		go p.Subscriptions.Run(ctx, *schedulerEvery)
	}

	if *metricsAddr != "" {
		at, stopMetrics, err := serveMetrics(*metricsAddr, p.Metrics.Handler())
		if err != nil {
			return err
		}
		defer stopMetrics()
		a.log.Info("metrics", "url", "http://"+at+"/metrics")
	} else if a.env == merchant.Production {
		a.log.Warn("no --metrics-addr: /metrics is not served (production keeps it off the API's address)")
	}
	if a.env == merchant.Production {
		if err := warnNoChannel(ctx, a.store, stderr); err != nil {
			return err
		}
	}

	if *pprofAddr != "" {
		stopProfiles, err := serveProfiles(*pprofAddr)
		if err != nil {
			return err
		}
		defer stopProfiles()
	}

	httpServer := &http.Server{
		Handler:           p.Server,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		ErrorLog:          nil,
	}
	served := make(chan error, 1)
	go func() { served <- httpServer.Serve(ln) }()
	fmt.Fprintf(stdout, "Paygate %s (%s, role %s) listening on %s (started in %s, %s database)\n",
		version, a.env, *role, base, time.Since(started).Round(time.Millisecond), a.store.Dialect())
	a.log.Info("listening", "addr", base, "environment", a.env, "database", string(a.store.Dialect()))

	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	a.log.Info("shutting down")
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), *shutdown)
	defer cancel()
	p.Server.Drain()
	httpErr := httpServer.Shutdown(stopCtx)
	queueErr := p.Stop(stopCtx)
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return errors.Join(httpErr, queueErr)
}

// serveMetrics serves GET /metrics alone on addr until stop, and answers
// the address it listens on.
func serveMetrics(addr string, h http.Handler) (at string, stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, fmt.Errorf("--metrics-addr: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", h)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return ln.Addr().String(), func() { _ = srv.Close() }, nil
}

// warnNoChannel warns when production has no channel on an enabled
// acquirer account: it would start and refuse every payment with
// channel_not_available. The built-in sandbox account does not count,
// since production refuses it (docs/design/decisions.md section 16).
func warnNoChannel(ctx context.Context, s *store.Store, stderr io.Writer) error {
	accounts, err := s.ListProviderAccounts(ctx)
	if err != nil {
		return err
	}
	enabled := map[string]bool{}
	for _, a := range accounts {
		enabled[a.Name] = a.Status == account.Enabled && a.Name != account.Builtin
	}
	chs, err := s.ListChannels(ctx)
	if err != nil {
		return err
	}
	for _, c := range chs {
		if enabled[c.Provider] {
			return nil
		}
	}
	fmt.Fprint(stderr, `
WARNING: production has no payment channel on an acquirer: every payment will be
refused with 422 channel_not_available. Add an acquirer account and a channel
(the database flags as for serve); running servers see them within 2 seconds:

  paygate providers add --name NAME --kind stripe --secret-key-file FILE
  paygate channels create --alias ALIAS --provider NAME --methods card --currencies USD --auto-assign

`)
	return nil
}

// firstKey creates and prints a sandbox key when the database has none, so
// a fresh start is ready to try (docs/design/decisions.md section 10).
func firstKey(ctx context.Context, s *store.Store, merchants *merchant.Service, base string, stdout io.Writer) error {
	existing, err := s.ListKeys(ctx)
	if err != nil || len(existing) > 0 {
		return err
	}
	k, err := merchants.Create(ctx, merchant.NewKey{Name: "default", DirectCardData: true})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, `
A sandbox key was created. The secret is shown this once: keep it out of
browsers, shell history and tickets.

  access key  %s
  secret      %s

Try it in another terminal:

  export PAYGATE_URL=%s
  export PAYGATE_ACCESS_KEY=%s
  export PAYGATE_SECRET=%s
  go run ./cmd/paygate call POST /api/v1/payment-sessions \
    -d '{"order_id":"order-1","amount_minor":1999,"currency":"USD","description":"Tea"}'

`, k.Key.AccessKey, k.Secret, base, k.Key.AccessKey, k.Secret)
	return nil
}

func parsePrefixes(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		p, err := netip.ParsePrefix(part)
		if err != nil {
			return nil, fmt.Errorf("--trusted-proxies: %q is not a CIDR", part)
		}
		out = append(out, p)
	}
	return out, nil
}

// orNone maps a flag's 0 ("none") to the config's negative.
func orNone(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}

func envInt(getenv func(string) string, name string, def int) int {
	var n int
	if _, err := fmt.Sscanf(getenv(name), "%d", &n); err != nil {
		return def
	}
	return n
}
