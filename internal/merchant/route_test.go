package merchant

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

func ptr(n int64) *int64 { return &n }

func aliases(cs []Channel) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Alias)
	}
	return out
}

// TestCandidates: position orders, conditions filter, weights split one
// position's payments, and one seed always draws the same order
// (docs/design/decisions.md section 17).
func TestCandidates(t *testing.T) {
	all := func(Channel) bool { return true }
	chans := []Channel{
		{Alias: "b-second", Route: Route{Position: 2}},
		{Alias: "a-first-visa", Route: Route{Position: 1, Schemes: []string{"visa"}}},
		{Alias: "c-first-gb-small", Route: Route{Position: 1, CardCountries: []string{"GB"}, MaxAmount: ptr(1000)}},
		{Alias: "d-big", Route: Route{Position: 3, MinAmount: ptr(5000)}},
	}
	visaGB := Payment{AmountMinor: 500, CardKnown: true, Scheme: "visa", Country: "GB"}
	got := aliases(Candidates(chans, visaGB, all, "p1"))
	require.ElementsMatch(t, []string{"a-first-visa", "c-first-gb-small"}, got[:2])
	require.Equal(t, []string{"b-second"}, got[2:])

	mcDE := Payment{AmountMinor: 9000, CardKnown: true, Scheme: "mastercard", Country: "DE"}
	require.Equal(t, []string{"b-second", "d-big"}, aliases(Candidates(chans, mcDE, all, "p2")))
	// No card yet (a session): only the amount conditions apply.
	require.Len(t, Candidates(chans, Payment{AmountMinor: 500}, all, "p3"), 3)
	// ok filters (method, currency, capabilities).
	require.Equal(t, []string{"b-second"}, aliases(Candidates(chans, visaGB, func(c Channel) bool { return c.Alias == "b-second" }, "p4")))
	require.Empty(t, Candidates(nil, visaGB, all, "p5"))

	// Weights 3:1 split about 3:1; a seed draws the same order each time.
	split := []Channel{{Alias: "heavy", Route: Route{Position: 1, Weight: 3}}, {Alias: "light", Route: Route{Position: 1, Weight: 1}}}
	first := map[string]int{}
	for i := range 4000 {
		seed := fmt.Sprintf("payment-%d", i)
		order := aliases(Candidates(split, visaGB, all, seed))
		require.Equal(t, order, aliases(Candidates(split, visaGB, all, seed)))
		require.Len(t, order, 2, "every channel stays a candidate, for a second attempt")
		first[order[0]]++
	}
	require.InDelta(t, 3000, first["heavy"], 150, "%v", first)
}

func TestRouteCheck(t *testing.T) {
	for _, c := range []struct {
		r    Route
		want string
	}{
		{Route{Weight: 1001}, "--weight"},
		{Route{Weight: -1}, "--weight"},
		{Route{Schemes: []string{"visa", "cash"}}, "--schemes"},
		{Route{CardCountries: []string{"XX"}}, "--card-countries"},
		{Route{MinAmount: ptr(0)}, "--min-amount"},
		{Route{MinAmount: ptr(10), MaxAmount: ptr(5)}, "must not exceed"},
	} {
		require.ErrorContains(t, c.r.Check(), c.want)
	}
	r := Route{Schemes: []string{"VISA"}, CardCountries: []string{"gb"}}
	require.NoError(t, r.Check())
	require.Equal(t, 1, r.Weight)
	require.Equal(t, []string{"visa"}, r.Schemes)
	require.Equal(t, []string{"GB"}, r.CardCountries)
	require.Equal(t, "schemes visa; card countries GB", r.Rules())
}
