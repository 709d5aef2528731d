package acquirer

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/provider"
)

func TestChallengePage(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	tests := []struct {
		name, number, outcome string
		status                provider.Status
		decline               string
		charges               int
	}{
		{"approve", "4000000000003220", "approve", provider.StatusSucceeded, "", 1},
		{"deny", "4000000000003220", "deny", provider.StatusDeclined, "authentication_failed", 0},
		{"approve, then the card declines", "4000008400001629", "approve", provider.StatusDeclined, "card_declined", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := payReq(tt.number)
			r.ReturnURL = "https://merchant.example/back?order=1"
			res := e.pay(r)
			require.Equal(t, provider.StatusRequiresAction, res.Status)

			// Until the payer acts, asking changes nothing.
			got, err := e.a.Confirm(ctx, provider.ConfirmRequest{OperationID: op(), ProviderID: res.ProviderID})
			require.NoError(t, err)
			require.Equal(t, provider.StatusRequiresAction, got.Status)

			resp, body := e.get(res.NextAction.URL)
			require.Equal(t, http.StatusOK, resp.StatusCode)
			require.Contains(t, body, `name="outcome" value="approve"`)
			require.Contains(t, body, "19.99 USD")

			resp, _ = e.submit(res.NextAction.URL, url.Values{"outcome": {tt.outcome}})
			require.Equal(t, http.StatusSeeOther, resp.StatusCode)
			back, err := url.Parse(resp.Header.Get("Location"))
			require.NoError(t, err)
			require.Equal(t, "merchant.example", back.Host)
			require.Equal(t, "1", back.Query().Get("order"))
			require.Equal(t, res.ProviderID, back.Query().Get("sandbox_payment_id"))
			require.Equal(t, string(tt.status), back.Query().Get("status"))

			got, err = e.a.Confirm(ctx, provider.ConfirmRequest{OperationID: op(), ProviderID: res.ProviderID})
			require.NoError(t, err)
			require.Equal(t, tt.status, got.Status)
			require.Equal(t, tt.decline, got.DeclineCode)
			got, err = e.a.Status(ctx, provider.StatusRequest{OperationID: r.OperationID})
			require.NoError(t, err)
			require.Equal(t, tt.status, got.Status)
			require.Equal(t, tt.charges, e.srv.Count(EntryCharge, r.OperationID))

			// The form is gone; submitting again changes nothing.
			_, body = e.get(res.NextAction.URL)
			require.NotContains(t, body, "<form")
			e.submit(res.NextAction.URL, url.Values{"outcome": {"approve"}})
			require.Equal(t, tt.charges, e.srv.Count(EntryCharge, r.OperationID))
		})
	}
	t.Run("without return_url a result page", func(t *testing.T) {
		res := e.pay(payReq("4000000000003220"))
		resp, body := e.submit(res.NextAction.URL, url.Values{"outcome": {"approve"}})
		require.Equal(t, http.StatusOK, resp.StatusCode)
		require.Contains(t, body, "paid")
	})
	t.Run("bad outcome", func(t *testing.T) {
		res := e.pay(payReq("4000000000003220"))
		resp, _ := e.submit(res.NextAction.URL, url.Values{"outcome": {"maybe"}})
		require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	})
	t.Run("unknown page", func(t *testing.T) {
		resp, _ := e.get(e.run.URL + "/3ds/pay_nope")
		require.Equal(t, http.StatusNotFound, resp.StatusCode)
	})
}

// pageWords are words each locale's pages must show.
var pageWords = map[string]struct{ lang, challenge, approve, number, pay, paid string }{
	"ru": {"ru", "Подтверждение платежа", "Подтвердить", "Номер карты", "Оплатить", "оплачено"},
	"en": {"en", "Confirm your payment", "Approve", "Card number", "Pay", "paid"},
	"ua": {"uk", "Підтвердження платежу", "Підтвердити", "Номер картки", "Сплатити", "сплачено"},
}

func TestChallengePageLocales(t *testing.T) {
	e := newEnv(t)
	for loc, w := range pageWords {
		t.Run(loc, func(t *testing.T) {
			r := payReq("4000000000003220")
			r.Locale = loc
			res := e.pay(r)
			_, body := e.get(res.NextAction.URL)
			require.Contains(t, body, `<html lang="`+w.lang+`">`)
			require.Contains(t, body, w.challenge)
			require.Contains(t, body, w.approve)
			_, body = e.submit(res.NextAction.URL, url.Values{"outcome": {"approve"}})
			require.Contains(t, body, w.paid)
		})
	}
}

func TestHostedCheckout(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	form := func(number string) url.Values {
		return url.Values{"number": {number}, "expire_month": {"12"}, "expire_year": {"2032"},
			"cvv": {"123"}, "cardholder": {"Ada Lovelace"}}
	}
	session := func(loc string, authorize bool) (provider.HostedSessionRequest, provider.HostedSessionResult) {
		r := provider.HostedSessionRequest{OperationID: op(), AmountMinor: 5000, Currency: "EUR", OrderID: "o-1",
			Locale: loc, ReturnURL: "https://paygate.example/return/abc", Authorize: authorize}
		res, err := e.a.HostedSession(ctx, r)
		require.NoError(t, err)
		require.Equal(t, e.run.URL+"/checkout/"+res.ProviderID, res.URL)
		return r, res
	}

	for loc, w := range pageWords {
		t.Run("pays in "+loc, func(t *testing.T) {
			r, s := session(loc, false)
			got, err := e.a.Status(ctx, provider.StatusRequest{OperationID: r.OperationID})
			require.NoError(t, err)
			require.Equal(t, provider.StatusPending, got.Status)

			resp, body := e.get(s.URL)
			require.Equal(t, http.StatusOK, resp.StatusCode)
			require.Contains(t, body, `<html lang="`+w.lang+`">`)
			require.Contains(t, body, w.number)
			require.Contains(t, body, ">"+w.pay+"<")
			require.Contains(t, body, "50.00 EUR")
			for _, field := range []string{"number", "expire_month", "expire_year", "cvv", "cardholder"} {
				require.Contains(t, body, `name="`+field+`"`)
			}

			resp, _ = e.submit(s.URL, form("4242 4242 4242 4242"))
			require.Equal(t, http.StatusSeeOther, resp.StatusCode)
			back, _ := url.Parse(resp.Header.Get("Location"))
			require.Equal(t, "/return/abc", back.Path)
			require.Equal(t, "succeeded", back.Query().Get("status"))
			require.Equal(t, s.ProviderID, back.Query().Get("sandbox_session_id"))

			got, err = e.a.Status(ctx, provider.StatusRequest{OperationID: r.OperationID})
			require.NoError(t, err)
			require.Equal(t, provider.StatusSucceeded, got.Status)
			require.Equal(t, back.Query().Get("sandbox_payment_id"), got.ProviderID)
			require.Equal(t, 1, e.srv.Count(EntryCharge, r.OperationID))

			// A finished session never shows the form again, nor pays twice.
			_, body = e.get(s.URL)
			require.NotContains(t, body, `name="number"`)
			require.Contains(t, body, w.paid)
			e.submit(s.URL, form("4242424242424242"))
			require.Equal(t, 1, e.srv.Count(EntryCharge, r.OperationID))
		})
	}
	t.Run("bad card shows the form again", func(t *testing.T) {
		_, s := session("en", false)
		for _, number := range []string{"1234", "4242424242424241"} {
			resp, body := e.submit(s.URL, form(number))
			require.Equal(t, http.StatusUnprocessableEntity, resp.StatusCode)
			require.Contains(t, body, "Please check the card details.")
			require.NotContains(t, body, number)
		}
	})
	t.Run("3DS then authorized", func(t *testing.T) {
		r, s := session("en", true)
		resp, _ := e.submit(s.URL, form("4000000000003220"))
		require.Equal(t, http.StatusSeeOther, resp.StatusCode)
		challenge := resp.Header.Get("Location")
		require.True(t, strings.HasPrefix(challenge, e.run.URL+"/3ds/pay_"), challenge)
		got, err := e.a.Status(ctx, provider.StatusRequest{OperationID: r.OperationID})
		require.NoError(t, err)
		require.Equal(t, provider.StatusRequiresAction, got.Status)

		resp, _ = e.submit(challenge, url.Values{"outcome": {"approve"}})
		back, _ := url.Parse(resp.Header.Get("Location"))
		require.Equal(t, "authorized", back.Query().Get("status"))
		require.Equal(t, s.ProviderID, back.Query().Get("sandbox_session_id"))
		got, err = e.a.Status(ctx, provider.StatusRequest{OperationID: r.OperationID})
		require.NoError(t, err)
		require.Equal(t, provider.StatusAuthorized, got.Status)
		require.Equal(t, 1, e.srv.Count(EntryHold, r.OperationID))
	})
	t.Run("expired session", func(t *testing.T) {
		r, s := session("en", false)
		e.clock.Advance(time.Hour)
		resp, _ := e.get(s.URL)
		require.Equal(t, http.StatusGone, resp.StatusCode)
		got, err := e.a.Status(ctx, provider.StatusRequest{OperationID: r.OperationID})
		require.NoError(t, err)
		require.Equal(t, provider.StatusFailed, got.Status)
		require.Equal(t, "session_expired", got.DeclineCode)
	})
}
