package pages_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/cabinet"
	"github.com/paygate/paygate/internal/payment"
	"github.com/paygate/paygate/internal/payout"
	"github.com/paygate/paygate/internal/store"
	"github.com/paygate/paygate/internal/store/storetest"
	"github.com/paygate/paygate/internal/subscription"
	"github.com/paygate/paygate/internal/verification"
)

// hostile is merchant- or visitor-controlled text that would run or
// break out of its element if it reached a page unescaped; fn names it in
// the page.
func hostile(fn string) string {
	return `"'><script>` + fn + `()</script><img src=x onerror=` + fn + `()>`
}

// TestMerchantTextIsEscaped: every text a merchant's integration or a
// visitor chose (order ids, descriptions, customer references, decline
// texts, webhook URLs, event payloads, filters typed in a URL, an email
// typed in the sign-in form) reaches the pages as text: no page ever holds
// a script or an element of that text's making, yet the text is shown
// (docs/cabinet.md: the pages need no JavaScript and the
// Content-Security-Policy allows none).
func TestMerchantTextIsEscaped(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{})
		now := e.clock.Now()
		p := e.payment(t, e.a, func(p *payment.Payment) {
			p.OrderID, p.Description, p.CustomerReference = hostile("order"), hostile("description"), hostile("customer")
			p.Status, p.DeclineCode, p.DeclineMessage = payment.Declined, "do_not_honor", hostile("decline")
		})
		e.card(t, e.a, hostile("card"), now)
		v := e.verification(t, e.a, func(v *verification.Verification) { v.OrderID = hostile("verify") })
		po := e.payout(t, e.a, func(p *payout.Payout) { p.OrderID, p.Account = hostile("payout"), hostile("account") })
		m := e.mandate(t, e.a, hostile("mandate"))
		evidence, err := json.Marshal(subscription.Evidence{Channel: "direct", UserAgent: hostile("agent")})
		require.NoError(t, err)
		m.Evidence = evidence
		require.NoError(t, e.store.InTx(t.Context(), func(tx *store.Tx) error { return tx.UpdateMandate(t.Context(), m) }))
		sub := e.subscription(t, m, subscription.Active, now)
		e.endpoint(t, e.a, "https://hooks.example/"+hostile("hook"))
		ev := e.event(t, e.a, "payment.declined", "payment", p.ID, `{"note":"</pre>`+hostile("payload")+`"}`, now)
		ann := e.signedIn(t, "ann@example.com", cabinet.Admin, e.a)

		for _, c := range []struct {
			name, path string
			shows      []string
		}{
			{"the payments list", "/cabinet/payments", []string{"order", "customer"}},
			{"a payment", "/cabinet/payments/" + p.ID, []string{"order", "description", "customer", "decline"}},
			{"the saved cards", "/cabinet/cards", []string{"card"}},
			{"the verifications", "/cabinet/verifications", []string{"verify"}},
			{"a verification", "/cabinet/verifications/" + v.ID, []string{"verify"}},
			{"the payouts", "/cabinet/payouts", []string{"payout"}},
			{"a payout", "/cabinet/payouts/" + po.ID, []string{"payout", "account"}},
			{"a subscription and its mandate", "/cabinet/subscriptions/" + sub.ID, []string{"mandate", "agent"}},
			{"the webhook endpoints", "/cabinet/webhooks", []string{"hook"}},
			{"an event's payload", "/cabinet/events/" + ev.ID, []string{"payload"}},
			{"the search typed", "/cabinet/payments?q=" + url.QueryEscape(hostile("search")), []string{"search"}},
			{"a date typed", "/cabinet/payments?from=" + url.QueryEscape(hostile("date")), []string{"date"}},
			{"the totals' search", "/cabinet/payments/totals?q=" + url.QueryEscape(hostile("totals")), []string{"totals"}},
			{"the cards' customer typed", "/cabinet/cards?customer_reference=" + url.QueryEscape(hostile("filter")), []string{"filter"}},
			{"an event type typed", "/cabinet/events?type=" + url.QueryEscape(hostile("type")), []string{"type"}},
			{"a resource id typed", "/cabinet/events?resource_id=" + url.QueryEscape(`<script>rid()</script>`), []string{"rid"}},
		} {
			t.Run(c.name, func(t *testing.T) {
				a := ann.get(c.path)
				require.Equal(t, http.StatusOK, a.status, a.body)
				escaped(t, a.body, c.shows...)
			})
		}

		t.Run("the email typed in the sign-in form", func(t *testing.T) {
			a := e.browser(t).signInAs(hostile("email")+"@example.com", password)
			require.Equal(t, http.StatusUnauthorized, a.status)
			escaped(t, a.body, "email")
		})
	})
}

// escaped checks that body holds no markup of hostile's making and shows
// each fn's text.
func escaped(t *testing.T, body string, fns ...string) {
	t.Helper()
	for _, markup := range []string{"<script", "<img", `"'>`} {
		require.NotContains(t, body, markup)
	}
	for _, fn := range fns {
		require.True(t, strings.Contains(body, fn+"()"), "%s is not shown", fn)
	}
}
