package server_test

import (
	"encoding/json"
	"html"
	"io"
	"math/rand/v2"
	"net/http"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/client"
	"github.com/paygate/paygate/internal/money"
	"github.com/paygate/paygate/internal/openapi"
	"github.com/paygate/paygate/internal/store"
	"github.com/paygate/paygate/internal/store/storetest"
)

var totalsRowRE = regexp.MustCompile(`<tr data-currency="([A-Z]{3})"><td>[A-Z]{3}</td><td class="num" data-count="(\d+)">\d+</td><td class="num">(\d+)</td><td class="num">([^<]*)</td><td class="num">([^<]*)</td><td class="num">([^<]*)</td><td class="num">(\d+)</td></tr>`)

// TestCabinetPaymentsExportAndTotals checks the payments page's export and
// totals on both databases (docs/cabinet.md, "Exports and totals"): for
// each filter of the page, the downloaded CSV is byte for byte the signed
// export with the same filters, across several of its pages, and the totals
// page shows the signed totals; the links on the payments page carry the
// filters; another key's data is never reachable; no session, no CSV.
func TestCabinetPaymentsExportAndTotals(t *testing.T) {
	each(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{})
		rnd := rand.New(rand.NewPCG(14, 3))
		seedPayments(t, e, e.aKey.ID, 1100, rnd) // more than two of the export's pages
		seedPayments(t, e, e.bKey.ID, 40, rnd)
		ann := e.signedInStaff(t, "ann@example.com", e.aKey.ID) // a viewer may export

		today := e.clock.Now().UTC().Format("2006-01-02")
		dayAfter := e.clock.Now().UTC().AddDate(0, 0, 1).Format("2006-01-02")
		cases := []struct{ page, api string }{
			{"", ""},
			{"status=succeeded", "status=succeeded"},
			{"status=declined&from=" + today + "&to=" + today,
				"status=declined&created_gte=" + today + "T00:00:00Z&created_lt=" + dayAfter + "T00:00:00Z"},
			{"q=ord-3", "order_id=ord-3"},
			{"q=cust-2&status=refunded", "customer_reference=cust-2&status=refunded"},
			{"from=" + dayAfter, "created_gte=" + dayAfter + "T00:00:00Z"},
		}
		for _, c := range cases {
			// The page links its export and totals with its filters.
			status, body, _ := ann.get(e.url + "/cabinet/payments?" + c.page)
			require.Equal(t, http.StatusOK, status, c.page)
			link := regexp.MustCompile(`id="export" href="([^"]+)"`).FindStringSubmatch(body)
			require.NotNil(t, link, c.page)
			resp, err := ann.c.Get(e.url + html.UnescapeString(link[1]))
			require.NoError(t, err)
			got, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			require.NoError(t, err)
			require.Equal(t, http.StatusOK, resp.StatusCode, c.page)
			require.Equal(t, "text/csv; charset=utf-8", resp.Header.Get("Content-Type"))
			require.Contains(t, resp.Header.Get("Content-Disposition"), "attachment")

			want := exportCSV(t, e.a, "?"+c.api)
			require.Equal(t, http.StatusOK, want.Status)
			require.Equal(t, string(want.Body), string(got), "page filter %q", c.page)

			link = regexp.MustCompile(`id="totals" href="([^"]+)"`).FindStringSubmatch(body)
			require.NotNil(t, link, c.page)
			status, body, _ = ann.get(e.url + html.UnescapeString(link[1]))
			require.Equal(t, http.StatusOK, status, c.page)
			resp2, err := e.a.Do(t.Context(), client.Request{Method: "GET", Target: "/cabinet/v1/payments/totals?" + c.api})
			require.NoError(t, err)
			require.Equal(t, http.StatusOK, resp2.Status)
			var totals openapi.PaymentTotals
			require.NoError(t, json.Unmarshal(resp2.Body, &totals))
			rows := totalsRowRE.FindAllStringSubmatch(body, -1)
			require.Len(t, rows, len(totals.Items), "page filter %q: %s", c.page, body)
			for i, it := range totals.Items {
				r := rows[i]
				require.Equal(t, it.Currency, r[1])
				require.Equal(t, strconv.FormatInt(it.Count, 10), r[2])
				require.Equal(t, strconv.FormatInt(it.SucceededCount, 10), r[3])
				require.Equal(t, html.EscapeString(money.FormatSum(it.SucceededMinor, it.Currency)), r[4])
				require.Equal(t, html.EscapeString(money.FormatSum(it.CapturedMinor, it.Currency)), r[5])
				require.Equal(t, html.EscapeString(money.FormatSum(it.RefundedMinor, it.Currency)), r[6])
				require.Equal(t, strconv.FormatInt(it.DeclinedCount, 10), r[7])
			}
			if c.page == "from="+dayAfter {
				require.Empty(t, rows)
				require.Contains(t, body, "No payment matches.")
			}
		}

		// At the key's clock: a hosted session whose expiry key A's clock
		// has passed is exported as expired, as the signed export says,
		// before any job has expired it.
		open := createSession(t, e.a, `{"order_id":"clocked","amount_minor":500,"currency":"USD","expires_in_seconds":300}`)
		require.NoError(t, e.store.InTx(t.Context(), func(tx *store.Tx) error {
			return tx.SetKeyClockOffset(t.Context(), e.aKey.ID, time.Hour)
		}))
		resp, err := ann.c.Get(e.url + "/cabinet/payments/export?q=clocked")
		require.NoError(t, err)
		got, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		want := exportCSV(t, e.a, "?order_id=clocked")
		require.Equal(t, string(want.Body), string(got))
		require.Contains(t, string(got), open.PaymentID+",")
		require.Contains(t, string(got), ",expired,")

		// Key B's payments: not by a key parameter, not without a session.
		for _, path := range []string{"/cabinet/payments/export?key=" + e.bKey.ID, "/cabinet/payments/totals?key=" + e.bKey.ID} {
			status, body, _ := ann.get(e.url + path)
			require.Equal(t, http.StatusNotFound, status, path)
			require.NotContains(t, body, "cust-")
		}
		stranger := newStaffBrowser(t)
		for _, path := range []string{"/cabinet/payments/export", "/cabinet/payments/totals"} {
			resp, err := stranger.c.Get(e.url + path)
			require.NoError(t, err)
			resp.Body.Close()
			require.Equal(t, http.StatusSeeOther, resp.StatusCode, path)
		}
	})
}

// TestCabinetPageWeight keeps the payments page light (docs/cabinet.md,
// Payments): a full page of 50 rows with a 30-day chart, its one inline
// style sheet included, no script and nothing else to load.
func TestCabinetPageWeight(t *testing.T) {
	e := newEnv(t, storetest.Databases(t)[0], options{})
	seedMonth(t, e, e.aKey.ID, 900)
	ann := e.signedInStaff(t, "ann@example.com", e.aKey.ID)
	status, body, _ := ann.get(e.url + "/cabinet/payments")
	require.Equal(t, http.StatusOK, status)
	require.Len(t, paymentIDs(body), 50)
	require.NotContains(t, body, "<script")
	require.NotRegexp(t, `(?:src|href)="/assets/`, body)
	t.Logf("cabinet payments page: %d bytes, %d gzipped", len(body), gzipped(body))
	require.Less(t, len(body), 96<<10, "the payments page grew past 96 KiB")
}
