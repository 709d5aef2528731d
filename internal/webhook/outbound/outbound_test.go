package outbound

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/webhook"
)

// resolver answers from a table, as a DNS server under an attacker's
// control might.
type resolver map[string]string

func (r resolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	ip, ok := r[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return []netip.Addr{netip.MustParseAddr(ip)}, nil
}

func message(url string) webhook.Message {
	return webhook.Message{URL: url, Body: []byte(`{"id":"evt"}`), Header: map[string]string{"webhook-id": "evt"}}
}

func TestSend(t *testing.T) {
	ctx := context.Background()
	var hits atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		body, _ := io.ReadAll(r.Body)
		require.Equal(t, `{"id":"evt"}`, string(body))
		require.Equal(t, "application/json", r.Header.Get("Content-Type"))
		require.Equal(t, "Paygate-Webhooks/1", r.Header.Get("User-Agent"))
		require.Equal(t, "evt", r.Header.Get("webhook-id"))
		require.Empty(t, r.Header.Get("Cookie"), "no cookie jar")
		http.SetCookie(w, &http.Cookie{Name: "session", Value: "x"})
		w.WriteHeader(http.StatusAccepted)
		// 600 bytes with a NUL and a rune cut at byte 500.
		_, _ = io.WriteString(w, "\x00"+strings.Repeat("a", 498)+"é"+strings.Repeat("b", 99))
	})
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/ok", http.StatusFound)
	})
	mux.HandleFunc("/busy", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "120")
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	mux.HandleFunc("/busy-date", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", time.Now().Add(time.Hour).UTC().Format(http.TimeFormat))
		w.WriteHeader(http.StatusTooManyRequests)
	})
	release := make(chan struct{})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		select { // answers only when the client gives up or the test ends
		case <-r.Context().Done():
		case <-release:
		}
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	defer close(release)
	sandbox := New(Config{Timeout: 300 * time.Millisecond, AllowPrivate: true})

	t.Run("2xx", func(t *testing.T) {
		for range 2 {
			a := sandbox.Send(ctx, message(srv.URL+"/ok"))
			require.True(t, a.Success())
			require.Equal(t, http.StatusAccepted, a.StatusCode)
			require.Empty(t, a.Error)
			require.Equal(t, strings.Repeat("a", 498), a.Body, "at most 500 bytes, valid UTF-8, no NUL")
			require.Positive(t, a.Latency)
		}
	})
	t.Run("redirects are answers, not followed", func(t *testing.T) {
		before := hits.Load()
		a := sandbox.Send(ctx, message(srv.URL+"/redirect"))
		require.Equal(t, http.StatusFound, a.StatusCode)
		require.False(t, a.Success())
		require.Equal(t, before, hits.Load())
	})
	t.Run("Retry-After", func(t *testing.T) {
		a := sandbox.Send(ctx, message(srv.URL+"/busy"))
		require.Equal(t, 2*time.Minute, a.RetryAfter)
		a = sandbox.Send(ctx, message(srv.URL+"/busy-date"))
		require.InDelta(t, float64(time.Hour), float64(a.RetryAfter), float64(5*time.Second))
	})
	t.Run("too slow is a timeout", func(t *testing.T) {
		a := sandbox.Send(ctx, message(srv.URL+"/slow"))
		require.Equal(t, 0, a.StatusCode)
		require.Equal(t, webhook.ErrTimeout, a.Error)
		require.False(t, a.Success())
	})
	t.Run("connection refused", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		addr := ln.Addr().String()
		ln.Close()
		a := sandbox.Send(ctx, message("http://"+addr+"/"))
		require.Equal(t, webhook.ErrConnection, a.Error)
	})
	t.Run("invalid URL", func(t *testing.T) {
		require.Equal(t, webhook.ErrInvalidURL, sandbox.Send(ctx, message("ftp://x/")).Error)
		require.Equal(t, webhook.ErrInvalidURL, sandbox.Send(ctx, message("::")).Error)
	})

	t.Run("production refuses private destinations", func(t *testing.T) {
		_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
		prod := New(Config{Timeout: time.Second, Resolver: resolver{
			"rebind.example": "127.0.0.1", "metadata.example": "169.254.169.254", "public.example": "93.184.216.34",
		}})
		before := hits.Load()
		for _, u := range []string{
			srv.URL + "/ok",                                // a literal loopback address
			"http://rebind.example:" + port + "/ok",        // a name the DNS points at loopback
			"http://[::ffff:127.0.0.1]:" + port + "/ok",    // IPv4 in IPv6 clothing
			"http://metadata.example/latest/meta-data",     // the cloud's metadata service
			"http://localhost:" + port + "/ok",             // refused by name, never looked up
			"http://0.0.0.0:" + port + "/ok",               // unspecified
			"http://[fd00::1]:" + port + "/ok",             // ULA
			"http://10.255.255.1:" + port + "/ok",          // RFC 1918
			"http://224.0.0.1:" + port + "/ok",             // multicast
			"http://100.100.100.200:" + port + "/metadata", // shared address space
		} {
			a := prod.Send(ctx, message(u))
			require.Zero(t, a.StatusCode, u)
			require.Equal(t, webhook.ErrRefusedDestination, a.Error, u)
		}
		require.Equal(t, before, hits.Load(), "nothing reached the receiver")
	})
}

func TestControl(t *testing.T) {
	require.Error(t, control("tcp4", "127.0.0.1:443", nil))
	require.Error(t, control("tcp6", "[::1]:443", nil))
	require.Error(t, control("tcp4", "192.168.0.10:80", nil))
	require.NoError(t, control("tcp4", "93.184.216.34:443", nil))
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for v, want := range map[string]time.Duration{
		"": 0, "0": 0, "-5": 0, "abc": 0, "30": 30 * time.Second, "999999999": webhook.MaxRetryAfter,
		now.Add(-time.Hour).Format(http.TimeFormat):       0,
		now.Add(90 * time.Second).Format(http.TimeFormat): 90 * time.Second,
	} {
		require.Equal(t, want, retryAfter(v, now), v)
	}
}
