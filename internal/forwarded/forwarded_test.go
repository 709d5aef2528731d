package forwarded_test

import (
	"crypto/tls"
	"net/http/httptest"
	"net/netip"
	"testing"

	"github.com/paygate/paygate/internal/forwarded"
)

func TestClientIP(t *testing.T) {
	proxies := forwarded.Proxies{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("fd00::/8")}
	for _, tc := range []struct {
		name, peer, xff, want string
		proxies               forwarded.Proxies
	}{
		{"no proxies: the peer, whatever the header says", "203.0.113.7:5000", "198.51.100.1", "203.0.113.7", nil},
		{"an untrusted peer's header is ignored", "203.0.113.7:5000", "198.51.100.1", "203.0.113.7", proxies},
		{"a trusted peer: the last hop", "10.1.2.3:5000", "198.51.100.1", "198.51.100.1", proxies},
		{"read from the right, past trusted hops", "10.1.2.3:5000", "192.0.2.9, 198.51.100.1, 10.9.9.9", "198.51.100.1", proxies},
		{"a forged hop on the left is not read", "10.1.2.3:5000", "1.1.1.1, 198.51.100.1", "198.51.100.1", proxies},
		{"an unreadable hop stops the walk: the peer", "10.1.2.3:5000", "198.51.100.1, junk", "10.1.2.3", proxies},
		{"only trusted hops: the peer", "10.1.2.3:5000", "10.4.4.4", "10.1.2.3", proxies},
		{"IPv4 in IPv6 is unmapped", "[::ffff:203.0.113.7]:5000", "", "203.0.113.7", proxies},
		{"a trusted IPv6 proxy", "[fd00::1]:5000", "2001:db8::5", "2001:db8::5", proxies},
		{"a peer without a port", "203.0.113.7", "", "203.0.113.7", proxies},
		{"no address at all", "pipe", "", "", proxies},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/", nil)
			r.RemoteAddr = tc.peer
			if tc.xff != "" {
				r.Header.Set("X-Forwarded-For", tc.xff)
			}
			if got := tc.proxies.ClientIP(r); got != tc.want {
				t.Fatalf("ClientIP = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestHTTPS(t *testing.T) {
	proxies := forwarded.Proxies{netip.MustParsePrefix("10.0.0.0/8")}
	for _, tc := range []struct {
		name, peer, proto string
		want              bool
	}{
		{"a trusted proxy says https", "10.1.2.3:5000", "https", true},
		{"case and spaces do not matter", "10.1.2.3:5000", " HTTPS ", true},
		{"only the proxy's own last entry counts", "10.1.2.3:5000", "https, http", false},
		{"an entry the payer wrote before it does not", "10.1.2.3:5000", "http, https", true},
		{"an untrusted peer is not believed", "203.0.113.7:5000", "https", false},
		{"a trusted proxy saying nothing", "10.1.2.3:5000", "", false},
		{"a peer without a port is no proxy", "10.1.2.3", "https", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/", nil)
			r.RemoteAddr = tc.peer
			if tc.proto != "" {
				r.Header.Set("X-Forwarded-Proto", tc.proto)
			}
			if got := proxies.HTTPS(r); got != tc.want {
				t.Fatalf("HTTPS = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestSecure(t *testing.T) {
	proxies := forwarded.Proxies{netip.MustParsePrefix("10.0.0.0/8")}
	for _, tc := range []struct {
		name, publicURL, host, peer, proto string
		tls, want                          bool
	}{
		{"over TLS", "http://pay.example", "pay.example", "203.0.113.7:5000", "", true, true},
		{"at the https public URL's host", "https://pay.example", "PAY.example", "203.0.113.7:5000", "", false, true},
		{"another host on plain http", "https://pay.example", "127.0.0.1:8080", "203.0.113.7:5000", "", false, false},
		{"a trusted proxy says https", "https://pay.example", "internal:8080", "10.1.2.3:5000", "https", false, true},
		{"an untrusted peer saying https", "https://pay.example", "internal:8080", "203.0.113.7:5000", "https", false, false},
		{"an http public URL", "http://pay.example", "pay.example", "10.1.2.3:5000", "https", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/", nil)
			r.Host, r.RemoteAddr = tc.host, tc.peer
			if tc.proto != "" {
				r.Header.Set("X-Forwarded-Proto", tc.proto)
			}
			if tc.tls {
				r.TLS = &tls.ConnectionState{}
			}
			if got := proxies.Secure(r, tc.publicURL); got != tc.want {
				t.Fatalf("Secure = %v, want %v", got, tc.want)
			}
		})
	}
}
