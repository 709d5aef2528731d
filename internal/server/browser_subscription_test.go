package server_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/openapi"
	"github.com/paygate/paygate/internal/payment"
	"github.com/paygate/paygate/internal/store/storetest"
)

// consentTerms are monthly subscription terms that ask the payer for the
// separate consent box (consent: true), first due at first.
func consentTerms(first time.Time) string {
	return fmt.Sprintf(`,"customer_reference":"browser-subscriber","subscription":{"interval_unit":"month",
		"interval_count":1,"first_charge_at":%q,"disclosure_version":"tea-club-2026","consent":true}`,
		first.UTC().Format(time.RFC3339))
}

// TestSubscriptionConsentInBrowser gives consent on the hosted page in
// real Chromium, then lets the key's sandbox clock reach the first charge
// (docs/subscriptions.md, "Mandates"; docs/design/decisions.md sections 5
// and 14): paying without ticking the box is refused on the box; ticked,
// the payment succeeds, the mandate is active with the hosted page's
// evidence, and advancing the clock to first_charge_at charges period 0
// once.
func TestSubscriptionConsentInBrowser(t *testing.T) {
	each(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{work: true})
		ctx := context.Background()
		shop := newShop(t)
		first := e.clock.Now().Add(3 * 24 * time.Hour)
		s := e.session(t, fmt.Sprintf(`,"return_url":%q`, shop.URL+"/thanks")+consentTerms(first))
		require.NotEmpty(t, s.MandateID)
		require.Equal(t, "incomplete", e.subscription(e.a, s.SubscriptionID).Status)

		tab := newTab(t)
		run(t, tab, chromedp.Navigate(e.url+"/checkout/"+s.SessionID))
		require.Contains(t, text(t, tab, ".terms"), "every month")
		require.False(t, eval[bool](t, tab, `document.getElementById("consent").checked`), "never ticked in advance")

		// Without the box: refused on the box, nothing charged.
		run(t, tab, typeCard("4242424242424242"), pay(), chromedp.WaitVisible(chromedp.CSS("#consent-error")))
		require.Contains(t, text(t, tab, "#consent-error"), "Tick the box to agree to the recurring payments.")
		require.Equal(t, "true", eval[string](t, tab, `document.getElementById("consent").getAttribute("aria-invalid")`))
		require.Equal(t, "awaiting_payment_data", e.payment(t, s.PaymentID).Status)
		require.Zero(t, chargesFor(e, s.PaymentID))

		// Ticked: paid, and back at the shop.
		run(t, tab, chromedp.Click(chromedp.CSS("#consent")), pay())
		id, status := awaitShop(t, tab)
		require.Equal(t, s.PaymentID, id)
		require.Equal(t, "succeeded", status)
		p := e.payment(t, s.PaymentID)
		require.Equal(t, "succeeded", p.Status)
		require.NotEmpty(t, p.SavedCardID, "the terms save the card")
		require.Equal(t, 1, chargesFor(e, s.PaymentID))

		var m openapi.Mandate
		require.NoError(t, e.a.JSON(ctx, "GET", "/api/v1/mandates/"+p.MandateID, nil, &m))
		require.Equal(t, "active", m.Status)
		require.Equal(t, s.PaymentID, m.PaymentID)
		require.Equal(t, "tea-club-2026", m.DisclosureVersion)
		require.Equal(t, "browser-subscriber", m.CustomerReference)
		require.Equal(t, p.SavedCardID, m.SavedCardID)
		require.Equal(t, "424242******4242", m.CardMask)
		require.NotNil(t, m.Consent)
		require.Equal(t, "hosted_page", m.Consent.Channel)
		require.True(t, m.Consent.ConsentBox)
		require.Contains(t, m.Consent.UserAgent, "Chrome", "the payer's browser")
		require.NotEmpty(t, m.Consent.PayerIP)
		require.False(t, m.ConsentAt.IsZero())
		require.False(t, m.ConsentAt.Std().After(p.UpdatedAt.Std()), "consent came with the submission")

		sub := e.subscription(e.a, s.SubscriptionID)
		require.Equal(t, "active", sub.Status)
		require.Equal(t, first.UTC(), sub.NextRunAt.Std().UTC())
		require.Equal(t, int64(1999), sub.AmountMinor)

		// The key's clock to first_charge_at: period 0, charged once.
		out := e.advance(e.a, first)
		require.Equal(t, map[string]int{"subscription_charges": 1, "retries": 0, "expirations": 0}, out.Ran)
		charges := e.charges(e.aKey.ID, sub.ID)
		require.Len(t, charges, 1)
		c := charges[0]
		require.Equal(t, int64(0), *c.SubscriptionPeriod)
		require.Equal(t, 0, c.SubscriptionAttempt)
		require.Equal(t, payment.Succeeded, c.Status)
		require.Equal(t, payment.KindRecurring, c.Kind)
		require.Equal(t, p.SavedCardID, c.SavedCardID)
		require.Equal(t, first.UTC(), c.CreatedAt.UTC(), "charged at its own time")
		require.Equal(t, 1, chargesFor(e, c.ID), "one charge in the acquirer's ledger")
		sub = e.subscription(e.a, sub.ID)
		require.Equal(t, int64(1), sub.NextPeriod)
		require.Equal(t, first.AddDate(0, 1, 0).UTC(), sub.NextRunAt.Std().UTC())
	})
}

// TestConsentScreenshot saves the consent box as the payer sees it after
// paying without ticking it, for docs/subscriptions.md
// (docs/images/checkout-consent.png). It runs when PAYGATE_SCREENSHOTS=1:
//
//	PAYGATE_SCREENSHOTS=1 go test ./internal/server -run TestConsentScreenshot
func TestConsentScreenshot(t *testing.T) {
	if os.Getenv("PAYGATE_SCREENSHOTS") != "1" {
		t.Skip("set PAYGATE_SCREENSHOTS=1 to save docs/images/checkout-consent.png")
	}
	e := newEnv(t, storetest.Databases(t)[0], options{})
	s := createSession(t, e.a, screenshotSession)
	tab := newTab(t)
	run(t, tab, chromedp.EmulateViewport(640, 900, chromedp.EmulateScale(2)),
		chromedp.Navigate(e.url+"/checkout/"+s.SessionID), typeCard("4242424242424242"), pay(),
		chromedp.WaitVisible(chromedp.CSS("#consent-error")))
	png, err := chromedp.Run(tab, chromedp.Screenshot(chromedp.CSS(".consent")))
	require.NoError(t, err)
	path := filepath.Join("..", "..", "docs", "images", "checkout-consent.png")
	require.NoError(t, os.WriteFile(path, png, 0o644))
	t.Logf("%s: %d bytes", path, len(png))
}
