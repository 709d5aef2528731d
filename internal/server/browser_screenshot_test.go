package server_test

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/store/storetest"
)

// screenshotSession is the order the screenshots show.
const screenshotSession = `{"order_id":"1042","amount_minor":4900,"currency":"USD",
	"description":"Loose-leaf tea club: three teas a month",
	"customer":{"first_name":"Ada","last_name":"Lovelace","email":"ada@example.com",
	"billing_address":{"country":"GB","line1":"1 Street"}},
	"subscription":{"interval_unit":"month","interval_count":1,"first_charge_at":"2030-02-01T00:00:00Z",
	"disclosure_version":"2030-01","consent":true}}`

// TestCheckoutScreenshots saves the page on a phone (390×844) and on a
// desktop (1280×800) as docs/images/checkout-phone.png and
// checkout-desktop.png. It runs when PAYGATE_SCREENSHOTS=1:
//
//	PAYGATE_SCREENSHOTS=1 go test ./internal/server -run TestCheckoutScreenshots
func TestCheckoutScreenshots(t *testing.T) {
	if os.Getenv("PAYGATE_SCREENSHOTS") != "1" {
		t.Skip("set PAYGATE_SCREENSHOTS=1 to save docs/images/checkout-*.png")
	}
	e := newEnv(t, storetest.Databases(t)[0], options{})
	for _, v := range []struct {
		name   string
		w, h   int64
		scale  float64
		mobile bool
	}{{"phone", 390, 844, 2, true}, {"desktop", 1280, 800, 1, false}} {
		s := createSession(t, e.a, screenshotSession)
		ctx := newTab(t)
		opts := []chromedp.EmulateViewportOption{chromedp.EmulateScale(v.scale)}
		if v.mobile {
			opts = append(opts, chromedp.EmulatePortrait, chromedp.EmulateMobile, chromedp.EmulateTouch)
		}
		run(t, ctx, chromedp.EmulateViewport(v.w, v.h, opts...), chromedp.Navigate(e.url+"/checkout/"+s.SessionID),
			typeCard("4242424242424242"), chromedp.Click(chromedp.CSS("h1")))
		shot := chromedp.CaptureScreenshot()
		if v.mobile {
			shot = chromedp.FullScreenshot(100)
		}
		png, err := chromedp.Run(ctx, shot)
		require.NoError(t, err)
		path := filepath.Join("..", "..", "docs", "images", "checkout-"+v.name+".png")
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, png, 0o644))
		t.Logf("%s: %d bytes", path, len(png))
	}
}

// TestCheckoutPageWeight keeps the page light: the form's HTML with its
// style sheet and script, as sent and gzipped (docs/checkout.md quotes it).
func TestCheckoutPageWeight(t *testing.T) {
	e := newEnv(t, storetest.Databases(t)[0], options{})
	s := createSession(t, e.a, screenshotSession)
	pg := newPayer(t, e).get(e.url + "/checkout/" + s.SessionID)
	require.Equal(t, http.StatusOK, pg.status)
	total, zipped := len(pg.body), gzipped(pg.body)
	report := fmt.Sprintf("html %d (%d gzipped)", len(pg.body), zipped)
	for _, m := range regexp.MustCompile(`(?:href|src)="(/assets/[^"]+)"`).FindAllStringSubmatch(pg.body, -1) {
		resp, err := http.Get(e.url + m[1])
		require.NoError(t, err)
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode, m[1])
		require.Contains(t, resp.Header.Get("Cache-Control"), "immutable")
		total, zipped = total+len(b), zipped+gzipped(string(b))
		report += fmt.Sprintf(", %s %d (%d gzipped)", m[1], len(b), gzipped(string(b)))
	}
	t.Logf("checkout page weight: %d bytes, %d gzipped: %s", total, zipped, report)
	require.Less(t, total, 64<<10, "the checkout page grew past 64 KiB")
}

func gzipped(s string) int {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	_, _ = io.WriteString(w, s)
	_ = w.Close()
	return b.Len()
}
