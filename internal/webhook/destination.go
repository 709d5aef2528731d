package webhook

import (
	"context"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/paygate/paygate/internal/fault"
)

// Resolver looks host names up (*net.Resolver is one).
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// refused are ranges outside the ones netip classifies that are never a
// merchant's public endpoint either: "this network", the shared address
// space of carrier-grade NAT (where some clouds keep their metadata
// service) and the reserved 240/4 with the broadcast address.
var refused = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("240.0.0.0/4"),
}

// Forbidden reports whether production refuses to send webhooks to an
// address: loopback, private (RFC 1918, ULA), link-local, unspecified,
// multicast, and the ranges of refused. An IPv4 address written as IPv6
// (::ffff:10.0.0.1) counts as the IPv4 address.
func Forbidden(a netip.Addr) bool {
	a = a.Unmap()
	if !a.IsValid() || a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
		a.IsInterfaceLocalMulticast() || a.IsMulticast() || a.IsUnspecified() {
		return true
	}
	for _, p := range refused {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// lookupTimeout bounds the look-up of a new endpoint's host.
const lookupTimeout = 2 * time.Second

// CheckURL checks an endpoint URL (400 validation_error on field url).
// The sandbox takes http and https to any host, so that a merchant can
// point it at their laptop. Production takes https only, and refuses a
// host that is, or resolves to, a forbidden address; a host that does not
// resolve yet is accepted, because every delivery checks the addresses it
// connects to again (outbound.Client), which is what stops DNS rebinding.
func CheckURL(ctx context.Context, raw string, production bool, r Resolver) error {
	bad := func(msg string) error { return fault.OnField(fault.ValidationError, "url", msg) }
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Host == "" || u.Opaque != "" {
		return bad("must be an absolute http or https URL")
	}
	if u.User != nil {
		return bad("must not carry credentials; verify the webhook signature instead")
	}
	if u.Fragment != "" || strings.HasSuffix(raw, "#") {
		return bad("must not have a fragment")
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && !production:
	case u.Scheme == "http":
		return bad("must be an https URL in production")
	default:
		return bad("must be an absolute http or https URL")
	}
	if !production {
		return nil
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	refusedHost := bad("must not point to a loopback, private, link-local or multicast address in production")
	if a, err := netip.ParseAddr(host); err == nil {
		if Forbidden(a) {
			return refusedHost
		}
		return nil
	}
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return refusedHost
	}
	if r == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, lookupTimeout)
	defer cancel()
	addrs, err := r.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil // checked again at every delivery
	}
	for _, a := range addrs {
		if Forbidden(a) {
			return refusedHost
		}
	}
	return nil
}
