package pages_test

import (
	"encoding/csv"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/cabinet"
	"github.com/paygate/paygate/internal/payment"
	"github.com/paygate/paygate/internal/reconcile"
	"github.com/paygate/paygate/internal/store/storetest"
)

// side is one side of a planted break.
func side(kind string, amount int64, at time.Time, ref string) *reconcile.Side {
	return &reconcile.Side{Kind: kind, AmountMinor: amount, Currency: "USD", At: at, Ref: ref}
}

// TestReconciliationPages drives the reconciliation pages and their CSV
// (docs/reconciliation.md, "In the cabinet") over stored runs on both
// databases: two keys on one acquirer account each see their own breaks
// and never the other's nor an orphan, nor the account's own counts;
// both sides of a break, linked to its payment or payout; the CSV's rows,
// escaped; pages of breaks; a day not reconciled, another account's day
// and a running day; bad and hostile links are 400 or 404 pages, never a
// 500.
func TestReconciliationPages(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{})
		// Both keys' channels are on the account "sandbox".
		paid := e.payment(t, e.a, nil)
		po := e.payout(t, e.a, nil)
		theirs := e.payment(t, e.b, func(p *payment.Payment) { p.OrderID = "theirs" })
		at := time.Date(2026, 1, 15, 10, 30, 5, 0, time.UTC)
		finished := at.Add(14 * time.Hour)
		amount := reconcile.Break{Kind: reconcile.AmountMismatch, Key: uuid.NewString(), PaymentID: paid.ID,
			AccessKeyID: e.a.ID, Paygate: side("charge", 1234, at, ""), Provider: side("charge", 1200, at.Add(time.Second), "=HYPERLINK(\"x\")")}
		missing := reconcile.Break{Kind: reconcile.MissingAtProvider, Key: uuid.NewString(), PaymentID: po.ID,
			AccessKeyID: e.a.ID, Paygate: side("transfer", 500, at, "")}
		other := reconcile.Break{Kind: reconcile.StatusMismatch, Key: uuid.NewString(), PaymentID: theirs.ID,
			AccessKeyID: e.b.ID, Paygate: side("capture", 900, at, ""), Provider: side("hold", 900, at, "ch_theirs")}
		orphan := reconcile.Break{Kind: reconcile.MissingInPaygate, Provider: side("charge", 777, at, "ch_orphan")}
		storetest.PlantReconciliation(t, e.store, storetest.Run{Account: "sandbox", Day: "2026-01-15", StartedAt: finished,
			FinishedAt: &finished, Paygate: 7919, AtProvider: 7907, Matched: 7877, Pending: 7883, Fee: 7901},
			amount, orphan, other, missing)
		storetest.PlantReconciliation(t, e.store, storetest.Run{Account: "sandbox", Day: "2026-01-16", StartedAt: finished,
			FinishedAt: &finished}, other)
		storetest.PlantReconciliation(t, e.store, storetest.Run{Account: "sandbox", Day: "2026-01-17", Status: "running",
			StartedAt: finished})
		// An account neither key's channels are on.
		storetest.PlantReconciliation(t, e.store, storetest.Run{Account: "elsewhere", Day: "2026-01-15", StartedAt: finished,
			FinishedAt: &finished}, orphan)
		ann := e.signedIn(t, "ann@example.com", cabinet.Viewer, e.a)
		bea := e.signedIn(t, "bea@example.com", cabinet.Viewer, e.b)

		// What a user must never see on any of these pages: the other
		// key's payment and break, the orphan, the account's figures.
		notShown := func(t *testing.T, body string, hidden ...string) {
			t.Helper()
			for _, s := range append(hidden, "ch_orphan", "7919", "7907", "7877", "7883", "79.01", "elsewhere") {
				require.False(t, strings.Contains(body, s), "%q is shown", s)
			}
		}

		t.Run("the list: the key's account's days and its breaks by kind", func(t *testing.T) {
			a := ann.get("/cabinet/reconciliation")
			require.Equal(t, http.StatusOK, a.status, a.body)
			require.Contains(t, a.body, `<tr data-run="sandbox/2026-01-15" data-breaks="2">`)
			require.Contains(t, a.body, `<tr data-run="sandbox/2026-01-16" data-breaks="0">`)
			require.Contains(t, a.body, `data-run="sandbox/2026-01-17"`)
			require.Contains(t, a.body, `href="/cabinet/reconciliation/sandbox/2026-01-15"`)
			require.Contains(t, a.body, `<span class="dot" data-kind="amount_mismatch">amount_mismatch 1</span>`)
			require.Contains(t, a.body, `<span class="dot" data-kind="missing_at_provider">missing_at_provider 1</span>`)
			require.Less(t, strings.Index(a.body, "2026-01-17"), strings.Index(a.body, "2026-01-15"), "newest first")
			require.Contains(t, a.body, `href="/cabinet/reconciliation" aria-current="page">Reconciliation</a>`)
			notShown(t, a.body, theirs.ID, "status_mismatch 1")

			b := bea.get("/cabinet/reconciliation")
			require.Contains(t, b.body, `<tr data-run="sandbox/2026-01-15" data-breaks="1">`)
			require.Contains(t, b.body, `<tr data-run="sandbox/2026-01-16" data-breaks="1">`)
			notShown(t, b.body, paid.ID, "amount_mismatch 1")
		})

		t.Run("a day: the key's breaks, both sides, linked", func(t *testing.T) {
			a := ann.get("/cabinet/reconciliation/sandbox/2026-01-15")
			require.Equal(t, http.StatusOK, a.status, a.body)
			require.Contains(t, a.body, `<span id="total">2</span>`)
			require.Contains(t, a.body, `<tr data-seq="1" data-kind="amount_mismatch" data-resource="`+paid.ID+`">`)
			require.Contains(t, a.body, `<a href="/cabinet/payments/`+paid.ID+`">`)
			require.Contains(t, a.body, `<tr data-seq="4" data-kind="missing_at_provider" data-resource="`+po.ID+`">`)
			require.Contains(t, a.body, `<a href="/cabinet/payouts/`+po.ID+`">`)
			require.Contains(t, a.body, "USD 12.34")
			require.Contains(t, a.body, "USD 12.00")
			require.Contains(t, a.body, "2026-01-15 10:30:06")
			require.Contains(t, a.body, amount.Key)
			require.Contains(t, a.body, "=HYPERLINK(&#34;x&#34;)")
			require.Contains(t, a.body, `href="/cabinet/reconciliation/sandbox/2026-01-15/breaks.csv"`)
			notShown(t, a.body, theirs.ID, other.Key)

			b := bea.get("/cabinet/reconciliation/sandbox/2026-01-15")
			require.Equal(t, http.StatusOK, b.status)
			require.Contains(t, b.body, `<span id="total">1</span>`)
			require.Contains(t, b.body, "ch_theirs")
			notShown(t, b.body, paid.ID, po.ID, amount.Key)

			clean := ann.get("/cabinet/reconciliation/sandbox/2026-01-16")
			require.Equal(t, http.StatusOK, clean.status)
			require.Contains(t, clean.body, "No break of this key on this day.")
			require.NotContains(t, clean.body, "breaks.csv")
			notShown(t, clean.body, theirs.ID)

			running := ann.get("/cabinet/reconciliation/sandbox/2026-01-17")
			require.Equal(t, http.StatusOK, running.status)
			require.Contains(t, running.body, "being reconciled now")
			require.Equal(t, http.StatusNotFound, ann.get("/cabinet/reconciliation/sandbox/2026-01-17/breaks.csv").status)
		})

		t.Run("the CSV: the key's breaks, escaped", func(t *testing.T) {
			a := ann.get("/cabinet/reconciliation/sandbox/2026-01-15/breaks.csv")
			require.Equal(t, http.StatusOK, a.status, a.body)
			require.Equal(t, "text/csv; charset=utf-8", a.header.Get("Content-Type"))
			require.Equal(t, `attachment; filename="reconciliation-sandbox-2026-01-15.csv"`, a.header.Get("Content-Disposition"))
			require.Equal(t, "no-store", a.header.Get("Cache-Control"))
			rows, err := csv.NewReader(strings.NewReader(a.body)).ReadAll()
			require.NoError(t, err)
			require.Equal(t, [][]string{
				{"account", "day", "seq", "kind", "operation_id", "resource", "resource_id", "paygate_kind", "paygate_amount_minor",
					"paygate_currency", "paygate_at", "provider_kind", "provider_amount_minor", "provider_currency", "provider_at", "provider_ref"},
				{"sandbox", "2026-01-15", "1", "amount_mismatch", amount.Key, "payment", paid.ID, "charge", "1234", "USD",
					"2026-01-15T10:30:05Z", "charge", "1200", "USD", "2026-01-15T10:30:06Z", `'=HYPERLINK("x")`},
				{"sandbox", "2026-01-15", "4", "missing_at_provider", missing.Key, "payout", po.ID, "transfer", "500", "USD",
					"2026-01-15T10:30:05Z", "", "", "", "", ""},
			}, rows)
			notShown(t, a.body, theirs.ID)

			b := bea.get("/cabinet/reconciliation/sandbox/2026-01-16/breaks.csv")
			rows, err = csv.NewReader(strings.NewReader(b.body)).ReadAll()
			require.NoError(t, err)
			require.Len(t, rows, 2)
			require.Equal(t, theirs.ID, rows[1][6])
			clean := ann.get("/cabinet/reconciliation/sandbox/2026-01-16/breaks.csv")
			require.Equal(t, http.StatusOK, clean.status)
			require.Equal(t, 1, strings.Count(clean.body, "\n"), "the header row alone")
		})

		t.Run("a day the key does not see is a 404 page", func(t *testing.T) {
			for _, path := range []string{"/cabinet/reconciliation/sandbox/2026-01-14", "/cabinet/reconciliation/elsewhere/2026-01-15",
				"/cabinet/reconciliation/elsewhere/2026-01-15/breaks.csv", "/cabinet/reconciliation/nobody/2026-01-15",
				"/cabinet/reconciliation/sandbox/2026-01-15?key=" + e.b.ID,
				"/cabinet/reconciliation/sandbox/2026-01-15/breaks.csv?key=" + e.b.ID} {
				a := ann.get(path)
				require.Equal(t, http.StatusNotFound, a.status, path)
				require.Contains(t, a.body, "<h1>Not found</h1>", path)
				notShown(t, a.body, theirs.ID, paid.ID)
			}
			require.Contains(t, ann.get("/cabinet/reconciliation/sandbox/2026-01-14").body,
				"No reconciliation of this acquirer account on this day among your key&#39;s.")
		})

		t.Run("bad and hostile links are 400 or 404 pages", func(t *testing.T) {
			for path, want := range map[string]int{
				"/cabinet/reconciliation/sandbox/2026-13-01":                         http.StatusBadRequest,
				"/cabinet/reconciliation/sandbox/2026-02-30":                         http.StatusBadRequest,
				"/cabinet/reconciliation/sandbox/2026-1-5":                           http.StatusBadRequest,
				"/cabinet/reconciliation/sandbox/20260115":                           http.StatusBadRequest,
				"/cabinet/reconciliation/sandbox/2026-01-15%00":                      http.StatusBadRequest,
				"/cabinet/reconciliation/sandbox/%27%20OR%201=1--/breaks.csv":        http.StatusBadRequest,
				"/cabinet/reconciliation/sand%00box/2026-01-15":                      http.StatusBadRequest,
				"/cabinet/reconciliation/sand%FFbox/2026-01-15":                      http.StatusBadRequest,
				"/cabinet/reconciliation/" + strings.Repeat("a", 65) + "/2026-01-15": http.StatusBadRequest,
				"/cabinet/reconciliation/%27%20OR%20%271%27=%271/2026-01-15":         http.StatusNotFound,
				"/cabinet/reconciliation/%3Cscript%3E/2026-01-15":                    http.StatusNotFound,
				"/cabinet/reconciliation/sandbox%2F..%2F..%2Fetc/2026-01-15":         http.StatusNotFound,
				"/cabinet/reconciliation?after=nonsense":                             http.StatusBadRequest,
				"/cabinet/reconciliation?after=2026-01-15":                           http.StatusBadRequest,
				"/cabinet/reconciliation?after=2026-01-15_%00":                       http.StatusBadRequest,
				"/cabinet/reconciliation/sandbox/2026-01-15?after=-1":                http.StatusBadRequest,
				"/cabinet/reconciliation/sandbox/2026-01-15?after=x":                 http.StatusBadRequest,
			} {
				a := ann.get(path)
				require.Equal(t, want, a.status, "%s: %s", path, a.body)
				require.NotContains(t, a.body, "<script>", path)
			}
			a := ann.get("/cabinet/reconciliation/sandbox/2026-13-01")
			require.Contains(t, a.body, "A reconciled day is written YYYY-MM-DD (UTC)")
		})

		t.Run("pages of breaks", func(t *testing.T) {
			var many []reconcile.Break
			for i := range 53 {
				many = append(many, reconcile.Break{Kind: reconcile.MissingAtProvider, Key: fmt.Sprintf("op-%02d", i),
					PaymentID: paid.ID, AccessKeyID: e.a.ID, Paygate: side("charge", 100, at, "")})
				if i%10 == 0 {
					many = append(many, other)
				}
			}
			storetest.PlantReconciliation(t, e.store, storetest.Run{Account: "sandbox", Day: "2026-01-10", StartedAt: finished,
				FinishedAt: &finished}, many...)
			first := ann.get("/cabinet/reconciliation/sandbox/2026-01-10")
			require.Equal(t, http.StatusOK, first.status)
			require.Contains(t, first.body, `<span id="total">53</span>`)
			require.Equal(t, 50, strings.Count(first.body, "<tr data-seq="))
			require.Contains(t, first.body, "op-49")
			require.NotContains(t, first.body, "op-50")
			// The 50th of the key's breaks is the run's 55th (five of key B's
			// come before it).
			require.Contains(t, first.body, `href="/cabinet/reconciliation/sandbox/2026-01-10?after=55" rel="next"`)
			second := ann.get("/cabinet/reconciliation/sandbox/2026-01-10?after=55")
			require.Equal(t, 3, strings.Count(second.body, "<tr data-seq="))
			require.Contains(t, second.body, "op-52")
			require.NotContains(t, second.body, `rel="next"`)
			rows, err := csv.NewReader(strings.NewReader(ann.get("/cabinet/reconciliation/sandbox/2026-01-10/breaks.csv").body)).ReadAll()
			require.NoError(t, err)
			require.Len(t, rows, 54)
		})
	})
}
