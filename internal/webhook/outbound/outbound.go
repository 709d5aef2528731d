// Package outbound sends webhooks over HTTP to merchants' endpoints: no
// redirects followed, no cookies, no proxy, a hard timeout, and in
// production no connection to a loopback, private, link-local or multicast
// address, whatever the DNS says at the moment of the delivery.
package outbound

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/paygate/paygate/internal/webhook"
)

// DefaultTimeout is how long an endpoint has to answer
// (docs/design/decisions.md section 6: any 2xx within 15 s is success).
const DefaultTimeout = 15 * time.Second

// maxExcerpt is how much of an answer's body is kept with the attempt.
const maxExcerpt = 500

// UserAgent is sent with every delivery.
const UserAgent = "Paygate-Webhooks/1"

// Config tunes a Client.
type Config struct {
	// Timeout bounds a delivery from the dial to the status line; 0 means
	// DefaultTimeout.
	Timeout time.Duration
	// AllowPrivate lets deliveries reach any address: the sandbox, where a
	// merchant's endpoint is often on their own machine.
	AllowPrivate bool
	// Resolver looks hosts up; nil means net.DefaultResolver.
	Resolver webhook.Resolver
}

// Client sends webhook messages; it is safe for concurrent use.
type Client struct {
	http         *http.Client
	allowPrivate bool
	resolver     webhook.Resolver
	dialer       *net.Dialer
}

// New returns a Client.
func New(cfg Config) *Client {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Resolver == nil {
		cfg.Resolver = net.DefaultResolver
	}
	c := &Client{allowPrivate: cfg.AllowPrivate, resolver: cfg.Resolver}
	c.dialer = &net.Dialer{Timeout: cfg.Timeout, KeepAlive: 30 * time.Second}
	if !cfg.AllowPrivate {
		c.dialer.Control = control
	}
	transport := &http.Transport{
		Proxy:               nil, // a proxy would connect on our behalf, past the address check
		DialContext:         c.dial,
		ForceAttemptHTTP2:   true,
		TLSHandshakeTimeout: cfg.Timeout,
		MaxIdleConnsPerHost: 8,
		IdleConnTimeout:     60 * time.Second,
	}
	c.http = &http.Client{
		Transport: transport,
		Timeout:   cfg.Timeout,
		// A redirect is an answer like any other (a failure), never followed:
		// the merchant registered this URL, not the one it points to.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Jar:           nil,
	}
	return c
}

// Send POSTs the message and reports what came of it. It never returns an
// error: a failure is an Answer with Error set.
func (c *Client) Send(ctx context.Context, m webhook.Message) webhook.Answer {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, m.URL, bytes.NewReader(m.Body))
	if err != nil || (req.URL.Scheme != "http" && req.URL.Scheme != "https") {
		return webhook.Answer{Error: webhook.ErrInvalidURL}
	}
	for k, v := range m.Header {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", UserAgent)
	start := time.Now()
	resp, err := c.http.Do(req)
	latency := time.Since(start)
	if err != nil {
		return webhook.Answer{Latency: latency, Error: classify(err)}
	}
	defer resp.Body.Close()
	a := webhook.Answer{StatusCode: resp.StatusCode, Latency: latency}
	head, _ := io.ReadAll(io.LimitReader(resp.Body, maxExcerpt))
	a.Body = excerpt(head)
	// Read a little more so the connection can be reused; the answer is
	// already decided by its status.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if !a.Success() {
		a.RetryAfter = retryAfter(resp.Header.Get("Retry-After"), time.Now())
	}
	return a
}

// excerpt makes the first bytes of an answer storable: valid UTF-8 (a cut
// rune dropped) and no NUL, which PostgreSQL's TEXT refuses.
func excerpt(b []byte) string {
	s := strings.ToValidUTF8(string(b), "")
	return strings.ReplaceAll(s, "\x00", "")
}

// retryAfter reads a Retry-After header: seconds, or an HTTP date.
func retryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n <= 0 {
			return 0
		}
		return time.Duration(min(n, int64(webhook.MaxRetryAfter/time.Second))) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return min(t.Sub(now), webhook.MaxRetryAfter)
	}
	return 0
}

// dial connects to one of the addresses the host resolves to, after
// webhook.Addresses has checked the host and every one of them: the
// address dialled is the address checked, so a DNS answer that changes
// between the check and the connection (rebinding) cannot lead anywhere
// else. Registration (webhook.CheckURL) checks with the same function.
func (c *Client) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	if c.allowPrivate {
		return c.dialer.DialContext(ctx, network, addr)
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	ips, err := webhook.Addresses(ctx, c.resolver, host)
	if err != nil {
		return nil, err
	}
	if len(ips) == 0 {
		return nil, &net.DNSError{Err: "no addresses", Name: host, IsNotFound: true}
	}
	var errs []error
	for _, ip := range ips {
		conn, err := c.dialer.DialContext(ctx, network, net.JoinHostPort(ip.Unmap().String(), port))
		if err == nil {
			return conn, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, errors.Join(errs...)
}

// control is the last check, on the socket about to connect, with the
// same webhook.Forbidden.
func control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return err
	}
	if webhook.Forbidden(ap.Addr()) {
		return webhook.ErrForbiddenDestination
	}
	return nil
}

// classify names the kind of a failure without an answer.
func classify(err error) string {
	var (
		dnsErr  *net.DNSError
		netErr  net.Error
		certErr *tls.CertificateVerificationError
		unknown x509.UnknownAuthorityError
		host    x509.HostnameError
		invalid x509.CertificateInvalidError
		record  tls.RecordHeaderError
	)
	switch {
	case errors.Is(err, webhook.ErrForbiddenDestination):
		return webhook.ErrRefusedDestination
	case errors.As(err, &dnsErr):
		return webhook.ErrDNS
	case errors.As(err, &certErr), errors.As(err, &unknown), errors.As(err, &host), errors.As(err, &invalid),
		errors.As(err, &record):
		return webhook.ErrTLS
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return webhook.ErrTimeout
	}
	return webhook.ErrConnection
}
