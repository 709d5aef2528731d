// Package server is Paygate's HTTP face: routes.go lists the whole surface;
// this file holds the middleware every request passes (request id, panic
// recovery, metrics, the access log, unknown paths and methods).
package server

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/netip"
	"path"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/paygate/paygate/internal/allowance"
	"github.com/paygate/paygate/internal/cabinet"
	"github.com/paygate/paygate/internal/cabinet/pages"
	"github.com/paygate/paygate/internal/cardinfo"
	"github.com/paygate/paygate/internal/checkout"
	"github.com/paygate/paygate/internal/clock"
	"github.com/paygate/paygate/internal/fault"
	"github.com/paygate/paygate/internal/forwarded"
	"github.com/paygate/paygate/internal/merchant"
	"github.com/paygate/paygate/internal/openapi"
	"github.com/paygate/paygate/internal/payment"
	"github.com/paygate/paygate/internal/payout"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/savedcard"
	"github.com/paygate/paygate/internal/store"
	"github.com/paygate/paygate/internal/subscription"
	"github.com/paygate/paygate/internal/verification"
	"github.com/paygate/paygate/internal/webhook"
)

// Config is what the HTTP layer needs to know of the deployment.
type Config struct {
	Environment string // merchant.Sandbox or merchant.Production
	Version     string // the service version reported by /health
	PublicURL   string // base of links given to payers, e.g. http://127.0.0.1:8080
	// RateLimit is the most requests one access key may make per second,
	// counted across every API process; 0 turns the limit off.
	RateLimit      int
	TrustedProxies []netip.Prefix
	// OpsOnly serves only health, the OpenAPI document and metrics: a
	// worker process (serve --role worker).
	OpsOnly bool
	// MetricsApart leaves GET /metrics off the API's routes: it is
	// unauthenticated, and served on a listener of its own (serve
	// --metrics-addr; docs/operations.md, "Metrics"). Requests are still
	// counted.
	MetricsApart bool
	// ProviderOrigins are the origins of the providers' payer pages (3DS,
	// hosted checkout), e.g. http://127.0.0.1:8090: the checkout's forms may
	// lead there (Content-Security-Policy form-action).
	ProviderOrigins []string
	// AccountOrigins are the acquirer accounts' page origins, as read now
	// (checkout.Config.AccountOrigins); nil: none.
	AccountOrigins func() []string
	// KeyCache is how long an access key looked up is kept: 0 is
	// DefaultKeyCache in production and nothing in the sandbox (see
	// DefaultKeyCache), less than 0 nothing is kept.
	KeyCache time.Duration
}

// Store is what the HTTP layer keeps in the database itself, around the
// services: the transactions of the write pipeline (Batch; InTx for the
// sandbox clock's advance and the checkout's pages), the idempotency
// records, nonces and rate admission, the access-key lookup of
// authentication, and health's ping. Every resource (payments, sessions,
// payouts, verifications, subscriptions, webhooks, saved cards,
// allowances, channels) is read and changed through its domain service
// (docs/architecture.md, "Packages"); internal/archtest checks that the
// handlers call nothing else of the store and its transactions. The
// store's Store is one.
type Store interface {
	Batch(ctx context.Context, fn func(context.Context, *store.Tx) error) error
	InTx(ctx context.Context, fn func(tx *store.Tx) error) error
	Admit(ctx context.Context, keyID, nonce string, now time.Time, countRate bool) (fresh bool, recent int, err error)
	FindIdempotentResponse(ctx context.Context, keyID, idemKey string) (store.StoredResponse, error)
	FindKeyByAccessKey(ctx context.Context, accessKey string) (merchant.Key, error)
	Ping(ctx context.Context) error
}

// Server serves the client API, and the checkout's pages beside it.
type Server struct {
	cfg     Config
	views   Views
	proxies forwarded.Proxies // cfg.TrustedProxies
	// store is the HTTP layer's own persistence (Store): its transactions
	// and requests' records, never a resource.
	store     Store
	merchants *merchant.Service
	payments  *payment.Service
	// verifications are card verifications (internal/verification).
	verifications *verification.Service
	payouts       *payout.Service
	// subscriptions serve /subscriptions; clock the sandbox clock.
	subscriptions *subscription.Service
	clock         *clock.Advancer
	validator     *openapi.Validator
	log           *slog.Logger
	now           func() time.Time
	metrics       *Metrics
	draining      atomic.Bool
	handler       http.Handler
	patterns      []string
	keys          *keyCache

	bins        *cardinfo.Service
	binFallback func(ctx context.Context, keyID, bin string) (provider.BINInfo, error)
	webhooks    *webhook.Service
	allowances  *allowance.Service
	savedCards  *savedcard.Service
	checkout    *checkout.Pages // the payer's pages (internal/checkout)
	// engine and providers apply acquirers' notifications (acquirers.go).
	engine    *payment.Engine
	providers Providers
	cabinet   *pages.Pages // the merchant cabinet's pages; nil: off
}

// Deps are the services a Server calls.
// Providers finds an acquirer by its account's name.
type Providers interface {
	Provider(name string) (provider.Provider, error)
}

type Deps struct {
	// Store is the HTTP layer's own persistence (Store); *store.Store.
	Store     Store
	Merchants *merchant.Service
	Payments  *payment.Service
	// Verifications are card verifications; nil: their routes are off.
	Verifications *verification.Service
	// Payouts serves /payouts; nil: those routes answer 404.
	Payouts *payout.Service
	// Subscriptions serves /subscriptions and /mandates; nil: 404.
	Subscriptions *subscription.Service
	// Clock advances the sandbox keys' clocks; nil: the advance is 404.
	Clock *clock.Advancer
	// Engine runs provider calls the checkout makes itself (the provider's
	// own page for provider_redirect channels) and applies acquirers'
	// notifications; nil: both are off.
	Engine *payment.Engine
	// Providers finds an acquirer by its account's name: its
	// notifications (POST /providers/{name}/webhooks); nil: that route
	// answers 404.
	Providers Providers
	Log       *slog.Logger
	Now       func() time.Time
	Metrics   *Metrics

	// BINs is the BIN base (GET /cards/information).
	BINs *cardinfo.Service
	// BINFallback asks the provider of the calling key about a BIN the
	// active BIN version does not cover; nil means no fallback.
	BINFallback func(ctx context.Context, keyID, bin string) (provider.BINInfo, error)
	// Webhooks manages webhook endpoints and re-sends events.
	Webhooks *webhook.Service
	// Allowances reads a key's allowances (GET /limits).
	Allowances *allowance.Service
	// SavedCards lists and deletes a key's saved cards
	// (/cabinet/v1/payment-method-tokens).
	SavedCards *savedcard.Service
	// Keys is the master keyring (*vault.Keyring): the checkout's
	// anti-forgery key derives from it, so that every process of a cluster
	// shares it (docs/checkout.md, Security). Required.
	Keys KeyDeriver
	// Cabinet manages the merchant cabinet's users and sessions; nil: the
	// /cabinet/ pages answer 404 (docs/cabinet.md).
	Cabinet *cabinet.Service
	// CabinetData is what the cabinet's pages read and change, built by
	// the composition root over the store (internal/cabinet/data); a nil
	// area answers 404.
	CabinetData pages.Data
}

// KeyDeriver derives secrets from the master keys (Deps.Keys); it is the
// checkout's, whose anti-forgery key derives from them.
type KeyDeriver = checkout.KeyDeriver

// New builds the server and its routes.
func New(cfg Config, d Deps) (*Server, error) {
	v, err := openapi.NewValidator()
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, views: NewViews(cfg.PublicURL, d.Now), proxies: forwarded.Proxies(cfg.TrustedProxies), store: d.Store, merchants: d.Merchants,
		payments: d.Payments, verifications: d.Verifications, payouts: d.Payouts, subscriptions: d.Subscriptions, clock: d.Clock, validator: v, log: d.Log, now: d.Now, metrics: d.Metrics, bins: d.BINs,
		binFallback: d.BINFallback, webhooks: d.Webhooks, allowances: d.Allowances, savedCards: d.SavedCards,
		engine: d.Engine, providers: d.Providers}
	ttl := cfg.KeyCache
	if ttl == 0 && cfg.Environment != merchant.Sandbox {
		ttl = DefaultKeyCache
	}
	s.keys = &keyCache{ttl: ttl, now: d.Now}
	cd := checkout.Deps{Store: d.Store, Payments: d.Payments, Validator: v, Log: d.Log, Now: d.Now, Keys: d.Keys,
		RequestID: requestID, StatusOf: statusOf}
	if d.Engine != nil { // a nil *payment.Engine in the interface would not read as nil
		cd.Engine = d.Engine
	}
	if s.checkout, err = checkout.New(checkout.Config{Environment: cfg.Environment, PublicURL: cfg.PublicURL,
		ProviderOrigins: cfg.ProviderOrigins, AccountOrigins: cfg.AccountOrigins, Proxies: s.proxies}, cd); err != nil {
		return nil, err
	}
	if d.Cabinet != nil {
		if s.cabinet, err = pages.New(pages.Config{PublicURL: cfg.PublicURL, Proxies: s.proxies},
			pages.Deps{Users: d.Cabinet, Keys: d.Keys, Log: d.Log, Data: d.CabinetData, Export: s.exportPage}); err != nil {
			return nil, err
		}
	}
	mux := http.NewServeMux()
	s.routes(mux)
	s.handler = s.outer(mux)
	return s, nil
}

// ServeHTTP serves one request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// Drain makes new requests answer 503 unavailable while in-flight ones finish.
func (s *Server) Drain() { s.draining.Store(true) }

type ctxKey int

const requestIDKey ctxKey = iota

// requestID returns the id given to the request by outer.
func requestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey).(string)
	return id
}

// outer gives every request an id (also sent as X-Request-Id), answers
// unknown paths and methods with the envelope, recovers panics as 500
// internal_error and refuses work while draining.
func (s *Server) outer(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := uuid.NewString()
		w.Header().Set("X-Request-Id", id)
		r = r.WithContext(context.WithValue(r.Context(), requestIDKey, id))
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.log.Error("panic serving request", "request_id", id, "path", r.URL.Path, "panic", v)
				s.fail(w, r, fault.New(fault.Internal, "an internal error occurred; retry later"))
			}
		}()
		if s.draining.Load() {
			w.Header().Set("Connection", "close")
			s.fail(w, r, fault.New(fault.Unavailable, "the server is shutting down; retry on another connection"))
			return
		}
		if !canonicalPath(r.URL.Path) {
			// ServeMux would answer a redirect to the cleaned path, in HTML;
			// Paygate never links to such a path, so it is no endpoint
			// (docs/api.md, "Text and query strings").
			s.unmatched(w, r, nil)
			return
		}
		if h, pattern := mux.Handler(r); pattern == "" {
			s.unmatched(w, r, h)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// unmatched answers a request no route takes: 405 when the path exists with
// other methods (the Allow header says which), else 404, both as envelopes.
// muxAnswer nil means 404.
func (s *Server) unmatched(w http.ResponseWriter, r *http.Request, muxAnswer http.Handler) {
	start := s.now()
	probe := &statusProbe{header: http.Header{}}
	if muxAnswer != nil {
		muxAnswer.ServeHTTP(probe, r)
	}
	f := fault.New(fault.NotFound, "no such endpoint")
	if probe.status == http.StatusMethodNotAllowed {
		w.Header().Set("Allow", probe.header.Get("Allow"))
		f = fault.New(fault.MethodNotAllowed, "this method is not allowed on this path")
	}
	s.fail(w, r, f)
	s.observe(r, "unmatched", statusOf(f.Code), start)
}

// canonicalPath reports whether p is already what ServeMux would clean it
// to: rooted, without "//", "." or ".." segments (a final "/" kept).
func canonicalPath(p string) bool {
	if p == "" || p[0] != '/' {
		return false
	}
	clean := path.Clean(p)
	return clean == p || clean+"/" == p
}

// statusProbe records what the mux's own 404/405 handler would answer.
type statusProbe struct {
	header http.Header
	status int
}

func (p *statusProbe) Header() http.Header         { return p.header }
func (p *statusProbe) Write(b []byte) (int, error) { return len(b), nil }
func (p *statusProbe) WriteHeader(status int)      { p.status = status }

// fail answers with the error envelope.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, f *fault.Error) {
	status, body := errorBody(f, requestID(r.Context()))
	if f.Code == fault.RateLimited {
		w.Header().Set("Retry-After", retryAfter(f.RetryAfter))
	}
	writeJSON(w, status, body)
}

// failErr answers an error of any kind: a *fault.Error as itself, a
// resource changed by a concurrent request (any resource's ErrConflict) as
// the retryable 409 of docs/api.md ("Idempotency"), a database that cannot
// be reached as 503, anything else as 500 with the cause only in the log
// (docs/design/decisions.md section 3).
func (s *Server) failErr(w http.ResponseWriter, r *http.Request, err error) {
	if f, ok := fault.As(err); ok {
		s.fail(w, r, f)
		return
	}
	if errors.Is(err, context.Canceled) && r.Context().Err() != nil {
		return // the client went away; nobody reads an answer
	}
	if f, ok := fault.ConflictAnswer(err); ok {
		s.fail(w, r, f)
		return
	}
	if store.Unreachable(err) {
		s.log.Warn("database unavailable", "request_id", requestID(r.Context()), "error", err)
		s.fail(w, r, fault.New(fault.Unavailable, "the service is temporarily unavailable; retry later"))
		return
	}
	s.log.Error("request failed", "request_id", requestID(r.Context()), "path", r.URL.Path, "error", err)
	s.fail(w, r, fault.New(fault.Internal, "an internal error occurred; retry later"))
}

// route wraps a handler with the access log and metrics under its pattern.
func (s *Server) route(pattern string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := s.now()
		rec := &recorder{ResponseWriter: w, status: http.StatusOK}
		h.ServeHTTP(rec, r)
		s.observe(r, pattern, rec.status, start)
	})
}

func (s *Server) observe(r *http.Request, pattern string, status int, start time.Time) {
	elapsed := s.now().Sub(start)
	if s.metrics != nil {
		s.metrics.observeRequest(pattern, status, elapsed)
	}
	level := slog.LevelInfo
	if pattern == polledRoute && status < 400 {
		level = slog.LevelDebug
	}
	s.log.Log(r.Context(), level, "request", "request_id", requestID(r.Context()), "method", r.Method, "route", pattern,
		"status", status, "duration_ms", float64(elapsed.Microseconds())/1000,
		"access_key", r.Header.Get("X-Access-Key"))
}

// polledRoute is read over and over by design (`paygate listen` asks for
// new events every second): its answered reads are logged at debug, so
// they do not bury the other lines (docs/operations.md, "Logs"). Its
// refusals stay at info, and the metrics count every request.
const polledRoute = "GET /api/v1/events"

// recorder remembers the status a handler answered with.
type recorder struct {
	http.ResponseWriter
	status int
}

func (r *recorder) WriteHeader(status int) {
	r.status = status
	r.ResponseWriter.WriteHeader(status)
}

// Unwrap lets http.ResponseController reach the connection.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// retryAfter is a Retry-After value in whole seconds, at least one.
func retryAfter(d time.Duration) string {
	s := int64((d + time.Second - 1) / time.Second)
	return strconv.FormatInt(max(s, 1), 10)
}
