package server_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/cabinet"
	"github.com/paygate/paygate/internal/payment"
	"github.com/paygate/paygate/internal/store"
	"github.com/paygate/paygate/internal/store/storetest"
	"github.com/paygate/paygate/internal/webhook"
)

// seedMonth stores n payments of the key spread over the last 30 days, in
// the mix of statuses a shop sees, for the screenshots' chart.
func seedMonth(t *testing.T, e *env, keyID string, n int) {
	t.Helper()
	ctx := context.Background()
	chs, err := e.store.ChannelsForKey(ctx, keyID)
	require.NoError(t, err)
	rnd := rand.New(rand.NewPCG(4, 2))
	now := e.clock.Now().UTC()
	mix := []payment.Status{payment.Succeeded, payment.Succeeded, payment.Succeeded, payment.Succeeded,
		payment.Succeeded, payment.Declined, payment.Refunded, payment.Failed, payment.Authorized, payment.Expired}
	items := []string{"Tea club, monthly box", "Gift card", "Sencha 100 g", "Oolong sampler", "Teapot, cast iron"}
	require.NoError(t, e.store.InTx(ctx, func(tx *store.Tx) error {
		for i := range n {
			at := now.Add(-time.Duration(rnd.Int64N(int64(30 * 24 * time.Hour))))
			status := mix[rnd.IntN(len(mix))]
			amount := int64(500 + 100*rnd.IntN(120))
			p := &payment.Payment{ID: uuid.Must(uuid.NewV7()).String(), AccessKeyID: keyID, ChannelID: chs[0].ID,
				Kind: payment.KindDirect, Status: status, OrderID: fmt.Sprintf("%d", 10000+i), AmountMinor: amount,
				Currency: "USD", Description: items[rnd.IntN(len(items))], CustomerReference: fmt.Sprintf("customer-%03d", rnd.IntN(300)),
				Locale: "en", OperationMode: payment.ModeCharge, Method: "card", MaskedCard: "424242******4242",
				CardScheme: "visa", CreatedAt: at, UpdatedAt: at}
			switch status {
			case payment.Succeeded:
				p.CapturedAmountMinor = amount
			case payment.Refunded:
				p.CapturedAmountMinor, p.RefundedAmountMinor = amount, amount
			case payment.Declined:
				p.DeclineCode, p.DeclineMessage = "insufficient_funds", "Insufficient funds"
			}
			if err := tx.CreatePayment(ctx, p); err != nil {
				return err
			}
		}
		return nil
	}))
}

// TestCabinetScreenshots saves the cabinet's pages as docs/images/cabinet-*.png
// (docs/cabinet.md and the README show them). It runs when
// PAYGATE_SCREENSHOTS=1:
//
//	PAYGATE_SCREENSHOTS=1 go test ./internal/server -run TestCabinetScreenshots
func TestCabinetScreenshots(t *testing.T) {
	if os.Getenv("PAYGATE_SCREENSHOTS") != "1" {
		t.Skip("set PAYGATE_SCREENSHOTS=1 to save docs/images/cabinet-*.png")
	}
	e := newEnv(t, storetest.Databases(t)[0], options{work: true})
	rc := newReceiver(t, ok)
	e.addEndpoint(e.a, rc.URL)
	paid := e.direct(e.a, orderBody("10999", "customer-042"))
	seedMonth(t, e, e.aKey.ID, 900)
	for _, ref := range []string{"customer-042", "customer-107", "customer-288"} {
		savedCard(t, e, e.aKey.ID, ref)
	}
	// Yesterday's reconciliation of the account, with a break of each kind
	// for some of the key's payments.
	recent, err := e.store.ListPayments(context.Background(), e.aKey.ID, payment.Filter{Limit: 7})
	require.NoError(t, err)
	yesterday := e.clock.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, -1)
	seedBreaks(t, e, yesterday, recent)
	seedBreaks(t, e, yesterday.AddDate(0, 0, -1), nil)
	seedBreaks(t, e, yesterday.AddDate(0, 0, -2), recent[:1])
	events, err := e.store.ListEvents(context.Background(), e.aKey.ID, webhook.EventFilter{ResourceID: paid.PaymentID, Limit: 1})
	require.NoError(t, err)
	require.NotEmpty(t, events)
	e.await(time.Second, e.deliveryIs(events[0].ID, webhook.Succeeded))

	shots := []struct {
		name, path string
		w, h       int64
		mobile     bool
		scrollTo   string // a selector to scroll into view, or ""
	}{
		{"payments-desktop", "/cabinet/payments", 1280, 900, false, ""},
		{"payments-phone", "/cabinet/payments", 390, 844, true, ""},
		{"payments-phone-list", "/cabinet/payments", 390, 844, true, "figure"},
		{"payment", "/cabinet/payments/" + paid.PaymentID, 1280, 900, false, ""},
		{"totals", "/cabinet/payments/totals", 1280, 500, false, ""},
		{"cards", "/cabinet/cards", 1280, 600, false, ""},
		{"events", "/cabinet/events", 1280, 700, false, ""},
		{"event", "/cabinet/events/" + events[0].ID, 1280, 900, false, ""},
		{"event-phone", "/cabinet/events/" + events[0].ID, 390, 844, true, "#payload"},
		{"reconciliation", "/cabinet/reconciliation", 1280, 500, false, ""},
		{"reconciliation-day", "/cabinet/reconciliation/sandbox/" + yesterday.Format(time.DateOnly), 1280, 1000, false, ""},
	}
	ctx := newTab(t)
	// The sign-in page, before the tab signs in.
	run(t, ctx, chromedp.EmulateViewport(1280, 700, chromedp.EmulateScale(1)), chromedp.Navigate(e.url+"/cabinet/sign-in"),
		chromedp.WaitVisible(chromedp.CSS("#email")))
	shot(t, ctx, "sign-in")
	e.setUpInBrowser(t, ctx, "ada@example.com", cabinet.Admin, e.aKey.ID)
	for _, s := range shots {
		opts := []chromedp.EmulateViewportOption{chromedp.EmulateScale(1)}
		if s.mobile {
			opts = []chromedp.EmulateViewportOption{chromedp.EmulateScale(2), chromedp.EmulatePortrait,
				chromedp.EmulateMobile, chromedp.EmulateTouch}
		}
		run(t, ctx, chromedp.EmulateViewport(s.w, s.h, opts...), chromedp.Navigate(e.url+s.path),
			chromedp.WaitVisible(chromedp.CSS("h1")))
		if s.scrollTo != "" {
			_, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelector(`+jsString(s.scrollTo)+`).scrollIntoView(); true`))
			require.NoError(t, err)
		}
		shot(t, ctx, s.name)
	}
}

// shot saves the tab's viewport as docs/images/cabinet-NAME.png.
func shot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	require.NoError(t, err)
	path := filepath.Join("..", "..", "docs", "images", "cabinet-"+name+".png")
	require.NoError(t, os.WriteFile(path, png, 0o644))
	t.Logf("%s: %d bytes", path, len(png))
}
