package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/store/storetest"
)

// TestCheckoutInBrowser pays on the hosted page in real Chromium, as a
// payer does: typing, clicking, passing the sandbox's 3DS page, and coming
// back to the shop's return_url.
func TestCheckoutInBrowser(t *testing.T) {
	each(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{work: true})
		shop := newShop(t)
		back := fmt.Sprintf(`,"return_url":%q`, shop.URL+"/thanks?cart=42")
		open := func(t *testing.T, extra string) (context.Context, string, string) {
			s := e.session(t, back+extra)
			ctx := newTab(t)
			run(t, ctx, chromedp.Navigate(e.url+"/checkout/"+s.SessionID))
			return ctx, s.SessionID, s.PaymentID
		}

		t.Run("pay with a success card", func(t *testing.T) {
			ctx, _, id := open(t, "")
			run(t, ctx, typeCard("4242424242424242"))
			require.Equal(t, "4242 4242 4242 4242", eval[string](t, ctx, `document.getElementById("number").value`))
			require.Equal(t, "Visa", eval[string](t, ctx, `document.querySelector("[data-brand]").textContent`))
			start := time.Now()
			run(t, ctx, chromedp.SendKeys(chromedp.CSS("#cvv"), "\r")) // Enter submits, as with the keyboard
			gotID, status := awaitShop(t, ctx)
			t.Logf("submit to the shop's return page: %s", time.Since(start).Round(time.Millisecond))
			require.Equal(t, id, gotID)
			require.Equal(t, "succeeded", status)
			require.Equal(t, "42", text(t, ctx, "#cart"), "the return_url keeps its own query")
			p := e.payment(t, id)
			require.Equal(t, "succeeded", p.Status)
			require.NotNil(t, p.Device)
			d, _ := json.Marshal(p.Device)
			for _, field := range []string{"javascript_enabled", "screen_width", "viewport_height", "color_depth",
				"device_pixel_ratio", "utc_offset", "language", "timezone", "user_agent", "accept_header", "client_timestamp"} {
				require.Contains(t, string(d), `"`+field+`"`, "device snapshot")
			}
			require.Equal(t, 1, chargesFor(e, id))
		})

		t.Run("3DS approve", func(t *testing.T) {
			ctx, _, id := open(t, "")
			run(t, ctx, typeCard("4000000000003220"), pay(),
				chromedp.WaitVisible(chromedp.CSS(`button[value="approve"]`)), chromedp.Click(chromedp.CSS(`button[value="approve"]`)))
			gotID, status := awaitShop(t, ctx)
			require.Equal(t, id, gotID)
			require.Equal(t, "succeeded", status)
		})

		t.Run("3DS deny, then another card", func(t *testing.T) {
			ctx, _, id := open(t, "")
			run(t, ctx, typeCard("4000000000003220"), pay(),
				chromedp.WaitVisible(chromedp.CSS(`button[value="deny"]`)), chromedp.Click(chromedp.CSS(`button[value="deny"]`)),
				chromedp.WaitVisible(chromedp.CSS(".alert-decline")))
			require.Contains(t, text(t, ctx, ".alert-decline"), "The payer did not pass authentication.")
			require.Empty(t, eval[string](t, ctx, `document.getElementById("number").value`), "the card is not typed back")
			run(t, ctx, typeCard("5555555555554444"), pay())
			_, status := awaitShop(t, ctx)
			require.Equal(t, "succeeded", status)
			require.Equal(t, 1, chargesFor(e, id))
		})

		t.Run("a decline shows its message", func(t *testing.T) {
			ctx, _, id := open(t, "")
			run(t, ctx, typeCard("4000000000009995"), pay(), chromedp.WaitVisible(chromedp.CSS(".alert-decline")))
			require.Contains(t, text(t, ctx, ".alert-decline"), "The card has insufficient funds.")
			require.Empty(t, eval[string](t, ctx, `document.getElementById("number").value`), "the card is not typed back")
			require.Equal(t, "awaiting_payment_data", e.payment(t, id).Status)
		})

		t.Run("inline checks before anything is sent", func(t *testing.T) {
			ctx, _, id := open(t, "")
			run(t, ctx, typeCard("4242424242424241"), pay(), chromedp.WaitVisible(chromedp.CSS("#error-summary")))
			require.Contains(t, text(t, ctx, "#error-summary"), "Check the card number: it is not valid.")
			require.Equal(t, "true", eval[string](t, ctx, `document.getElementById("number").getAttribute("aria-invalid")`))
			require.Equal(t, "number-error", eval[string](t, ctx, `document.getElementById("number").getAttribute("aria-describedby")`))
			require.Equal(t, "error-summary", eval[string](t, ctx, `document.activeElement.id`), "focus moves to the summary")
			require.Equal(t, "awaiting_payment_data", e.payment(t, id).Status)
		})

		t.Run("saved card", func(t *testing.T) {
			first := e.direct(e.a, cardBody("4242424242424242", `,"customer_reference":"browser-payer","save_payment_method":true`))
			saved := e.settle(e.a, first.PaymentID).SavedCardID
			require.NotEmpty(t, saved)
			ctx, _, id := open(t, `,"customer_reference":"browser-payer"`)
			run(t, ctx, chromedp.WaitVisible(chromedp.CSS(`input[name="saved_card_id"][value="`+saved+`"]`)))
			require.True(t, eval[bool](t, ctx, `document.querySelector("[data-new-card]").hidden`), "the new card's fields wait")
			run(t, ctx, pay())
			_, status := awaitShop(t, ctx)
			require.Equal(t, "succeeded", status)
			require.Equal(t, saved, e.payment(t, id).SavedCardID)
		})

		t.Run("consent required", func(t *testing.T) {
			ctx, _, id := open(t, `,"subscription":{"interval_unit":"week","interval_count":2,
				"first_charge_at":"2031-03-01T00:00:00Z","disclosure_version":"v3","consent":true}`)
			require.Contains(t, text(t, ctx, ".terms"), "every 2 weeks")
			require.False(t, eval[bool](t, ctx, `document.getElementById("consent").checked`))
			run(t, ctx, typeCard("4242424242424242"), pay(), chromedp.WaitVisible(chromedp.CSS("#consent-error")))
			require.Contains(t, text(t, ctx, "#error-summary"), "Tick the box to agree to the recurring payments.")
			require.Equal(t, "awaiting_payment_data", e.payment(t, id).Status)
			run(t, ctx, chromedp.Click(chromedp.CSS("#consent")), pay())
			_, status := awaitShop(t, ctx)
			require.Equal(t, "succeeded", status)
		})

		t.Run("expired session page", func(t *testing.T) {
			ctx, sid, _ := open(t, `,"expires_in_seconds":300`)
			run(t, ctx, chromedp.WaitVisible(chromedp.CSS("#number")))
			e.clock.Add(301 * time.Second)
			run(t, ctx, chromedp.Navigate(e.url+"/checkout/"+sid), chromedp.WaitVisible(chromedp.CSS("h1")))
			require.Equal(t, "This payment link has expired", text(t, ctx, "h1"))
			require.Zero(t, eval[int](t, ctx, `document.forms.length`), "never the form")
			run(t, ctx, chromedp.Click(chromedp.CSS("a.button")))
			_, status := awaitShop(t, ctx)
			require.Equal(t, "expired", status)
		})

		t.Run("customer fields follow the card's network", func(t *testing.T) {
			s := createSession(t, e.a, `{"order_id":"fields","amount_minor":100,"currency":"USD"}`)
			ctx := newTab(t)
			run(t, ctx, chromedp.Navigate(e.url+"/checkout/"+s.SessionID), chromedp.WaitVisible(chromedp.CSS("#number")))
			visible := func(id string) bool {
				return eval[bool](t, ctx, `!!document.getElementById("`+id+`") && document.getElementById("`+id+`").offsetParent !== null`)
			}
			require.False(t, visible("email"), "nothing asked before the card is known")
			run(t, ctx, chromedp.SendKeys(chromedp.CSS("#number"), "5555"))
			require.True(t, visible("email"))
			require.False(t, visible("first_name"), "Mastercard needs the email only")
			run(t, ctx, clearField("number"), chromedp.SendKeys(chromedp.CSS("#number"), "4242"))
			for _, id := range []string{"first_name", "last_name", "email", "country", "line1"} {
				require.True(t, visible(id), id)
			}
			require.Equal(t, "SELECT", eval[string](t, ctx, `document.getElementById("country").tagName`), "a list of countries")
		})

		t.Run("the form works without JavaScript", func(t *testing.T) {
			s := createSession(t, e.a, `{"order_id":"nojs","amount_minor":2500,"currency":"EUR","description":"Plain form"}`)
			ctx := newTab(t)
			run(t, ctx, noScript(), chromedp.Navigate(e.url+"/checkout/"+s.SessionID), chromedp.WaitVisible(chromedp.CSS("#number")))
			require.False(t, eval[bool](t, ctx, `document.documentElement.classList.contains("js")`))
			run(t, ctx, typeCard("4242424242424242"),
				chromedp.SendKeys(chromedp.CSS("#first_name"), "Ada"), chromedp.SendKeys(chromedp.CSS("#last_name"), "Lovelace"),
				chromedp.SendKeys(chromedp.CSS("#email"), "ada@example.com"), chromedp.SendKeys(chromedp.CSS("#country"), "GB"),
				chromedp.SendKeys(chromedp.CSS("#line1"), "1 Street"), pay(),
				chromedp.WaitVisible(chromedp.CSS(".result-success")))
			require.Equal(t, "Payment successful", text(t, ctx, "h1"))
			p := e.payment(t, s.PaymentID)
			require.Equal(t, "succeeded", p.Status)
			d, _ := json.Marshal(p.Device)
			require.NotContains(t, string(d), "javascript_enabled", "no script, no snapshot: the headers only")
			require.True(t, strings.Contains(string(d), "user_agent"))
		})
	})
}
