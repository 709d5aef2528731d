package server_test

import (
	"encoding/csv"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/cabinet"
	"github.com/paygate/paygate/internal/money"
	"github.com/paygate/paygate/internal/payment"
	"github.com/paygate/paygate/internal/reconcile"
	"github.com/paygate/paygate/internal/store/storetest"
)

// seedBreaks stores a finished reconciliation of the account "sandbox"
// (the keys' channels are on it) for day, with a break of each kind for
// the first of ps, in order, plus the given others: the reconciler's result
// as it stores it, without running it.
func seedBreaks(t *testing.T, e *env, day time.Time, ps []*payment.Payment, others ...reconcile.Break) []reconcile.Break {
	t.Helper()
	at := day.Add(9*time.Hour + 41*time.Minute + 7*time.Second)
	sd := func(kind string, amount int64, currency string, at time.Time, ref string) *reconcile.Side {
		return &reconcile.Side{Kind: kind, AmountMinor: amount, Currency: currency, At: at, Ref: ref}
	}
	var bs []reconcile.Break
	for i, p := range ps {
		b := reconcile.Break{Key: uuid.NewString(), PaymentID: p.ID, AccessKeyID: p.AccessKeyID,
			Paygate: sd("charge", p.AmountMinor, p.Currency, at.Add(time.Duration(i)*37*time.Minute), "")}
		theirs := sd("charge", p.AmountMinor, p.Currency, b.Paygate.At.Add(2*time.Second), "ch_3Q"+strings.ToUpper(b.Key[:8]))
		switch i % 5 {
		case 0:
			b.Kind = reconcile.AmountMismatch
			theirs.AmountMinor -= 100
		case 1:
			b.Kind = reconcile.MissingAtProvider
			theirs = nil
		case 2:
			b.Kind = reconcile.StatusMismatch
			b.Paygate.Kind, theirs.Kind = "capture", "hold"
		case 3:
			b.Kind = reconcile.DuplicateAtProvider
		case 4:
			b.Kind = reconcile.CurrencyMismatch
			theirs.Currency = "EUR"
		}
		b.Provider = theirs
		bs = append(bs, b)
	}
	finished := day.Add(27 * time.Hour)
	storetest.PlantReconciliation(t, e.store, storetest.Run{Account: "sandbox", Day: day.Format(time.DateOnly),
		StartedAt: finished.Add(-time.Minute), FinishedAt: &finished, Paygate: 7919, AtProvider: 7907, Matched: 7877},
		append(bs, others...)...)
	return bs
}

// TestBrowserCabinetReconciliation drives the reconciliation pages in
// Chromium on both databases (docs/reconciliation.md, "In the cabinet"):
// from the navigation to the list, a day's page with its breaks, a break's
// payment, the downloaded CSV; key B's break and an orphan on the same
// account are never shown; a day not reconciled and a bad day are clear
// pages.
func TestBrowserCabinetReconciliation(t *testing.T) {
	each(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{})
		ctx := newTab(t)
		rnd := rand.New(rand.NewPCG(27, 4))
		mine := seedPayments(t, e, e.aKey.ID, 3, rnd)
		theirs := seedPayments(t, e, e.bKey.ID, 1, rnd)
		day := time.Date(2026, 1, 15, 0, 0, 0, 0, time.UTC)
		other := reconcile.Break{Kind: reconcile.MissingAtProvider, Key: uuid.NewString(), PaymentID: theirs[0].ID,
			AccessKeyID: e.bKey.ID, Paygate: &reconcile.Side{Kind: "charge", AmountMinor: 5, Currency: "USD", At: day}}
		orphan := reconcile.Break{Kind: reconcile.MissingInPaygate,
			Provider: &reconcile.Side{Kind: "charge", AmountMinor: 5, Currency: "USD", At: day, Ref: "ch_orphan"}}
		bs := seedBreaks(t, e, day, mine, other, orphan)

		run(t, ctx, noScript())
		e.setUpInBrowser(t, ctx, "ada@example.com", cabinet.Viewer, e.aKey.ID)
		run(t, ctx, chromedp.Click(chromedp.CSS(`nav a[href^="/cabinet/reconciliation"]`)),
			chromedp.WaitVisible(chromedp.CSS("#runs")))
		require.Equal(t, "Reconciliation", text(t, ctx, "h1"))
		require.Equal(t, []string{"2026-01-15"}, cells(t, ctx, 0))
		require.Equal(t, []string{"sandbox"}, cells(t, ctx, 1))
		require.Equal(t, []string{"3"}, cells(t, ctx, 3))

		run(t, ctx, chromedp.Click(chromedp.CSS(`#runs tbody a`)), chromedp.WaitVisible(chromedp.CSS("#breaks")))
		require.Equal(t, "Reconciliation of sandbox, 2026-01-15", text(t, ctx, "h1"))
		require.Equal(t, "3", text(t, ctx, "#total"))
		kinds := eval[[]string](t, ctx, `Array.from(document.querySelectorAll("#breaks tbody tr")).map(r => r.dataset.kind)`)
		require.Equal(t, []string{reconcile.AmountMismatch, reconcile.MissingAtProvider, reconcile.StatusMismatch}, kinds)
		// Both sides of the amount mismatch, and the acquirer's ref.
		require.Contains(t, eval[string](t, ctx, `document.querySelector("#breaks tbody tr td[data-paygate]").innerText`),
			money.Format(mine[0].AmountMinor, mine[0].Currency))
		require.Contains(t, eval[string](t, ctx, `document.querySelector("#breaks tbody tr td[data-acquirer]").innerText`),
			money.Format(mine[0].AmountMinor-100, mine[0].Currency))
		require.Equal(t, bs[0].Provider.Ref, eval[string](t, ctx, `document.querySelector("#breaks tbody tr").cells[4].innerText`))
		page := text(t, ctx, "body")
		for _, hidden := range []string{theirs[0].ID, other.Key, "ch_orphan", "7919", "7907", "7877"} {
			require.NotContains(t, page, hidden)
		}

		// The CSV is the page's breaks.
		rows, err := csv.NewReader(strings.NewReader(string(download(t, ctx, "#csv")))).ReadAll()
		require.NoError(t, err)
		require.Len(t, rows, 4)
		for i, b := range bs {
			require.Equal(t, []string{"sandbox", "2026-01-15", b.Kind, b.Key, "payment", b.PaymentID},
				[]string{rows[i+1][0], rows[i+1][1], rows[i+1][3], rows[i+1][4], rows[i+1][5], rows[i+1][6]})
		}

		// A break's payment opens its page.
		run(t, ctx, chromedp.Click(chromedp.CSS(`#breaks tbody tr a[href^="/cabinet/payments/"]`)),
			chromedp.WaitVisible(chromedp.CSS("dl")))
		require.Equal(t, mine[0].ID, text(t, ctx, "dl code"))

		// A day not reconciled, and a bad day.
		run(t, ctx, chromedp.Navigate(e.url+"/cabinet/reconciliation/sandbox/2026-01-14"), chromedp.WaitVisible(chromedp.CSS("h1")))
		require.Equal(t, "Not found", text(t, ctx, "h1"))
		run(t, ctx, chromedp.Navigate(e.url+"/cabinet/reconciliation/sandbox/2026-01-32"), chromedp.WaitVisible(chromedp.CSS("h1")))
		require.Equal(t, "Bad link", text(t, ctx, "h1"))
		require.Contains(t, text(t, ctx, "body"), "YYYY-MM-DD")
	})
}
