// Package app is Paygate's composition root: New builds the whole object
// graph of one process (services, engines, jobs, the HTTP server) from a
// Config, through constructors that take every dependency they need. The
// binary's serve, the server's tests and, through the binary, the
// benchmarks all start Paygate with it, so the wiring exists once
// (docs/architecture.md, "The composition root"). Only this package
// constructs the domain services (internal/archtest checks it).
package app

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/paygate/paygate/internal/allowance"
	"github.com/paygate/paygate/internal/cabinet"
	"github.com/paygate/paygate/internal/cabinet/data"
	"github.com/paygate/paygate/internal/cardinfo"
	"github.com/paygate/paygate/internal/clock"
	"github.com/paygate/paygate/internal/handoff"
	"github.com/paygate/paygate/internal/jobs"
	"github.com/paygate/paygate/internal/merchant"
	"github.com/paygate/paygate/internal/operation"
	"github.com/paygate/paygate/internal/payment"
	"github.com/paygate/paygate/internal/payout"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/account"
	"github.com/paygate/paygate/internal/provider/circuit"
	"github.com/paygate/paygate/internal/provider/sandbox"
	"github.com/paygate/paygate/internal/provider/stripe"
	"github.com/paygate/paygate/internal/reconcile"
	"github.com/paygate/paygate/internal/savedcard"
	"github.com/paygate/paygate/internal/server"
	"github.com/paygate/paygate/internal/store"
	"github.com/paygate/paygate/internal/subscription"
	"github.com/paygate/paygate/internal/vault"
	"github.com/paygate/paygate/internal/verification"
	"github.com/paygate/paygate/internal/webhook"
	"github.com/paygate/paygate/internal/webhook/outbound"
)

// Config is what one Paygate process is built from. Store, Keyring, Now,
// Log and Providers are required: New refuses a Config without them.
type Config struct {
	Store   *store.Store
	Keyring *vault.Keyring
	Now     func() time.Time
	Log     *slog.Logger
	// NewID makes resource ids; nil: UUIDv7.
	NewID func() string
	// RiverTime is River's clock when Now is not the real one (a test's,
	// PAYGATE_CLOCK_FILE); nil: River's own.
	RiverTime rivertype.TimeGenerator

	// Environment is merchant.Sandbox or merchant.Production.
	Environment string
	Version     string
	// Providers are the built-in acquirers by name (the in-process
	// sandbox); the stored provider accounts join them through Kinds
	// (docs/providers.md). ProviderOrigins are the origins of their payer
	// pages (3DS, hosted checkout), which the checkout's forms may lead
	// to; the stored accounts' are added.
	Providers       provider.Registry
	ProviderOrigins []string
	// Kinds are the adapters a provider account may have; nil: Kinds().
	Kinds account.Kinds
	// ProviderClient is the HTTP client of the accounts' adapters, its
	// timeout the time after which a call's outcome counts as unknown;
	// nil: one with a 10 s timeout.
	ProviderClient *http.Client
	// MaxAttempts bounds a payment's attempts, one channel each
	// (docs/design/decisions.md section 17); 0: payment.DefaultMaxAttempts.
	MaxAttempts int
	// Breaker holds this process's circuits, one per acquirer account
	// (docs/design/decisions.md section 17); the built-in providers' clients
	// should go through it too (Breaker.Client). nil: a new one.
	Breaker *circuit.Breaker
	// BINFallback asks about a BIN the BIN base does not cover; nil: the
	// provider of the key's first channel that answers BIN lookups.
	BINFallback func(ctx context.Context, keyID, bin string) (provider.BINInfo, error)

	// PublicURL is the base of the links given to payers and merchants
	// (no trailing slash); ReturnURL the base a payer's 3DS step of a
	// hosted payment returns to, empty: PublicURL.
	PublicURL      string
	ReturnURL      string
	RateLimit      int
	TrustedProxies []netip.Prefix
	// KeyCache: server.Config.KeyCache.
	KeyCache time.Duration
	// FormKeys are the master keys the anti-forgery key of the checkout's
	// and the cabinet's forms derives from; nil: Keyring. A test sets
	// them apart to try a cluster whose processes hold other rings.
	FormKeys server.KeyDeriver
	// OpsOnly serves only health and metrics (role worker).
	OpsOnly bool
	// MetricsApart leaves /metrics off the API's listener (server.Config).
	MetricsApart bool
	// CabinetParams are the Argon2id parameters of new cabinet passwords;
	// zero: the recommended ones.
	CabinetParams cabinet.Params

	// Work runs jobs in this process (role all or worker); false queues
	// them for other processes (role api).
	Work bool
	// Jobs are River's options; Work, Log, Time, OnFinished and Handoff
	// are set by New.
	Jobs jobs.Options
	// Operations are the operation engine's tunables; KeyClocks is set by
	// New (every resource's decisions read its key's clock).
	Operations operation.Options
	// WebhookTimeout is how long an endpoint has to answer; 0: 15 s.
	WebhookTimeout time.Duration
	// WebhookJitter spreads webhook retries; nil: ±10 % at random.
	WebhookJitter func(time.Duration) time.Duration
	// Resolver looks up the host of a production webhook endpoint, to
	// refuse private addresses (docs/webhooks.md); nil looks nothing up.
	Resolver webhook.Resolver
}

// App is one process's object graph.
type App struct {
	Store     *store.Store
	Keyring   *vault.Keyring
	Log       *slog.Logger
	Now       func() time.Time
	Merchants *merchant.Service
	// Accounts are the stored provider accounts; Providers finds the
	// adapter of a channel's provider among them and the built-in ones.
	Accounts      *account.Service
	Providers     *account.Registry
	BINs          *cardinfo.Service
	Payments      *payment.Service
	PaymentEngine *payment.Engine
	Verifications *verification.Engine
	Payouts       *payout.Engine
	Subscriptions *subscription.Service
	Operations    *operation.Engine[Reader, *store.Tx]
	Webhooks      *webhook.Service
	Allowances    *allowance.Service
	SavedCards    *savedcard.Service
	Cabinet       *cabinet.Service
	// Reconciler compares the money moved with the acquirers' records
	// (docs/design/decisions.md section 18).
	Reconciler *reconcile.Service
	// Clock advances the sandbox keys' clocks with every expiry on the way.
	Clock   *clock.Advancer
	Metrics *server.Metrics
	Server  *server.Server
	// Queue is River's client; Handoff runs what this process queues.
	Queue   *river.Client[*sql.Tx]
	Handoff *handoff.Workers

	work    bool
	started bool
	stopRun context.CancelFunc // the registry's refresh
}

// Reader is every read a run makes before its provider call: the
// operation engine's and each resource's handler's. The store's read-only
// Queries and its transactions both offer it, which the compiler checks
// where the engine is built (New).
type Reader interface {
	operation.Reader
	payment.LoadReader
	payout.LoadReader
	verification.LoadReader
}

// New builds a process's graph on an opened, migrated store. Nothing runs
// until Start.
func New(cfg Config) (*App, error) {
	if cfg.Store == nil || cfg.Keyring == nil || cfg.Now == nil || cfg.Log == nil || cfg.Providers == nil {
		return nil, errors.New("app: Store, Keyring, Now, Log and Providers are required")
	}
	if cfg.NewID == nil {
		cfg.NewID = func() string { return uuid.Must(uuid.NewV7()).String() }
	}
	if cfg.ReturnURL == "" {
		cfg.ReturnURL = cfg.PublicURL
	}
	s, kr, now, newID, log := cfg.Store, cfg.Keyring, cfg.Now, cfg.NewID, cfg.Log
	a := &App{Store: s, Keyring: kr, Log: log, Now: now, work: cfg.Work}
	views := server.NewViews(cfg.PublicURL, now)

	a.Merchants = &merchant.Service{Store: s, Sealer: kr, Now: now, NewID: newID, Environment: cfg.Environment,
		ErrDuplicate: store.ErrDuplicate}
	if cfg.Kinds == nil {
		cfg.Kinds = Kinds()
	}
	client := cfg.ProviderClient
	if client == nil {
		client = &http.Client{Timeout: 10 * time.Second}
	}
	a.Accounts = account.NewService(s, kr, cfg.Kinds, cfg.Environment, now, store.ErrNotFound, store.ErrDuplicate)
	if cfg.Breaker == nil {
		cfg.Breaker = circuit.New(time.Now)
	}
	metrics := server.NewMetrics(s.Collectors()...)
	cfg.Breaker.OnChange = func(name string, st circuit.State) {
		log.Warn("an acquirer's circuit changed", "provider", name, "circuit", string(st))
		metrics.Circuit(name, st == circuit.Open)
	}
	metrics.ChannelCircuits(func(ctx context.Context) ([]server.ChannelRef, error) {
		cs, err := s.ListChannels(ctx)
		refs := make([]server.ChannelRef, len(cs))
		for i, c := range cs {
			refs[i] = server.ChannelRef{Alias: c.Alias, Provider: c.Provider}
		}
		return refs, err
	}, func(name string) bool { return cfg.Breaker.State(name) != circuit.Closed }, log)
	a.Providers = account.NewRegistry(cfg.Providers, s, kr, cfg.Kinds, client, cfg.Breaker, log)
	{
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err := a.Providers.Reload(ctx)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("read the provider accounts: %w", err)
		}
	}
	a.BINs = &cardinfo.Service{Store: s, Now: now, NewID: newID, Log: log}
	a.Allowances = allowance.NewService(s, now)
	a.SavedCards = savedcard.NewService(s, now, store.ErrNotFound)
	cfg.Operations.KeyClocks = true
	a.Operations = operation.NewEngine(
		func(ctx context.Context, fn func(*store.Tx) error) error {
			// Batched: on SQLite the jobs' commits group with the requests'.
			return s.Batch(ctx, func(_ context.Context, tx *store.Tx) error { return fn(tx) })
		},
		// One read-only transaction for the reads before a provider call.
		func(ctx context.Context, fn func(Reader) error) error {
			return s.ReadOnly(ctx, func(q store.Queries) error { return fn(q) })
		},
		// A handed-off run reads in the transaction that queues it.
		func(tx *store.Tx) Reader { return tx },
		kr, now, log, cfg.Operations)

	// The subscription domain charges through the payment service, which
	// tells it of payments with terms: made together.
	a.Payments = payment.NewService(kr, now, newID, a.Providers, a.BINs, s, store.ErrNotFound, views.Payment,
		func(p *payment.Service) payment.Recurring {
			a.Subscriptions = subscription.NewService(p, s,
				func(ctx context.Context, fn func(subscription.ChargeTx) error) error {
					return s.InTx(ctx, func(tx *store.Tx) error { return fn(tx) })
				},
				a.Operations, now, newID, log, views.Subscription, views.Mandate, store.ErrNotFound)
			return a.Subscriptions
		})
	pollEvery := cfg.Operations.PollEvery
	if pollEvery == 0 {
		pollEvery = 2 * time.Second
	}
	a.PaymentEngine = payment.NewEngine(a.Payments, s,
		func(ctx context.Context, fn func(payment.EngineTx) error) error {
			return s.Batch(ctx, func(_ context.Context, tx *store.Tx) error { return fn(tx) })
		},
		a.Operations, log, pollEvery, cfg.ReturnURL, cfg.MaxAttempts, metrics)
	a.Verifications = verification.NewEngine(
		verification.NewService(kr, now, newID, a.Providers, kr, s, store.ErrNotFound, views.Verification), s,
		func(ctx context.Context, fn func(verification.EngineTx) error) error {
			return s.Batch(ctx, func(_ context.Context, tx *store.Tx) error { return fn(tx) })
		})
	a.Payouts = payout.NewEngine(
		payout.NewService(kr, now, newID, a.Providers, a.BINs, s, store.ErrNotFound, views.Payout), s,
		func(ctx context.Context, fn func(payout.EngineTx) error) error {
			return s.Batch(ctx, func(_ context.Context, tx *store.Tx) error { return fn(tx) })
		},
		a.Operations, log)
	a.Operations.Handle(payment.Resource, payment.NewHandler[Reader, *store.Tx](a.PaymentEngine))
	a.Operations.Handle(verification.Resource, verification.NewHandler[Reader, *store.Tx](a.Verifications))
	a.Operations.Handle(payout.Resource, payout.NewHandler[Reader, *store.Tx](a.Payouts))
	a.Clock = &clock.Advancer{Base: now, Offsets: s, Sources: []clock.Source{a.Subscriptions.ClockSource(),
		a.PaymentEngine.ClockSource(), a.Verifications.ClockSource(), a.Payouts.ClockSource()}}

	// Webhooks: the sandbox may deliver to any address (a merchant's
	// laptop); production only to public ones.
	sandbox := cfg.Environment != merchant.Production
	timeout := cfg.WebhookTimeout
	if timeout == 0 {
		timeout = outbound.DefaultTimeout
	}
	dispatcher := &webhook.Dispatcher{Store: s, Sealer: kr, Now: now, NewID: newID, Log: log, SendTimeout: timeout,
		Sender: outbound.New(outbound.Config{Timeout: timeout, AllowPrivate: sandbox}), Jitter: cfg.WebhookJitter,
		Transact: func(ctx context.Context, fn func(webhook.DispatchTx) error) error {
			return s.Batch(ctx, func(_ context.Context, tx *store.Tx) error { return fn(tx) })
		}}
	a.Webhooks = webhook.NewService(kr, now, newID, !sandbox, cfg.Resolver, s, store.ErrNotFound)

	// Every process registers every job kind (River refuses to insert a
	// kind it does not know); one that works runs what it queues itself
	// (internal/handoff, docs/operations.md).
	workers := river.NewWorkers()
	operation.AddWorkers(workers, a.Operations)
	payment.AddWorkers(workers, a.PaymentEngine)
	verification.AddWorkers(workers, a.Verifications)
	payout.AddWorkers(workers, a.Payouts)
	webhook.AddWorkers(workers, dispatcher)
	a.Reconciler = reconcile.NewService(s, a.Providers, now)
	river.AddWorker(workers, &reconcile.DailyWorker{Service: a.Reconciler, Accounts: s, Done: s, Log: log})
	a.Handoff = handoff.NewWorkers()
	operation.AddHandoff(a.Handoff, a.Operations)
	webhook.AddHandoff(a.Handoff, dispatcher)

	a.Metrics = metrics
	a.Metrics.ObserveBatches(s.BatchStats)
	jo := cfg.Jobs
	jo.Work, jo.Log, jo.Time, jo.Handoff = cfg.Work, log, cfg.RiverTime, a.Handoff
	jo.OnFinished = func(kind, outcome string) { a.Metrics.Jobs.WithLabelValues(kind, outcome).Inc() }
	var err error
	if a.Queue, err = jobs.NewClient(s, workers, now, jo); err != nil {
		return nil, err
	}

	a.Cabinet = &cabinet.Service{Store: s, Now: now, Params: cfg.CabinetParams}
	var formKeys server.KeyDeriver = kr
	if cfg.FormKeys != nil {
		formKeys = cfg.FormKeys
	}
	fallback := cfg.BINFallback
	if fallback == nil {
		fallback = binFallback(s, a.Providers)
	}
	a.Server, err = server.New(server.Config{
		Environment: cfg.Environment, Version: cfg.Version, PublicURL: cfg.PublicURL, RateLimit: cfg.RateLimit,
		TrustedProxies: cfg.TrustedProxies, KeyCache: cfg.KeyCache, ProviderOrigins: cfg.ProviderOrigins,
		AccountOrigins: a.Providers.AccountOrigins, OpsOnly: cfg.OpsOnly, MetricsApart: cfg.MetricsApart,
	}, server.Deps{Store: s, Merchants: a.Merchants, Payments: a.Payments, Verifications: a.Verifications.Service,
		Payouts: a.Payouts.Service, Subscriptions: a.Subscriptions, Clock: a.Clock, Engine: a.PaymentEngine, Providers: a.Providers,
		Log: log, Now: now, Metrics: a.Metrics, BINs: a.BINs, BINFallback: fallback, Webhooks: a.Webhooks,
		Allowances: a.Allowances, SavedCards: a.SavedCards, Keys: formKeys, Cabinet: a.Cabinet,
		CabinetData: data.New(s, now, a.Providers, a.Subscriptions, a.Webhooks)})
	if err != nil {
		return nil, err
	}
	return a, nil
}

// Start runs the jobs (a process that works): River's workers and the
// handoff. The subscription scheduler is the caller's to run
// (Subscriptions.Run), as often as it chooses.
func (a *App) Start(ctx context.Context) error {
	run, stop := context.WithCancel(context.WithoutCancel(ctx))
	a.stopRun = stop
	go a.Providers.Run(run)
	if !a.work {
		return nil
	}
	if err := a.Queue.Start(ctx); err != nil {
		return err
	}
	a.started = true
	return nil
}

// Stop stops the jobs within ctx: a handed-off run cut short leaves its
// job to River (its lease lapses).
func (a *App) Stop(ctx context.Context) error {
	if a.stopRun != nil {
		a.stopRun()
	}
	if !a.started {
		return nil
	}
	handoffErr := make(chan error, 1)
	go func() { handoffErr <- a.Handoff.Stop(ctx) }()
	return errors.Join(a.Queue.Stop(ctx), <-handoffErr)
}

// RescueAll queues River's job for every handed-off run's lease, lapsed or
// not: on SQLite at start, where this process owns the data and every
// lease belongs to a run of a process that stopped.
func (a *App) RescueAll(ctx context.Context) (int, error) {
	return a.Handoff.Rescue(ctx, handoff.Forever)
}

// binFallback asks the provider of the key's first channel that answers BIN
// lookups about a BIN the BIN base does not cover.
func binFallback(s *store.Store, reg *account.Registry) func(ctx context.Context, keyID, bin string) (provider.BINInfo, error) {
	return func(ctx context.Context, keyID, bin string) (provider.BINInfo, error) {
		chans, err := s.ChannelsForKey(ctx, keyID)
		if err != nil {
			return provider.BINInfo{}, err
		}
		for _, c := range chans {
			p, err := reg.Provider(c.Provider)
			if err != nil {
				continue
			}
			if src, ok := p.(provider.BINSource); ok {
				return src.BIN(ctx, bin)
			}
		}
		return provider.BINInfo{}, provider.Errorf(provider.NotFound, "no provider to ask")
	}
}

// Seed writes what a database needs before its first request: the default
// BIN version (docs/bins.md) and, in the sandbox environment, the sandbox
// channels. Both only where missing: every start and command may run it.
func Seed(ctx context.Context, s *store.Store, environment string, now func() time.Time) error {
	newID := func() string { return uuid.Must(uuid.NewV7()).String() }
	bins := &cardinfo.Service{Store: s, Now: now, NewID: newID}
	if err := s.InTx(ctx, func(tx *store.Tx) error { _, err := bins.Seed(ctx, tx); return err }); err != nil {
		return err
	}
	if environment != merchant.Sandbox {
		return nil
	}
	for _, c := range merchant.SandboxChannels() {
		c.ID, c.CreatedAt = newID(), now()
		if _, err := s.EnsureChannel(ctx, c); err != nil {
			return err
		}
	}
	return nil
}

// Kinds are the adapters Paygate can put behind a provider account
// (docs/providers.md): the next acquirer adds its kind here.
func Kinds() account.Kinds {
	return account.Kinds{"sandbox": sandbox.Kind(), "stripe": stripe.Kind()}
}
