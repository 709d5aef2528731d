// Package circuit keeps a circuit per acquirer account in each process
// (docs/design/decisions.md section 17): after Threshold consecutive calls
// that could not reach the acquirer or got a 5xx answer, the circuit opens
// and calls fail at once, without being sent, for Cooldown; then one call
// is let through as a probe, whose outcome closes the circuit or opens it
// again. A new payment's routing skips an account whose circuit is open.
//
// It sits in the accounts' HTTP clients (Transport), so every adapter is
// covered without knowing of it, and a call refused by an open circuit
// fails as a connection that could not be made: the adapter reads it as
// transient, and nothing was sent.
package circuit

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"sync"
	"time"
)

// The defaults (docs/design/decisions.md section 17).
const (
	Threshold = 5
	Cooldown  = 30 * time.Second
)

// ErrOpen is the cause of a call refused by an open circuit.
var ErrOpen = errors.New("circuit open: the acquirer failed repeatedly; not sent")

// State of a circuit.
type State string

// The states.
const (
	Closed   State = "closed"
	Open     State = "open"
	HalfOpen State = "half_open" // the cooldown is over: one probe may go
)

// Breaker holds the circuits of one process, by account name.
type Breaker struct {
	Threshold int
	Cooldown  time.Duration
	now       func() time.Time
	// OnChange, when set, hears every change of a circuit's state
	// (metrics, the log).
	OnChange func(name string, s State)

	mu       sync.Mutex
	circuits map[string]*circuit
}

type circuit struct {
	failures int
	openedAt time.Time
	open     bool
	probing  bool
}

// New returns a breaker with the defaults and the clock now.
func New(now func() time.Time) *Breaker {
	return &Breaker{Threshold: Threshold, Cooldown: Cooldown, now: now, circuits: map[string]*circuit{}}
}

func (b *Breaker) get(name string) *circuit {
	c, ok := b.circuits[name]
	if !ok {
		c = &circuit{}
		b.circuits[name] = c
	}
	return c
}

func (b *Breaker) state(c *circuit) State {
	switch {
	case !c.open:
		return Closed
	case b.now().Sub(c.openedAt) >= b.Cooldown:
		return HalfOpen
	}
	return Open
}

// State is the circuit of name now.
func (b *Breaker) State(name string) State {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.state(b.get(name))
}

// Available reports whether new payments may be routed to name: its
// circuit is not open (a half-open one takes a probe).
func (b *Breaker) Available(name string) bool { return b.State(name) != Open }

// allow reports whether a call to name may be sent now, and takes the
// probe of a half-open circuit.
func (b *Breaker) allow(name string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	c := b.get(name)
	switch b.state(c) {
	case Closed:
		return true
	case HalfOpen:
		if c.probing {
			return false
		}
		c.probing = true
		return true
	}
	return false
}

// Record counts a call's outcome: failed (unreachable, or a 5xx answer)
// or not. A call that neither failed nor succeeded (a timeout: the
// acquirer may be slow, not down) is not recorded.
func (b *Breaker) Record(name string, failed bool) {
	b.mu.Lock()
	c := b.get(name)
	before := b.state(c)
	if failed {
		c.failures++
		if c.probing || c.failures >= b.Threshold {
			c.open, c.openedAt = true, b.now()
		}
	} else {
		c.failures, c.open = 0, false
	}
	c.probing = false
	after := b.state(c)
	b.mu.Unlock()
	if after != before && b.OnChange != nil {
		b.OnChange(name, after)
	}
}

// Transport is base with the circuit of name around every call.
func (b *Breaker) Transport(name string, base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return &transport{b: b, name: name, base: base}
}

// Client is a copy of client whose calls go through the circuit of name.
func (b *Breaker) Client(name string, client *http.Client) *http.Client {
	c := &http.Client{}
	if client != nil {
		*c = *client
	}
	c.Transport = b.Transport(name, c.Transport)
	return c
}

type transport struct {
	b    *Breaker
	name string
	base http.RoundTripper
}

func (t *transport) RoundTrip(r *http.Request) (*http.Response, error) {
	if !t.b.allow(t.name) {
		if r.Body != nil {
			r.Body.Close()
		}
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: ErrOpen}
	}
	res, err := t.base.RoundTrip(r)
	switch {
	case err != nil && Unreached(err):
		t.b.Record(t.name, true)
	case err != nil:
		t.b.mu.Lock() // neither: the probe, if this was one, may go again
		t.b.get(t.name).probing = false
		t.b.mu.Unlock()
	default:
		t.b.Record(t.name, res.StatusCode >= 500)
	}
	return res, err
}

// Unreached reports a failure before the acquirer could have received the
// request: a refused connection, an unknown name, a TLS handshake that
// failed. Adapters read such a failure as a call that did nothing
// (provider.Error.Unsent).
func Unreached(err error) bool {
	var (
		dns   *net.DNSError
		op    *net.OpError
		rec   tls.RecordHeaderError
		cert  *tls.CertificateVerificationError
		unk   x509.UnknownAuthorityError
		host  x509.HostnameError
		inval x509.CertificateInvalidError
	)
	switch {
	case errors.As(err, &dns), errors.As(err, &rec), errors.As(err, &cert), errors.As(err, &unk),
		errors.As(err, &host), errors.As(err, &inval):
		return true
	case errors.As(err, &op) && op.Op == "dial":
		return true
	}
	return false
}
