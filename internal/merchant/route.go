package merchant

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

	"github.com/paygate/paygate/internal/card"
	"github.com/paygate/paygate/internal/country"
	"github.com/paygate/paygate/internal/fault"
)

// Route is a channel's place in one key's routing and the conditions under
// which it takes a payment (docs/design/decisions.md section 17): set by
// `paygate channels assign`.
type Route struct {
	// Position orders a key's channels: lower is tried first.
	Position int
	// Weight splits the payments among channels of the same position in
	// proportion (1 when unset).
	Weight int
	// Schemes and CardCountries (ISO 3166-1 alpha-2, from the BIN base)
	// admit only cards of those; empty admits any. They apply where the
	// card is known when the channel is chosen (direct payments).
	Schemes       []string
	CardCountries []string
	// MinAmount and MaxAmount bound the amount in minor units; nil: no
	// bound.
	MinAmount, MaxAmount *int64
}

// Payment is what a route's conditions look at.
type Payment struct {
	AmountMinor int64
	// Scheme and Country of the card; empty when no card is known yet (a
	// session), and then the card conditions do not apply.
	Scheme, Country string
	// CardKnown: the card is known, so the card conditions apply.
	CardKnown bool
}

// Admits reports whether the route's conditions take p.
func (r Route) Admits(p Payment) bool {
	if r.MinAmount != nil && p.AmountMinor < *r.MinAmount || r.MaxAmount != nil && p.AmountMinor > *r.MaxAmount {
		return false
	}
	if !p.CardKnown {
		return true
	}
	if len(r.Schemes) > 0 && !slices.Contains(r.Schemes, p.Scheme) {
		return false
	}
	if len(r.CardCountries) > 0 && !slices.Contains(r.CardCountries, p.Country) {
		return false
	}
	return true
}

// Rules describes the route's conditions for people: "" without any.
func (r Route) Rules() string {
	var out []string
	if r.Weight > 1 {
		out = append(out, fmt.Sprintf("weight %d", r.Weight))
	}
	if len(r.Schemes) > 0 {
		out = append(out, "schemes "+strings.Join(r.Schemes, ","))
	}
	if len(r.CardCountries) > 0 {
		out = append(out, "card countries "+strings.Join(r.CardCountries, ","))
	}
	if r.MinAmount != nil {
		out = append(out, fmt.Sprintf("amount ≥ %d", *r.MinAmount))
	}
	if r.MaxAmount != nil {
		out = append(out, fmt.Sprintf("amount ≤ %d", *r.MaxAmount))
	}
	return strings.Join(out, "; ")
}

// schemes are the scheme names a route may name.
var schemes = []string{card.Visa, card.Mastercard, card.Amex, card.Discover, card.JCB, card.UnionPay, card.Diners,
	card.Maestro, card.Mir}

// Check refuses a route it cannot apply, naming the flag; it normalizes
// case.
func (r *Route) Check() error {
	bad := func(msg string) error { return fault.New(fault.ValidationError, msg) }
	if r.Weight == 0 {
		r.Weight = 1
	}
	if r.Weight < 1 || r.Weight > 1000 {
		return bad("--weight must be between 1 and 1000")
	}
	for i, s := range r.Schemes {
		r.Schemes[i] = strings.ToLower(s)
		if !slices.Contains(schemes, r.Schemes[i]) {
			return bad(fmt.Sprintf("--schemes: %q is not one of %s", s, strings.Join(schemes, ",")))
		}
	}
	for i, c := range r.CardCountries {
		r.CardCountries[i] = strings.ToUpper(c)
		if !country.Known(r.CardCountries[i]) {
			return bad(fmt.Sprintf("--card-countries: %q is not an ISO 3166-1 alpha-2 code", c))
		}
	}
	if r.MinAmount != nil && *r.MinAmount < 1 || r.MaxAmount != nil && *r.MaxAmount < 1 {
		return bad("--min-amount and --max-amount are amounts in minor units, 1 or more")
	}
	if r.MinAmount != nil && r.MaxAmount != nil && *r.MinAmount > *r.MaxAmount {
		return bad("--min-amount must not exceed --max-amount")
	}
	return nil
}

// Candidates orders the channels that take p among a key's channels in
// routing order (ChannelsForKey): those whose route admits p and that ok
// accepts (method, currency, capabilities), by position; among channels of
// one position, a weighted draw seeded by seed (a payment's id), so that
// the volume splits by weight and one payment always draws the same order
// (docs/design/decisions.md section 17).
func Candidates(channels []Channel, p Payment, ok func(Channel) bool, seed string) []Channel {
	var in []Channel
	for _, c := range channels {
		if c.Route.Admits(p) && ok(c) {
			in = append(in, c)
		}
	}
	slices.SortStableFunc(in, func(a, b Channel) int { return a.Route.Position - b.Route.Position })
	out := make([]Channel, 0, len(in))
	for i := 0; i < len(in); {
		j := i
		for j < len(in) && in[j].Route.Position == in[i].Route.Position {
			j++
		}
		out = append(out, draw(in[i:j], seed)...)
		i = j
	}
	return out
}

// draw orders a group by weight: each pick takes a channel with a
// probability in proportion to its weight among those left, from a
// stream of numbers derived from seed.
func draw(group []Channel, seed string) []Channel {
	if len(group) < 2 {
		return group
	}
	left := slices.Clone(group)
	out := make([]Channel, 0, len(group))
	for n := 0; len(left) > 0; n++ {
		total := 0
		for _, c := range left {
			total += max(c.Route.Weight, 1)
		}
		h := sha256.Sum256([]byte(fmt.Sprintf("%s/%d", seed, n)))
		x := int(binary.BigEndian.Uint64(h[:8]) % uint64(total))
		for k, c := range left {
			if x -= max(c.Route.Weight, 1); x < 0 {
				out = append(out, c)
				left = slices.Delete(left, k, k+1)
				break
			}
		}
	}
	return out
}
