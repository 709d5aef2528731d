package webhook

import (
	"context"
	"errors"
	"net/netip"
	"net/url"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/fault"
)

// countingResolver answers from a table and records what it was asked.
type countingResolver struct {
	fakeResolver
	mu    sync.Mutex
	asked []string
}

func (c *countingResolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	c.mu.Lock()
	c.asked = append(c.asked, host)
	c.mu.Unlock()
	return c.fakeResolver.LookupNetIP(ctx, network, host)
}

// TestForbiddenEmbedded: IPv6 forms that carry an IPv4 address, and the
// special ranges netip does not classify (docs/webhooks.md, "URL rules").
func TestForbiddenEmbedded(t *testing.T) {
	for addr, want := range map[string]bool{
		// NAT64 well-known prefix: judged by the IPv4 address inside.
		"64:ff9b::7f00:1": true, "64:ff9b::127.0.0.1": true, "64:ff9b::a9fe:a9fe": true, "64:ff9b::a00:1": true,
		"64:ff9b::6440:1": true, "64:ff9b::5db8:d70e": false, "64:ff9b::808:808": false,
		// Refused whole, whatever they carry.
		"64:ff9b:1::7f00:1": true, "64:ff9b:1::5db8:d70e": true, // local-use NAT64
		"::7f00:1": true, "::a9fe:a9fe": true, "::5db8:d70e": true, // IPv4-compatible
		"::ffff:0:7f00:1": true, "::ffff:0:5db8:d70e": true, // IPv4-translated
		"2002:7f00:1::": true, "2002:a9fe:a9fe::1": true, "2002:5db8:d70e::1": true, // 6to4
		"2001:0:4136:e378:8000:63bf:80ff:fffe": true, "2001:0:5db8:d70e::1": true, // Teredo: client 127.0.0.1, any
		"2001:2::1": true, "2001:20::1": true, // benchmarking, ORCHIDv2
		"2001:db8::1": true, "3fff::1": true, // documentation
		"100::1": true, "fec0::1": true, "5f00::1": true,
		"fe80::1%eth0": true, "2606:4700::6810:85e5%eth0": true, // zones
		// IPv4-mapped: the IPv4 address.
		"::ffff:7f00:1": true, "::ffff:5db8:d70e": false,
		// IPv4 special ranges.
		"192.0.0.8": true, "192.0.2.1": true, "192.88.99.1": true, "198.18.0.1": true, "198.19.255.255": true,
		"198.51.100.7": true, "203.0.113.9": true, "240.0.0.1": true,
		"198.20.0.1": false, "192.0.3.1": false, "203.0.114.1": false, "93.184.215.14": false,
		"2606:4700::6810:85e5": false, "2a00:1450:4001:80b::200e": false, "2001:4860:4860::8888": false,
	} {
		require.Equal(t, want, Forbidden(netip.MustParseAddr(addr)), addr)
	}
	require.True(t, Forbidden(netip.Addr{}), "the zero address")
}

// TestCheckURLOddForms: every way of writing a forbidden address that
// resolvers, curl or browsers read as one is refused in production at
// registration, without a look-up; the sandbox takes them all.
func TestCheckURLOddForms(t *testing.T) {
	ctx := context.Background()
	r := &countingResolver{fakeResolver: fakeResolver{
		"public.example":       {"93.184.215.14", "2606:4700::6810:85e5"},
		"example.com":          {"93.184.215.14"},
		"1e100.net":            {"142.250.185.110"},
		"nat64-public.example": {"64:ff9b::5db8:d70e"},
		"nat64.example":        {"64:ff9b::7f00:1"},
		"nat64-meta.example":   {"64:ff9b::a9fe:a9fe"},
		"mapped.example":       {"::ffff:127.0.0.1"},
		"compat.example":       {"::7f00:1"},
		"translated.example":   {"::ffff:0:7f00:1"},
		"sixtofour.example":    {"2002:7f00:1::1"},
		"teredo.example":       {"2001:0:4136:e378:8000:63bf:80ff:fffe"},
		"doc.example":          {"93.184.215.14", "192.0.2.10"},
		"127.0.0.1.nip.io":     {"127.0.0.1"},
	}}
	odd := []string{ // written oddly: refused without a look-up
		"https://127.1/", "https://127.0.1/", "https://0x7f000001/", "https://0X7F000001/", "https://0x7f.1/",
		"https://0x7f.0.0.1/", "https://2130706433/", "https://017700000001/", "https://0177.0.0.1/",
		"https://0177.1/", "https://127.000.000.001/", "https://127.0.0.01/", "https://0/", "https://0.0/",
		"https://2852039166/", "https://0xa9fea9fe/", "https://0251.0376.0251.0376/", "https://169.254.43518/",
		"https://1572395790/", // 93.184.215.14, public but written oddly
		"https://127.0.0.1./", "https://127.0.0.1../", "https://93.184.215.14./", "https://1.2.3.4.5/",
		"https://256.0.0.1/", "https://example.0x7f/", "https://example.123/", "https://example.0/",
		"https://１２７.0.0.1/", "https://127。0。0。1/", "https://ｌｏｃａｌｈｏｓｔ/",
		"https://[fe80::1%25eth0]/", "https://[2606:4700::6810:85e5%25en0]/",
		"https://.example.com/", "https://a..example.com/",
	}
	forbidden := []string{ // a forbidden address, written plainly or behind a name
		"https://[::127.0.0.1]/", "https://[::7f00:1]/", "https://[::ffff:127.0.0.1]/", "https://[::ffff:7f00:1]/",
		"https://[::ffff:0:127.0.0.1]/", "https://[64:ff9b::127.0.0.1]/", "https://[64:ff9b::7f00:1]/",
		"https://[64:ff9b::a9fe:a9fe]/", "https://[64:ff9b:1::7f00:1]/", "https://[2002:7f00:1::]/",
		"https://[2002:a9fe:a9fe::1]/", "https://[2001:0:4136:e378:8000:63bf:80ff:fffe]/",
		"https://[2001:db8::1]/", "https://[100::1]/", "https://[2001:20::1]/", "https://[fec0::1]/",
		"https://[::]/", "https://0.0.0.0/", "https://192.0.2.1/", "https://198.51.100.7/",
		"https://203.0.113.9/", "https://198.18.0.1/", "https://198.19.255.255/", "https://192.0.0.8/",
		"https://192.88.99.1/", "https://LOCALHOST./", "https://Api.LocalHost/",
		"https://nat64.example/", "https://nat64-meta.example/", "https://mapped.example/",
		"https://compat.example/", "https://translated.example/", "https://sixtofour.example/",
		"https://teredo.example/", "https://doc.example/", "https://127.0.0.1.nip.io/",
	}
	accepted := []string{
		"https://93.184.215.14/", "https://93.184.215.14:8443/h?x=1", "https://[2606:4700::6810:85e5]/",
		"https://[2606:4700::6810:85e5]:8443/hooks", "https://[::ffff:93.184.215.14]/",
		"https://[64:ff9b::5db8:d70e]/", "https://example.com/", "https://public.example/hooks",
		"https://1e100.net/", "https://nat64-public.example/", "https://xn--bcher-kva.example/",
		"https://unresolvable.example/", // checked again at delivery
	}
	for _, u := range odd {
		r.asked = nil
		requireRefused(t, CheckURL(ctx, u, true, r), u, "four plain decimal numbers")
		require.Empty(t, r.asked, "%s: an odd host is never looked up", u)
	}
	for _, u := range forbidden {
		requireRefused(t, CheckURL(ctx, u, true, r), u, "reserved address")
	}
	for _, u := range accepted {
		require.NoError(t, CheckURL(ctx, u, true, r), u)
	}
	for _, u := range append(append(odd, forbidden...), accepted...) {
		require.NoError(t, CheckURL(ctx, u, false, r), "the sandbox takes any host: %s", u)
	}
}

// requireRefused checks a refusal of url: 400 validation_error on field
// url, with the expected message, never quoting the host.
func requireRefused(t *testing.T, err error, raw, message string) {
	t.Helper()
	f, ok := fault.As(err)
	require.True(t, ok, "%s: %v", raw, err)
	require.Equal(t, fault.ValidationError, f.Code, raw)
	require.Equal(t, "url", f.Field, raw)
	require.Contains(t, f.Message, message, raw)
	u, perr := url.Parse(raw)
	require.NoError(t, perr)
	require.NotContains(t, f.Message, u.Hostname(), "%s: the message never quotes the URL", raw)
}

// TestAddresses: the function both registration and delivery call.
func TestAddresses(t *testing.T) {
	ctx := context.Background()
	r := fakeResolver{"public.example": {"93.184.215.14"}, "inside.example": {"93.184.215.14", "10.0.0.5"}}
	for host, want := range map[string]string{
		"93.184.215.14": "93.184.215.14", "2606:4700::6810:85e5": "2606:4700::6810:85e5",
		"64:ff9b::5db8:d70e": "64:ff9b::5db8:d70e", "public.example": "93.184.215.14",
	} {
		got, err := Addresses(ctx, r, host)
		require.NoError(t, err, host)
		require.Equal(t, []netip.Addr{netip.MustParseAddr(want)}, got, host)
	}
	for _, host := range []string{"127.1", "0x7f000001", "2130706433", "0177.0.0.1", "127.000.000.001", "0",
		"64:ff9b::7f00:1", "::7f00:1", "2002:7f00:1::", "fe80::1%eth0", "inside.example", "localhost"} {
		_, err := Addresses(ctx, r, host)
		require.ErrorIs(t, err, ErrForbiddenDestination, host)
	}
	_, err := Addresses(ctx, r, "unknown.example")
	require.Error(t, err)
	require.False(t, errors.Is(err, ErrForbiddenDestination), "a failed look-up is not a refusal")
	got, err := Addresses(ctx, nil, "public.example")
	require.NoError(t, err)
	require.Empty(t, got, "no resolver, no look-up")
}
