package server_test

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/cabinet"
	"github.com/paygate/paygate/internal/store/storetest"
	"github.com/paygate/paygate/internal/webhook"
)

// The cabinet in Chromium (docs/cabinet.md): what staff do, as a browser
// without JavaScript does it (the pages have no script; the test's own
// DevTools calls read the page and play an attacker's forms).

const staffPassword = "a long passphrase"

// setUpInBrowser makes a user and chooses its password through the setup
// link in the tab, which ends signed in on the home page.
func (e *env) setUpInBrowser(t *testing.T, ctx context.Context, email string, role cabinet.Role, keyIDs ...string) {
	t.Helper()
	_, token, err := e.app.Cabinet.CreateUser(context.Background(), email, role, keyIDs)
	require.NoError(t, err)
	run(t, ctx, chromedp.Navigate(e.url+"/cabinet/setup/"+token),
		chromedp.SendKeys(chromedp.CSS("#password"), staffPassword),
		chromedp.SendKeys(chromedp.CSS("#password_again"), staffPassword),
		chromedp.Submit(chromedp.CSS("#password")),
		chromedp.WaitVisible(chromedp.CSS("nav")))
	require.Equal(t, "Your keys", text(t, ctx, "h1"))
}

// signInBrowser signs in through the sign-in page.
func (e *env) signInBrowser(t *testing.T, ctx context.Context, email string) {
	t.Helper()
	run(t, ctx, chromedp.Navigate(e.url+"/cabinet/sign-in"),
		chromedp.SendKeys(chromedp.CSS("#email"), email),
		chromedp.SendKeys(chromedp.CSS("#password"), staffPassword),
		chromedp.Submit(chromedp.CSS("#password")),
		chromedp.WaitVisible(chromedp.CSS("nav")))
}

// signOutBrowser presses the header's sign-out button.
func signOutBrowser(t *testing.T, ctx context.Context) {
	t.Helper()
	run(t, ctx, chromedp.Click(chromedp.CSS(`form[action="/cabinet/sign-out"] button`)),
		chromedp.WaitVisible(chromedp.CSS("#email")))
}

// cells reads one column's texts of the page's first table body.
func cells(t *testing.T, ctx context.Context, column int) []string {
	t.Helper()
	return eval[[]string](t, ctx, `Array.from(document.querySelectorAll("table tbody tr")).map(r => r.cells[`+
		strings.TrimSpace(string(rune('0'+column)))+`].innerText)`)
}

// postForged submits, as an attacker's page or a replayed form would, a
// form to action with the given anti-forgery token, and waits for the
// answer page.
func postForged(t *testing.T, ctx context.Context, action, token string) {
	t.Helper()
	run(t, ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := chromedp.Evaluate[bool](`(function () {
			const f = document.createElement("form"); f.id = "forged"; f.method = "post"; f.action = `+jsString(action)+`;
			const i = document.createElement("input"); i.type = "hidden"; i.name = "csrf_token"; i.value = `+jsString(token)+`;
			f.appendChild(i); document.body.appendChild(f); return true })()`)(ctx, tg)
		return err
	}), chromedp.Submit(chromedp.CSS("#forged")), chromedp.WaitNotPresent(chromedp.CSS("#forged")),
		chromedp.WaitVisible(chromedp.CSS("h1")))
}

// submitted submits the form of the element and waits for the page it
// answers: the current page is marked first, and the answer is the page
// without the mark.
func submitted(sel string) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := chromedp.Evaluate[bool](`document.body.dataset.stale = "1"; true`)(ctx, tg)
		return err
	}), chromedp.Submit(chromedp.CSS(sel)), chromedp.WaitNotPresent(chromedp.CSS("body[data-stale]")),
		chromedp.WaitReady(chromedp.CSS("body")))
}

func jsString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "<", `\u003c`)
	return `"` + r.Replace(s) + `"`
}

// download clicks the link and returns the downloaded file's bytes.
func download(t *testing.T, ctx context.Context, sel string) []byte {
	t.Helper()
	dir := t.TempDir()
	progress := chromedp.BrowserEvents(ctx, cdpbrowser.DownloadProgress)
	yes := true
	run(t, ctx, chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		_, err := chromedp.CallBrowser(ctx, cdpbrowser.SetDownloadBehavior, cdpbrowser.SetDownloadBehaviorParams{
			Behavior: cdpbrowser.SetDownloadBehaviorBehaviorAllowAndName, DownloadPath: dir, EventsEnabled: &yes,
			BrowserContextID: chromedp.FromContext(ctx).BrowserContextID})
		return err
	}), chromedp.Click(chromedp.CSS(sel)))
	for ev, err := range progress {
		require.NoError(t, err)
		switch ev.State {
		case cdpbrowser.DownloadProgressStateCompleted:
			b, err := os.ReadFile(filepath.Join(dir, ev.GUID))
			require.NoError(t, err)
			return b
		case cdpbrowser.DownloadProgressStateCanceled:
			t.Fatalf("the download of %s was canceled", sel)
		}
	}
	t.Fatal("no download event")
	return nil
}

// TestBrowserCabinet drives the cabinet in Chromium on both databases
// (docs/design/decisions.md section 13; docs/cabinet.md): set up and sign
// in, filter, search, open a payment, export (the downloaded CSV is the
// signed export of the same filters), a user of key A never reaches key
// B's data, forged and replayed forms are refused, sign-out.
func TestBrowserCabinet(t *testing.T) {
	each(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{work: true})
		ctx := newTab(t)
		rc := newReceiver(t, ok)
		e.addEndpoint(e.a, rc.URL)
		paid := e.direct(e.a, orderBody("browser-order-1", "browser-payer"))
		other := e.direct(e.b, orderBody("b-order", "b-payer"))
		card := savedCard(t, e, e.aKey.ID, "browser-payer")
		kept := savedCard(t, e, e.aKey.ID, "browser-payer-2")
		rnd := rand.New(rand.NewPCG(14, 1))
		seedPayments(t, e, e.aKey.ID, 120, rnd)
		seedPayments(t, e, e.bKey.ID, 20, rnd)

		run(t, ctx, noScript())
		e.setUpInBrowser(t, ctx, "ada@example.com", cabinet.Admin, e.aKey.ID)
		signOutBrowser(t, ctx)
		e.signInBrowser(t, ctx, "ada@example.com")

		// Filter by status.
		run(t, ctx, chromedp.Click(chromedp.CSS(`nav a[href^="/cabinet/payments"]`)),
			chromedp.WaitVisible(chromedp.CSS("#status")),
			chromedp.SetValue(chromedp.CSS("#status"), "succeeded"),
			submitted("#status"),
			chromedp.WaitVisible(chromedp.CSS("#export")))
		require.Contains(t, eval[string](t, ctx, "location.search"), "status=succeeded")
		statuses := cells(t, ctx, 1)
		require.NotEmpty(t, statuses)
		for _, s := range statuses {
			require.Equal(t, "succeeded", s)
		}

		// Export the filtered view: the signed export's file.
		got := download(t, ctx, "#export")
		want := exportCSV(t, e.a, "?status=succeeded")
		require.Equal(t, string(want.Body), string(got))

		// Search by order id, open the payment.
		run(t, ctx, chromedp.Navigate(e.url+"/cabinet/payments"),
			chromedp.SendKeys(chromedp.CSS("#q"), "browser-order-1"),
			submitted("#q"),
			chromedp.WaitVisible(chromedp.CSS("#export")))
		require.Equal(t, []string{"browser-order-1"}, cells(t, ctx, 3))
		run(t, ctx, chromedp.Click(chromedp.CSS(`table tbody a`)), chromedp.WaitVisible(chromedp.CSS("dl")))
		require.Equal(t, paid.PaymentID, text(t, ctx, "dl code"))
		page := text(t, ctx, "body")
		require.Contains(t, page, "payment.succeeded")
		require.NotContains(t, page, "4242424242424242")

		// Resend the payment's payment.succeeded event from its page: the
		// receiver gets it again, and the page shows the second attempt.
		run(t, ctx, chromedp.Navigate(e.url+"/cabinet/events?type=payment.succeeded&resource_id="+paid.PaymentID),
			chromedp.WaitVisible(chromedp.CSS("tr[data-event] a")))
		eventID := eval[string](t, ctx, `document.querySelector("tr[data-event]").dataset.event`)
		e.await(time.Second, rc.has(eventID, 1))
		run(t, ctx, chromedp.Click(chromedp.CSS("tr[data-event] a")), chromedp.WaitVisible(chromedp.CSS("#payload")))
		require.NotContains(t, text(t, ctx, "#payload"), "4242424242424242")
		run(t, ctx, submitted("#resend button"), chromedp.WaitVisible(chromedp.CSS("#payload")))
		require.Contains(t, text(t, ctx, "body"), "Queued for delivery again")
		e.await(time.Second, rc.has(eventID, 2))
		e.await(time.Second, e.deliveryIs(eventID, webhook.Succeeded))
		run(t, ctx, chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("#payload")))
		require.Equal(t, 2, eval[int](t, ctx, `document.querySelectorAll("tr[data-attempt]").length`))

		// Delete a saved card: gone from the page and from the API.
		run(t, ctx, chromedp.Navigate(e.url+"/cabinet/cards"),
			chromedp.WaitVisible(chromedp.CSS(`button[data-delete="`+card.ID+`"]`)),
			submitted(`button[data-delete="`+card.ID+`"]`), chromedp.WaitVisible(chromedp.CSS("[data-done=deleted]")))
		require.Zero(t, eval[int](t, ctx, `document.querySelectorAll('tr[data-card="`+card.ID+`"]').length`))
		require.Equal(t, 1, eval[int](t, ctx, `document.querySelectorAll('tr[data-card="`+kept.ID+`"]').length`))
		_, listed := tokens(t, e.a, "")
		require.NotContains(t, listed, card.ID)
		require.Contains(t, listed, kept.ID)

		// A viewer, in a browser of their own, has no button to press, and
		// the form posted anyway is refused.
		viewer := newTab(t)
		run(t, viewer, noScript())
		e.setUpInBrowser(t, viewer, "vic@example.com", cabinet.Viewer, e.aKey.ID)
		run(t, viewer, chromedp.Navigate(e.url+"/cabinet/cards"), chromedp.WaitVisible(chromedp.CSS(`tr[data-card="`+kept.ID+`"]`)))
		require.Zero(t, eval[int](t, viewer, `document.querySelectorAll("button[data-delete]").length`))
		own := eval[string](t, viewer, `document.querySelector('form[action="/cabinet/sign-out"] input[name=csrf_token]').value`)
		postForged(t, viewer, "/cabinet/cards/"+kept.ID+"/delete", own)
		require.Equal(t, "Not allowed", text(t, viewer, "h1"))
		require.Contains(t, text(t, viewer, "body"), "viewer")
		_, listed = tokens(t, e.a, "")
		require.Contains(t, listed, kept.ID)

		// Key B's payment and key are unknown to a user of key A.
		run(t, ctx, chromedp.Navigate(e.url+"/cabinet/payments/"+other.PaymentID), chromedp.WaitVisible(chromedp.CSS("h1")))
		require.Equal(t, "Not found", text(t, ctx, "h1"))
		run(t, ctx, chromedp.Navigate(e.url+"/cabinet/payments?key="+e.bKey.ID), chromedp.WaitVisible(chromedp.CSS("h1")))
		require.Equal(t, "Not found", text(t, ctx, "h1"))
		run(t, ctx, chromedp.Navigate(e.url+"/cabinet/payments"), chromedp.WaitVisible(chromedp.CSS("#export")))
		require.NotContains(t, text(t, ctx, "body"), "b-order")

		// A forged form (a wrong token) is refused and changes nothing.
		token := eval[string](t, ctx, `document.querySelector('form[action="/cabinet/sign-out"] input[name=csrf_token]').value`)
		postForged(t, ctx, "/cabinet/sign-out", token[:len(token)-4]+"AAAA")
		require.Equal(t, "Not allowed", text(t, ctx, "h1"))
		run(t, ctx, chromedp.Navigate(e.url+"/cabinet/payments"), chromedp.WaitVisible(chromedp.CSS("#export")))

		// A form of an ended session, replayed in a new one, is refused.
		signOutBrowser(t, ctx)
		e.signInBrowser(t, ctx, "ada@example.com")
		postForged(t, ctx, "/cabinet/sign-out", token)
		require.Equal(t, "Not allowed", text(t, ctx, "h1"))
		run(t, ctx, chromedp.Navigate(e.url+"/cabinet/payments"), chromedp.WaitVisible(chromedp.CSS("#export")))

		// Sign-out ends the session.
		signOutBrowser(t, ctx)
		run(t, ctx, chromedp.Navigate(e.url+"/cabinet/payments"), chromedp.WaitVisible(chromedp.CSS("#email")))
		require.Equal(t, "Sign in", text(t, ctx, "h1"))
	})
}
