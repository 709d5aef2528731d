package webhook

import (
	"context"
	"errors"
	"fmt"
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

// ErrForbiddenDestination is a destination production does not send to
// (docs/webhooks.md, "URL rules"): a host that is, resolves to, or is
// written to hide a non-public address.
var ErrForbiddenDestination = errors.New("webhook destination is not a public address")

// errOddHost is a host that is neither a name nor an IP address written
// the one way production takes: 127.1, 0x7f000001, 2130706433,
// 0177.0.0.1, 0, a zone, a non-ASCII host.
var errOddHost = fmt.Errorf("%w: the host is not a name nor a plainly written address", ErrForbiddenDestination)

// refused are ranges outside the ones netip classifies that are never a
// merchant's public endpoint either. IPv4: "this network", the shared
// address space of carrier-grade NAT (where some clouds keep their
// metadata service), IETF protocol assignments, the three documentation
// networks, the 6to4 relay anycast, benchmarking, and the reserved 240/4
// with the broadcast address. IPv6: the transition forms that carry an
// IPv4 address we cannot judge or that are deprecated, refused whole
// rather than judged by the address inside (no public server lives
// there), and the non-global special ranges of the IANA registry.
var refused = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("192.0.2.0/24"),
	netip.MustParsePrefix("192.88.99.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("198.51.100.0/24"),
	netip.MustParsePrefix("203.0.113.0/24"),
	netip.MustParsePrefix("240.0.0.0/4"),

	netip.MustParsePrefix("::/96"),           // IPv4-compatible ::a.b.c.d (deprecated, RFC 4291), :: and ::1 with it
	netip.MustParsePrefix("::ffff:0:0:0/96"), // IPv4-translated (SIIT, RFC 2765)
	netip.MustParsePrefix("64:ff9b::/32"),    // NAT64 outside the well-known /96: local-use 64:ff9b:1::/48 (RFC 8215), an operator's mapping
	netip.MustParsePrefix("100::/64"),        // discard-only (RFC 6666)
	netip.MustParsePrefix("2001::/23"),       // IETF protocol assignments: Teredo 2001::/32, benchmarking, ORCHIDv2 2001:20::/28, ...
	netip.MustParsePrefix("2001:db8::/32"),   // documentation
	netip.MustParsePrefix("2002::/16"),       // 6to4 (deprecated, RFC 7526)
	netip.MustParsePrefix("3fff::/20"),       // documentation (RFC 9637)
	netip.MustParsePrefix("5f00::/16"),       // SRv6 SIDs (RFC 9602)
	netip.MustParsePrefix("fec0::/10"),       // site-local (deprecated, RFC 3879)
}

// nat64 is the well-known NAT64 prefix (RFC 6052). An IPv6-only network
// with DNS64 reaches every IPv4 server through it, so an address in it is
// judged by the IPv4 address in its last 32 bits instead of refused.
var nat64 = netip.MustParsePrefix("64:ff9b::/96")

// Forbidden reports whether production refuses to send webhooks to an
// address: loopback, private (RFC 1918, ULA), link-local, unspecified,
// multicast, the ranges of refused, and any address with a zone. An IPv4
// address written as IPv6 (::ffff:10.0.0.1, or 64:ff9b::a00:1 through
// NAT64) counts as the IPv4 address. The registration check (CheckURL)
// and every connection (outbound) use it, so they cannot drift.
func Forbidden(a netip.Addr) bool {
	if !a.IsValid() || a.Zone() != "" { // a zoned address is scoped to a link, and prefixes never contain it
		return true
	}
	a = a.Unmap()
	if nat64.Contains(a) {
		a = netip.AddrFrom4([4]byte(a.AsSlice()[12:]))
	}
	if a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
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

// hostAddr reads a URL's host (url.URL.Hostname, or the host the HTTP
// client dials) as production does: an IP address, allowed; a name to
// look up (the zero Addr); or refused.
//
// Resolvers (glibc's inet_aton), curl and browsers (the WHATWG URL host
// parser) read a host whose last label is a number as IPv4, in decimal,
// 0x hex or leading-0 octal, in 1 to 4 parts: 127.1, 0x7f000001,
// 2130706433 and 0177.0.0.1 are all 127.0.0.1. Rather than parse those
// forms and hope to agree with every reader, production refuses any host
// whose last label starts with a digit unless it is an IPv4 address in
// plain dotted-decimal form (netip.ParseAddr: four decimal parts, no
// leading zeros). No public name ends so: top-level domains are
// alphabetic. A non-ASCII host is refused too, since IDNA mapping can turn
// it into digits (fullwidth １２７.0.0.1); an international name is
// written in its xn-- form.
func hostAddr(host string) (netip.Addr, error) {
	for i := range len(host) {
		if host[i] >= 0x80 {
			return netip.Addr{}, errOddHost
		}
	}
	h := strings.ToLower(host)
	if strings.ContainsAny(h, ":%") { // only an IPv6 literal has them
		a, err := netip.ParseAddr(h)
		if err != nil || a.Zone() != "" {
			return netip.Addr{}, errOddHost
		}
		if Forbidden(a) {
			return netip.Addr{}, ErrForbiddenDestination
		}
		return a, nil
	}
	name := strings.TrimSuffix(h, ".")
	labels := strings.Split(name, ".")
	if last := labels[len(labels)-1]; last != "" && last[0] >= '0' && last[0] <= '9' {
		a, err := netip.ParseAddr(h) // the trailing dot is refused here too
		if err != nil || !a.Is4() {
			return netip.Addr{}, errOddHost
		}
		if Forbidden(a) {
			return netip.Addr{}, ErrForbiddenDestination
		}
		return a, nil
	}
	for _, l := range labels {
		if l == "" { // "", ".x", "x..y": no name a resolver would look up as written
			return netip.Addr{}, errOddHost
		}
	}
	if name == "localhost" || strings.HasSuffix(name, ".localhost") {
		return netip.Addr{}, ErrForbiddenDestination
	}
	return netip.Addr{}, nil
}

// Addresses returns the addresses production may connect to for a URL's
// host: the address it is, or every address it resolves to. An error
// that wraps ErrForbiddenDestination is a refusal; any other is the
// look-up's. A nil Resolver looks nothing up: a name then has no
// addresses and no error.
func Addresses(ctx context.Context, r Resolver, host string) ([]netip.Addr, error) {
	a, err := hostAddr(host)
	if err != nil {
		return nil, err
	}
	if a.IsValid() {
		return []netip.Addr{a}, nil
	}
	if r == nil {
		return nil, nil
	}
	addrs, err := r.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, err
	}
	for _, a := range addrs {
		if Forbidden(a) {
			return nil, ErrForbiddenDestination
		}
	}
	return addrs, nil
}

// lookupTimeout bounds the look-up of a new endpoint's host.
const lookupTimeout = 2 * time.Second

// CheckURL checks an endpoint URL (400 validation_error on field url).
// The sandbox takes http and https to any host, so that a merchant can
// point it at their laptop. Production takes https only, and refuses a
// host that is, or resolves to, a forbidden address, or that writes an
// address in any form but the plain one (hostAddr); a host that does not
// resolve yet is accepted, because every delivery checks the addresses it
// connects to again, with the same Addresses and Forbidden
// (outbound.Client), which is what stops DNS rebinding.
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
	ctx, cancel := context.WithTimeout(ctx, lookupTimeout)
	defer cancel()
	_, err = Addresses(ctx, r, u.Hostname())
	switch {
	case errors.Is(err, errOddHost):
		return bad("must name its host in ASCII, or write an IPv4 address as four plain decimal numbers and an IPv6 address without a zone, in production")
	case errors.Is(err, ErrForbiddenDestination):
		return bad("must not point to a loopback, private, link-local, multicast or reserved address in production")
	}
	return nil // a look-up that fails is checked again at every delivery
}
