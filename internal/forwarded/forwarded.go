// Package forwarded reads what a trusted reverse proxy says about the
// request it forwards (X-Forwarded-For, X-Forwarded-Proto). The client API
// and the checkout pages both need it: forwarded headers count only when
// the socket peer is one of the configured trusted proxies (client API,
// "Payer IP address"; docs/checkout.md, Security).
package forwarded

import (
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
)

// Proxies are the address ranges of the trusted proxies
// (serve --trusted-proxy). None: no forwarded header is believed.
type Proxies []netip.Prefix

// ClientIP is the payer's address: the socket peer, or the first address of
// X-Forwarded-For not itself a trusted proxy when the peer is one
// (client API: forwarded headers only from trusted proxies).
func (ps Proxies) ClientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	peer, err := netip.ParseAddr(host)
	if err != nil {
		return ""
	}
	if !ps.trusted(peer) {
		return peer.Unmap().String()
	}
	hops := strings.Split(r.Header.Get("X-Forwarded-For"), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			break
		}
		if !ps.trusted(a) {
			return a.Unmap().String()
		}
	}
	return peer.Unmap().String()
}

// HTTPS reports whether a trusted proxy says the request reached it over
// https: the socket peer is a trusted proxy and the last X-Forwarded-Proto
// entry, the proxy's own, is https. Entries before it came with the request
// and the payer can write them (as X-Forwarded-For is read from the right in
// ClientIP).
func (ps Proxies) HTTPS(r *http.Request) bool {
	protos := strings.Split(r.Header.Get("X-Forwarded-Proto"), ",")
	return strings.EqualFold(strings.TrimSpace(protos[len(protos)-1]), "https") && ps.fromProxy(r)
}

// Secure reports whether the browser reached Paygate over https, so that
// its cookies are Secure and __Host- (docs/checkout.md, "Security"): the
// request came over TLS, or the public URL is https and the request names
// its host or a trusted proxy says https.
func (ps Proxies) Secure(r *http.Request, publicURL string) bool {
	if r.TLS != nil {
		return true
	}
	u, err := url.Parse(publicURL)
	if err != nil || u.Scheme != "https" {
		return false
	}
	return strings.EqualFold(u.Host, r.Host) || ps.HTTPS(r)
}

// fromProxy reports whether the request's socket peer is a trusted proxy.
func (ps Proxies) fromProxy(r *http.Request) bool {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	peer, err := netip.ParseAddr(host)
	return err == nil && ps.trusted(peer)
}

func (ps Proxies) trusted(a netip.Addr) bool {
	for _, p := range ps {
		if p.Contains(a.Unmap()) {
			return true
		}
	}
	return false
}
