package pages_test

import (
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/url"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/cabinet"
	"github.com/paygate/paygate/internal/store/storetest"
	"github.com/paygate/paygate/internal/subscription"
)

var styleRE = regexp.MustCompile(`(?s)<style>(.*?)</style>`)

// TestPageHeaders: every page, the refusals and error pages included, is
// sent with the Content-Security-Policy of the checkout (no script, forms
// post only to Paygate, never framed: docs/cabinet.md, "Security
// choices") whose style hash is the page's one inline style sheet, is
// never cached, sends no referrer, and holds no script.
func TestPageHeaders(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, db storetest.Database) {
		x := &exportTo{answer: writeCSV}
		e := newEnv(t, db, options{export: x.export})
		now := e.clock.Now()
		_, setupToken, err := e.users.CreateUser(t.Context(), "new@example.com", cabinet.Admin, []string{e.a.ID})
		require.NoError(t, err)
		p := e.payment(t, e.a, nil)
		v, po := e.verification(t, e.a, nil), e.payout(t, e.a, nil)
		paused := e.subscription(t, e.mandate(t, e.a, "cust-1"), subscription.Paused, now)
		ev := e.event(t, e.a, "payment.succeeded", "payment", p.ID, `{}`, now)
		admin := e.signedIn(t, "ann@example.com", cabinet.Admin, e.a)
		tok := admin.token("/cabinet/")

		for _, c := range []struct {
			name, method, path string
			form               url.Values
			status             int
		}{
			{"sign-in", "GET", "/cabinet/sign-in", nil, http.StatusOK},
			{"setup", "GET", "/cabinet/setup/" + setupToken, nil, http.StatusOK},
			{"a link not valid", "GET", "/cabinet/setup/nonsense", nil, http.StatusNotFound},
			{"home", "GET", "/cabinet/", nil, http.StatusOK},
			{"payments", "GET", "/cabinet/payments", nil, http.StatusOK},
			{"a payment", "GET", "/cabinet/payments/" + p.ID, nil, http.StatusOK},
			{"totals", "GET", "/cabinet/payments/totals", nil, http.StatusOK},
			{"saved cards", "GET", "/cabinet/cards", nil, http.StatusOK},
			{"verifications", "GET", "/cabinet/verifications", nil, http.StatusOK},
			{"a verification", "GET", "/cabinet/verifications/" + v.ID, nil, http.StatusOK},
			{"payouts", "GET", "/cabinet/payouts", nil, http.StatusOK},
			{"a payout", "GET", "/cabinet/payouts/" + po.ID, nil, http.StatusOK},
			{"subscriptions", "GET", "/cabinet/subscriptions", nil, http.StatusOK},
			{"a subscription", "GET", "/cabinet/subscriptions/" + paused.ID, nil, http.StatusOK},
			{"webhooks", "GET", "/cabinet/webhooks", nil, http.StatusOK},
			{"events", "GET", "/cabinet/events", nil, http.StatusOK},
			{"an event", "GET", "/cabinet/events/" + ev.ID, nil, http.StatusOK},
			{"allowances", "GET", "/cabinet/allowances", nil, http.StatusOK},
			{"channels", "GET", "/cabinet/channels", nil, http.StatusOK},
			{"reconciliation", "GET", "/cabinet/reconciliation", nil, http.StatusOK},
			{"a day not reconciled", "GET", "/cabinet/reconciliation/acq/2026-01-15", nil, http.StatusNotFound},
			{"a bad day", "GET", "/cabinet/reconciliation/acq/2026-13-15", nil, http.StatusBadRequest},
			{"not found", "GET", "/cabinet/payments/nothing", nil, http.StatusNotFound},
			{"a bad link", "GET", "/cabinet/payments?after=nonsense", nil, http.StatusBadRequest},
			{"a refused form", "POST", "/cabinet/cards/x/delete", url.Values{}, http.StatusForbidden},
			{"an action the status refuses", "POST", "/cabinet/subscriptions/" + paused.ID + "/pause",
				url.Values{"csrf_token": {tok}}, http.StatusConflict},
			{"a resend to no endpoint", "POST", "/cabinet/events/" + ev.ID + "/resend",
				url.Values{"csrf_token": {tok}}, http.StatusUnprocessableEntity},
		} {
			t.Run(c.name, func(t *testing.T) {
				b := admin
				if c.path == "/cabinet/sign-in" {
					b = e.browser(t) // a signed-in browser is sent home
				}
				a := b.do(c.method, c.path, c.form)
				require.Equal(t, c.status, a.status, a.body)
				h := a.header
				require.Equal(t, "text/html; charset=utf-8", h.Get("Content-Type"))
				style := styleRE.FindStringSubmatch(a.body)
				require.NotNil(t, style, "the page's style sheet")
				require.NotEmpty(t, style[1])
				sum := sha256.Sum256([]byte(style[1]))
				require.Equal(t, "default-src 'none'; style-src 'sha256-"+base64.StdEncoding.EncodeToString(sum[:])+"'; "+
					"img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
					h.Get("Content-Security-Policy"))
				require.Equal(t, "no-store", h.Get("Cache-Control"))
				require.Equal(t, "no-referrer", h.Get("Referrer-Policy"))
				require.Equal(t, "nosniff", h.Get("X-Content-Type-Options"))
				require.Equal(t, "DENY", h.Get("X-Frame-Options"))
				require.NotContains(t, a.body, "<script")
			})
		}
	})
}
