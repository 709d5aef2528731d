package server_test

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// One Chromium serves every browser test of the binary; each test gets a
// fresh tab (and a fresh cookie-less incognito context of its own).
var browser struct {
	once   sync.Once
	ctx    context.Context
	cancel func()
	dir    string
	err    error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if browser.cancel != nil {
		browser.cancel()
		os.RemoveAll(browser.dir)
	}
	os.Exit(code)
}

// newTab opens a tab in the shared browser, which starts on first use. The
// test is skipped when Debian's chromium is not installed, unless
// PAYGATE_REQUIRE_BROWSER=1 (CI), which fails it instead.
func newTab(t *testing.T) context.Context {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("PAYGATE_REQUIRE_BROWSER") == "1" {
			t.Fatal("PAYGATE_REQUIRE_BROWSER=1 but chromium is not installed (apt-get install chromium)")
		}
		t.Skip("chromium is not installed: the browser tests are skipped")
	}
	browser.once.Do(func() {
		if browser.dir, browser.err = os.MkdirTemp("", "paygate-chromium-"); browser.err != nil {
			return
		}
		alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
			chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
			chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
			chromedp.Flag("disable-sync", true), chromedp.Flag("disable-quic", true),
			chromedp.UserDataDir(browser.dir))
		ctx, cancel := chromedp.NewContext(alloc)
		browser.ctx, browser.cancel = ctx, func() { cancel(); cancelAlloc() }
		browser.err = chromedp.Do(ctx) // starts the browser, bound to ctx (no timeout)
	})
	require.NoError(t, browser.err, "start chromium")
	tab, closeTab := chromedp.NewContext(browser.ctx, chromedp.WithNewBrowserContext())
	t.Cleanup(closeTab)
	require.NoError(t, chromedp.Do(tab), "open a tab")
	ctx, cancel := context.WithTimeout(tab, 45*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// shop is the merchant's site: its return page shows what Paygate added to
// the return_url's query.
func newShop(t *testing.T) *httptest.Server {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><title>Shop</title><h1 id="shop">Thank you</h1>
<p id="payment">%s</p><p id="status">%s</p><p id="cart">%s</p>`,
			html.EscapeString(r.URL.Query().Get("payment_id")), html.EscapeString(r.URL.Query().Get("status")),
			html.EscapeString(r.URL.Query().Get("cart")))
	}))
	t.Cleanup(s.Close)
	return s
}

// run runs browser steps, failing the test with the page's text on error.
func run(t *testing.T, ctx context.Context, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, steps...); err != nil {
		body, _ := chromedp.Run(context.WithoutCancel(ctx), chromedp.Evaluate[string]("document.body ? document.body.innerText : ''"))
		loc, _ := chromedp.Run(context.WithoutCancel(ctx), chromedp.Location())
		t.Fatalf("browser: %v\nat %s\n%s", err, loc, body)
	}
}

func text(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
	require.NoError(t, err, sel)
	return s
}

func eval[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	require.NoError(t, err, js)
	return v
}

// typeCard fills the card fields as a payer types them.
func typeCard(number string) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(
		chromedp.WaitVisible(chromedp.CSS("#number")),
		chromedp.SendKeys(chromedp.CSS("#number"), number),
		chromedp.SendKeys(chromedp.CSS("#expire_month"), "12"),
		chromedp.SendKeys(chromedp.CSS("#expire_year"), fmt.Sprint(time.Now().Year()+2)),
		chromedp.SendKeys(chromedp.CSS("#cvv"), "123"),
	)
}

// clearField empties an input as selecting its text and deleting it does.
func clearField(id string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := chromedp.Evaluate[bool](`(function (f) { f.value = ""; f.dispatchEvent(new Event("input", {bubbles: true})); return true })(document.getElementById("`+id+`"))`)(ctx, t)
		return err
	})
}

func pay() chromedp.Action[chromedp.Void] { return chromedp.Click(chromedp.CSS("[data-pay]")) }

// noScript turns JavaScript off in the tab, as a browser without it.
func noScript() chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true})
		return err
	})
}

// awaitShop waits for the merchant's return page and reads what it got.
func awaitShop(t *testing.T, ctx context.Context) (paymentID, status string) {
	t.Helper()
	run(t, ctx, chromedp.WaitVisible(chromedp.CSS("#shop")))
	return text(t, ctx, "#payment"), text(t, ctx, "#status")
}
