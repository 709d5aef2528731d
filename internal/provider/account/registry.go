package account

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/circuit"
)

// Refresh is how often a Registry reads the stored accounts again: a change made by `paygate providers`
// reaches every process within it (docs/design/decisions.md section 16
// asks for 5 seconds).
const Refresh = 2 * time.Second

// Registry finds providers by the name channels use: the built-in ones
// (the in-process sandbox) and the stored accounts, whose adapters it
// builds from their kinds and credentials and rebuilds when an account
// changes. It implements the domain packages' Providers.
type Registry struct {
	builtin provider.Registry
	lister  interface {
		ListProviderAccounts(ctx context.Context) ([]Account, error)
	}
	sealer  Sealer
	kinds   Kinds
	client  *http.Client
	breaker *circuit.Breaker
	log     *slog.Logger

	reloads  sync.Mutex
	mu       sync.RWMutex
	accounts map[string]entry
	origins  []string // of the stored accounts' payer pages
}

type entry struct {
	updated time.Time
	status  string
	p       provider.Provider
	err     error // the account's adapter could not be built: the error says why
}

// NewRegistry returns a registry of builtin and the stored accounts that
// lister lists. client is the HTTP client of every adapter it builds.
func NewRegistry(builtin provider.Registry, lister interface {
	ListProviderAccounts(ctx context.Context) ([]Account, error)
}, sealer Sealer, kinds Kinds, client *http.Client, breaker *circuit.Breaker, log *slog.Logger) *Registry {
	if builtin == nil {
		builtin = provider.Registry{}
	}
	return &Registry{builtin: builtin, lister: lister, sealer: sealer, kinds: kinds, client: client, breaker: breaker,
		log: log, accounts: map[string]entry{}}
}

// Available reports whether new payments may be routed to the provider
// name: its circuit in this process is not open
// (docs/design/decisions.md section 17). Follow-ups go to it whatever
// this says.
func (r *Registry) Available(name string) bool {
	return r.breaker == nil || r.breaker.Available(name)
}

// Provider implements the domain packages' Providers: a disabled
// account's provider too, for what it already holds. It never reads the
// database (it is called inside transactions, and SQLite has one
// connection): Run and Reload keep its view fresh.
func (r *Registry) Provider(name string) (provider.Provider, error) {
	if p, ok := r.builtin[name]; ok {
		return p, nil
	}
	r.mu.RLock()
	e, ok := r.accounts[name]
	r.mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("no provider %q is configured (paygate providers list)", name)
	}
	return e.p, e.err
}

// Run reads the stored accounts every Refresh until ctx ends; a failed
// read keeps the last view and is logged.
func (r *Registry) Run(ctx context.Context) {
	t := time.NewTicker(Refresh)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := r.Reload(ctx); err != nil && ctx.Err() == nil {
				r.log.Warn("provider accounts could not be read again; the last ones stay in use", "error", err)
			}
		}
	}
}

// Reload reads the stored accounts now.
// It rebuilds the adapters of the accounts that changed since they were
// built, keeping the others (and their connections).
func (r *Registry) Reload(ctx context.Context) error {
	r.reloads.Lock() // one read and rebuild at a time: the newest list wins
	defer r.reloads.Unlock()
	list, err := r.lister.ListProviderAccounts(ctx)
	if err != nil {
		return err
	}
	r.mu.RLock()
	cur := r.accounts
	r.mu.RUnlock()
	next := make(map[string]entry, len(list))
	for _, a := range list {
		if old, ok := cur[a.Name]; ok && old.updated.Equal(a.UpdatedAt) {
			next[a.Name] = old
			continue
		}
		next[a.Name] = r.build(a)
	}
	origins := Origins(r.kinds, list)
	r.mu.Lock()
	r.accounts, r.origins = next, origins
	r.mu.Unlock()
	return nil
}

func (r *Registry) build(a Account) entry {
	e := entry{updated: a.UpdatedAt, status: a.Status}
	k, ok := r.kinds[a.Kind]
	if !ok {
		e.err = fmt.Errorf("provider account %s has kind %s, which this Paygate does not know", a.Name, a.Kind)
		return e
	}
	c, err := Open(r.sealer, a)
	if err != nil {
		e.err = err
		return e
	}
	client := r.client
	if r.breaker != nil {
		client = r.breaker.Client(a.Name, client)
	}
	if e.p, err = k.New(a.Name, a.BaseURL, c, client); err != nil {
		e.err = fmt.Errorf("provider account %s: %w", a.Name, err)
	}
	return e
}

// AccountOrigins are the origins of the stored accounts' payer pages (3DS,
// hosted checkout) as last read: the checkout's forms may lead there
// (docs/checkout.md).
func (r *Registry) AccountOrigins() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.origins
}

// Origins are the origins of the payer pages of every kind at the
// accounts' base URLs, for the checkout's form-action (docs/checkout.md).
func Origins(kinds Kinds, accounts []Account) []string {
	var out []string
	for _, a := range accounts {
		if k, ok := kinds[a.Kind]; ok && k.Origins != nil {
			for _, o := range k.Origins(a.BaseURL) {
				if !slices.Contains(out, o) {
					out = append(out, o)
				}
			}
		}
	}
	return out
}
