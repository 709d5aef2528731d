// Package acquirer is Paygate's bundled sandbox acquirer
// (docs/design/decisions.md section 7): an HTTP server that behaves like a
// real acquirer (idempotency keys, status inquiries by operation id, 3DS and
// checkout pages, holds that expire, injected faults) and a ledger of the
// money it moved. Paygate talks to it through the adapter in the parent
// package, over HTTP only, as it would to any acquirer; the two share nothing
// but the wire format (package wire).
//
// The ledger is the point: end-to-end tests, crash tests and benchmarks count
// in it what really happened (one charge per operation, however often Paygate
// retried) instead of trusting Paygate's own records. docs/sandbox.md
// describes the HTTP API and the test data for users.
package acquirer

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/sandbox/wire"
)

// Config configures a Server. The zero value works: every field has a default.
type Config struct {
	// BaseURL is the sandbox's own public base (scheme and host, no
	// trailing slash) used in the links it hands out: 3DS and checkout
	// pages. Empty: taken from each request's Host, which is right whenever
	// Paygate and the payer reach the sandbox at the same address.
	BaseURL string
	// APIKey is the shared secret the adapter sends as
	// "Authorization: Bearer <key>". Empty: a random key, see Server.APIKey.
	APIKey string
	// Now is the sandbox's clock (hold and session expiry, timestamps).
	// Tests inject one and move time instead of waiting. Nil: time.Now.
	Now func() time.Time
	// Profiles maps a profile name (the Sandbox-Profile header) to what it
	// can do. Nil: wire.DefaultProfiles.
	Profiles map[string]provider.Capabilities
	// HoldTTL is how long an authorization holds funds before it expires
	// by itself. Zero: 7 days.
	HoldTTL time.Duration
	// ShortHoldTTL is the hold lifetime of the short-hold test card
	// 4000000000000077, so that tests can watch an expiry. Zero: 1 minute.
	ShortHoldTTL time.Duration
	// SessionTTL is how long a hosted checkout session takes a card.
	// Zero: 1 hour.
	SessionTTL time.Duration
	// MaxHang bounds how long a withheld answer (the timeout fault, the
	// late test card) waits for the client to give up before it is sent
	// after all. Real time, not Now: it is about sockets. Zero: 30 s.
	MaxHang time.Duration
	// Faults injects failures at random, seeded rates.
	Faults Faults
	// StateFile, when set, is a JSON file the whole state (ledger,
	// resources, idempotency keys) is written to, atomically, after every
	// change and read back at start. An in-process sandbox then survives a
	// restart of Paygate with its ledger and its memory of operations, so a
	// restarted Paygate's status inquiries still find what it sent. One
	// process at a time holds it: a second sandbox on the same file is
	// refused (StateFile + ".lock"), or two would hand out the same bank
	// references (docs/sandbox.md, "The state file").
	StateFile string
	// Logger receives the few events an operator should see (a state file
	// that cannot be written). Nil: discarded.
	Logger *slog.Logger
}

// Server is the sandbox acquirer, an http.Handler. All state lives in
// memory behind one mutex: every operation is a few map lookups, and one
// lock makes "one charge per idempotency key" trivially true under any
// storm of retries.
type Server struct {
	cfg  Config
	mux  *http.ServeMux
	dice *dice

	closing   chan struct{} // closed by Close: withheld answers go out
	closeOnce sync.Once
	broken    error // a state file New could not read: refuse everything

	mu       sync.Mutex
	st       *state
	holds    map[string]*payment // open authorizations, for the expiry sweep
	changed  map[ref]struct{}    // resources changed since the last save
	journal  *os.File            // the state file, open for appending
	lock     *os.File            // StateFile + ".lock", held while the server lives
	written  int                 // ledger entries already in the state file
	size     int64               // bytes in the state file: its snapshot and the changes after it
	snapSize int64               // bytes of its snapshot

	// The state file's compaction in the background (state.go).
	compactMin int64          // compactMinBytes; tests lower it
	compacting bool           // one is under way
	noCompact  bool           // Close was called: none starts
	gen        int            // counts snapshots written in place: a compaction begun before one is dropped
	compacted  int            // compactions done, for tests
	compactWG  sync.WaitGroup // the compaction under way, for Close
}

// New returns a sandbox acquirer. When Config.StateFile names a file that
// cannot be read, the server refuses every request (503) rather than start
// with an empty ledger that would hide earlier charges; use Open to get the
// error instead.
func New(cfg Config) *Server {
	s, err := open(cfg)
	if err != nil {
		s.broken = err
	}
	return s
}

// Open is New that returns the error of reading Config.StateFile.
func Open(cfg Config) (*Server, error) {
	s, err := open(cfg)
	if err != nil {
		return nil, err
	}
	return s, nil
}

func open(cfg Config) (*Server, error) {
	if cfg.APIKey == "" {
		var b [24]byte
		_, _ = rand.Read(b[:]) // never fails (crypto/rand)
		cfg.APIKey = "sk_sandbox_" + hex.EncodeToString(b[:])
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Profiles == nil {
		cfg.Profiles = wire.DefaultProfiles()
	}
	cfg.HoldTTL = orDefault(cfg.HoldTTL, 7*24*time.Hour)
	cfg.ShortHoldTTL = orDefault(cfg.ShortHoldTTL, time.Minute)
	cfg.SessionTTL = orDefault(cfg.SessionTTL, time.Hour)
	cfg.MaxHang = orDefault(cfg.MaxHang, 30*time.Second)
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	s := &Server{
		cfg:     cfg,
		mux:     http.NewServeMux(),
		dice:    newDice(cfg.Faults.Seed),
		closing: make(chan struct{}),
		st:      newState(),
		holds:   map[string]*payment{},
		changed: map[ref]struct{}{},

		compactMin: compactMinBytes,
	}
	s.routes()
	if cfg.StateFile != "" {
		lock, err := lockState(cfg.StateFile)
		if err != nil {
			return s, err
		}
		s.lock = lock
		if err := s.load(); err != nil {
			return s, err
		}
	}
	return s, nil
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// routes is the sandbox's whole surface (docs/sandbox.md). /v1 is its API
// for the adapter (bearer key; faults apply, except to the ledger, which
// tests must be able to trust); /3ds and /checkout are pages for payers.
func (s *Server) routes() {
	m := s.mux
	m.Handle("POST /v1/payments", s.post(s.createPayment))
	m.Handle("GET /v1/payments/{id}", s.get(s.getPayment))
	m.Handle("POST /v1/payments/{id}/capture", s.post(s.capturePayment))
	m.Handle("POST /v1/payments/{id}/cancel", s.post(s.cancelPayment))
	m.Handle("POST /v1/payments/{id}/refunds", s.post(s.refundPayment))
	m.Handle("POST /v1/payments/{id}/confirm", s.post(s.confirmPayment))
	m.Handle("GET /v1/operations/{op}", s.get(s.getOperation))

	m.Handle("POST /v1/verifications", s.post(s.createVerification))
	m.Handle("GET /v1/verifications/{id}", s.get(s.getVerification))
	m.Handle("GET /v1/verifications/by-operation/{op}", s.get(s.getVerificationByOperation))
	m.Handle("POST /v1/verifications/{id}/verify", s.post(s.verify))
	m.Handle("POST /v1/verifications/{id}/release", s.post(s.release))

	m.Handle("POST /v1/payouts", s.post(s.createPayout))
	m.Handle("GET /v1/payouts/{id}", s.get(s.getPayout))
	m.Handle("GET /v1/payouts/by-operation/{op}", s.get(s.getPayoutByOperation))
	m.Handle("POST /v1/payouts/{id}/confirm", s.post(s.confirmPayout))

	m.Handle("POST /v1/hosted-sessions", s.post(s.createSession))
	m.Handle("GET /v1/hosted-sessions/{id}", s.get(s.getSession))
	m.Handle("GET /v1/bins/{bin}", s.get(s.getBIN))
	m.HandleFunc("GET /v1/ledger", s.getLedger)
	m.HandleFunc("POST /v1/ledger", s.plantLedger)

	m.HandleFunc("GET /3ds/{id}", s.challengePage)
	m.HandleFunc("POST /3ds/{id}", s.challengeSubmit)
	m.HandleFunc("GET /checkout/{id}", s.checkoutPage)
	m.HandleFunc("POST /checkout/{id}", s.checkoutSubmit)
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.broken != nil {
		writeAnswer(w, errAnswer(http.StatusServiceUnavailable, "state_unreadable",
			"the sandbox could not read its state file"))
		return
	}
	s.mux.ServeHTTP(w, r)
}

// APIKey returns the shared secret the adapter must present.
func (s *Server) APIKey() string { return s.cfg.APIKey }

// Close releases every withheld answer at once, so that a server can shut
// down without waiting MaxHang, and closes the state file. The server keeps
// answering afterwards, but withholds nothing.
func (s *Server) Close() {
	s.closeOnce.Do(func() { close(s.closing) })
	s.closeJournal()
	s.compactWG.Wait()
	if s.lock != nil {
		s.lock.Close() // releases the flock
	}
}

// lockState takes an exclusive lock on the state file's lock file, so that
// one process at a time runs a sandbox on it. The lock goes with the
// process, also on kill -9.
func lockState(stateFile string) (*os.File, error) {
	f, err := os.OpenFile(stateFile+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("sandbox state %s: %w", stateFile, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("sandbox state %s is in use by another process: give each serve its own --data-dir, "+
				"or share one standalone paygate sandbox-acquirer through --sandbox-url", stateFile)
		}
		return nil, fmt.Errorf("sandbox state %s: %w", stateFile, err)
	}
	return f, nil
}

func (s *Server) now() time.Time { return s.cfg.Now().UTC() }

// authorized checks the bearer key in constant time.
func (s *Server) authorized(r *http.Request) bool {
	got := r.Header.Get("Authorization")
	want := "Bearer " + s.cfg.APIKey
	return subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// base is the public base URL for links in answers.
func (s *Server) base(r *http.Request) string {
	if s.cfg.BaseURL != "" {
		return s.cfg.BaseURL
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// hang withholds an answer until the client gives up, the server closes,
// or MaxHang passes: a timeout as a client sees it, bounded so that no
// goroutine waits for ever.
func (s *Server) hang(r *http.Request) {
	t := time.NewTimer(s.cfg.MaxHang)
	defer t.Stop()
	select {
	case <-r.Context().Done():
	case <-s.closing:
	case <-t.C:
	}
}

// pause adds latency, cut short when the client gives up; it reports
// whether the client is still there.
func (s *Server) pause(r *http.Request, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-r.Context().Done():
		return false
	case <-s.closing:
	case <-t.C:
	}
	return true
}
