package pages_test

import (
	"net/http"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/cabinet"
	"github.com/paygate/paygate/internal/payment"
	"github.com/paygate/paygate/internal/store/storetest"
	"github.com/paygate/paygate/internal/subscription"
)

var (
	currentRE = regexp.MustCompile(`<a href="[^"]*" aria-current="page">([^<]+)</a>`)
	badgeRE   = regexp.MustCompile(`<span class="badge ?([a-z]*)">([a-z_]+)</span>`)
)

// TestNavigationAndBadges: the navigation marks the section a page belongs
// to (a resource's page belongs to its list's), and a status is a badge
// whose colour says how it went (docs/cabinet.md).
func TestNavigationAndBadges(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{})
		now := e.clock.Now()
		paid := e.payment(t, e.a, nil)
		declined := e.payment(t, e.a, func(p *payment.Payment) { p.Status = payment.Declined })
		sub := e.subscription(t, e.mandate(t, e.a, "cust-1"), subscription.Paused, now)
		v, po := e.verification(t, e.a, nil), e.payout(t, e.a, nil)
		ev := e.event(t, e.a, "payment.succeeded", "payment", paid.ID, `{}`, now)
		b := e.signedIn(t, "ann@example.com", cabinet.Admin, e.a)

		for path, want := range map[string]string{
			"/cabinet/":                        "",
			"/cabinet/payments":                "Payments",
			"/cabinet/payments/" + paid.ID:     "Payments",
			"/cabinet/payments/totals":         "Payments",
			"/cabinet/cards":                   "Saved cards",
			"/cabinet/verifications/" + v.ID:   "Verifications",
			"/cabinet/payouts/" + po.ID:        "Payouts",
			"/cabinet/subscriptions/" + sub.ID: "Subscriptions",
			"/cabinet/webhooks":                "Webhooks",
			"/cabinet/events/" + ev.ID:         "Events",
			"/cabinet/allowances":              "Allowances",
			"/cabinet/channels":                "Channels",
			"/cabinet/reconciliation":          "Reconciliation",
		} {
			a := b.get(path)
			require.Equal(t, http.StatusOK, a.status, path)
			var got []string
			for _, m := range currentRE.FindAllStringSubmatch(a.body, -1) {
				got = append(got, m[1])
			}
			if want == "" {
				require.Empty(t, got, path)
			} else {
				require.Equal(t, []string{want}, got, path)
			}
		}

		tones := map[string]string{}
		for _, path := range []string{"/cabinet/payments", "/cabinet/subscriptions/" + sub.ID} {
			for _, m := range badgeRE.FindAllStringSubmatch(b.get(path).body, -1) {
				tones[m[2]] = m[1]
			}
		}
		require.Equal(t, "ok", tones[string(paid.Status)], "succeeded")
		require.Equal(t, "bad", tones[string(declined.Status)], "declined")
		require.Equal(t, "warn", tones["paused"], "paused")
	})
}
