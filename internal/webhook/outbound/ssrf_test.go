package outbound

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/webhook"
)

// askedResolver answers from a table and records every host it is asked.
type askedResolver struct {
	resolver
	mu    sync.Mutex
	asked []string
}

func (r *askedResolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	r.asked = append(r.asked, host)
	r.mu.Unlock()
	return r.resolver.LookupNetIP(ctx, network, host)
}

// TestDialRefusesOddForms: at delivery, production refuses a loopback
// receiver reached through every odd form of its address, written in the
// URL or answered by the DNS, and asks the DNS nothing for a host that
// writes an address oddly (docs/webhooks.md, "URL rules").
func TestDialRefusesOddForms(t *testing.T) {
	ctx := context.Background()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
	}))
	defer srv.Close()
	_, port, err := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	require.NoError(t, err)
	r := &askedResolver{resolver: resolver{
		"nat64.example":      "64:ff9b::7f00:1",
		"compat.example":     "::7f00:1",
		"translated.example": "::ffff:0:7f00:1",
		"sixtofour.example":  "2002:7f00:1::1",
		"teredo.example":     "2001:0:4136:e378:8000:63bf:80ff:fffe",
		"doc.example":        "192.0.2.10",
		"bench.example":      "198.18.0.1",
	}}
	prod := New(Config{Timeout: time.Second, Resolver: r})
	for _, host := range []string{"127.1", "127.0.1", "0x7f000001", "0X7F000001", "0x7f.1", "2130706433",
		"017700000001", "0177.0.0.1", "127.000.000.001", "0", "0.0", "127.0.0.1.", "２１３０７０６４３３",
		"[64:ff9b::7f00:1]", "[::127.0.0.1]", "[::ffff:0:127.0.0.1]", "[2002:7f00:1::]", "[fe80::1%25lo]"} {
		a := prod.Send(ctx, message("http://"+host+":"+port+"/"))
		require.Zero(t, a.StatusCode, host)
		require.Equal(t, webhook.ErrRefusedDestination, a.Error, host)
	}
	require.Empty(t, r.asked, "an address written oddly is never looked up")
	for name := range r.resolver {
		a := prod.Send(ctx, message("http://"+name+":"+port+"/"))
		require.Equal(t, webhook.ErrRefusedDestination, a.Error, name)
	}
	require.Len(t, r.asked, len(r.resolver))
	require.Zero(t, hits.Load(), "nothing reached the receiver")

	t.Run("the sandbox still reaches the loopback receiver", func(t *testing.T) {
		sandbox := New(Config{Timeout: time.Second, AllowPrivate: true})
		a := sandbox.Send(ctx, message(srv.URL+"/"))
		require.True(t, a.Success(), a.Error)
		require.Equal(t, int32(1), hits.Load())
	})
}

// TestControlEmbedded: the socket about to connect is judged by the same
// webhook.Forbidden, IPv4 inside IPv6 included.
func TestControlEmbedded(t *testing.T) {
	for _, addr := range []string{"[64:ff9b::7f00:1]:443", "[64:ff9b::a9fe:a9fe]:80", "[::7f00:1]:443",
		"[::ffff:127.0.0.1]:443", "[2002:7f00:1::]:443", "[2001:0:4136:e378:8000:63bf:80ff:fffe]:443",
		"[2001:db8::1]:443", "[fe80::1%lo]:443", "192.0.2.1:443", "198.18.0.1:443", "203.0.113.9:443"} {
		require.ErrorIs(t, control("tcp", addr, nil), webhook.ErrForbiddenDestination, addr)
	}
	for _, addr := range []string{"93.184.215.14:443", "[2606:4700::6810:85e5]:443", "[64:ff9b::5db8:d70e]:443"} {
		require.NoError(t, control("tcp", addr, nil), addr)
	}
}
