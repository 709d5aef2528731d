package server_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/paygate/paygate/internal/client"
	"github.com/paygate/paygate/internal/money"
	"github.com/paygate/paygate/internal/openapi"
	"github.com/paygate/paygate/internal/payment"
	"github.com/paygate/paygate/internal/store"
	"github.com/paygate/paygate/internal/store/storetest"
)

// exportHeader is the export's header row (docs/cabinet.md, "Exports and
// totals").
var exportHeader = []string{"payment_id", "created_at", "updated_at", "status", "amount_minor", "currency",
	"captured_amount_minor", "refunded_amount_minor", "order_id", "customer_reference", "description",
	"payment_method", "masked_card", "decline_code", "operation_mode", "subscription_id", "subscription_period",
	"subscription_attempt"}

// seedPayments stores n payments of the key straight through the store, as
// varied as the filters need: every status, three currencies, a few order
// ids and payers, three payments per second of created_at (so the export's
// pages are cut inside a second and the id decides the order), and
// subscription charges. It returns them.
func seedPayments(t testing.TB, e *env, keyID string, n int, rnd *rand.Rand) []*payment.Payment {
	t.Helper()
	ctx := context.Background()
	chs, err := e.store.ChannelsForKey(ctx, keyID)
	require.NoError(t, err)
	require.NotEmpty(t, chs)
	base := e.clock.Now().UTC().Add(-time.Hour)
	currencies := []string{"EUR", "UAH", "USD"}
	out := make([]*payment.Payment, 0, n)
	for i := range n {
		status := payment.Statuses[rnd.IntN(len(payment.Statuses))]
		amount := int64(100 + rnd.IntN(100000))
		p := &payment.Payment{ID: uuid.Must(uuid.NewV7()).String(), AccessKeyID: keyID, ChannelID: chs[0].ID,
			Kind: payment.KindDirect, Status: status, OrderID: fmt.Sprintf("ord-%d", rnd.IntN(8)), AmountMinor: amount,
			Currency: currencies[rnd.IntN(len(currencies))], Description: fmt.Sprintf("item %d, \"quoted\"\nline", i),
			CustomerReference: fmt.Sprintf("cust-%d", rnd.IntN(5)), Locale: "en", OperationMode: payment.ModeCharge,
			Method: "card", MaskedCard: "424242******4242", CardScheme: "visa",
			CreatedAt: base.Add(-time.Duration(i/3) * time.Second), UpdatedAt: base}
		switch status {
		case payment.Succeeded:
			p.CapturedAmountMinor = amount
		case payment.PartiallyRefunded:
			p.CapturedAmountMinor, p.RefundedAmountMinor = amount, amount/2
		case payment.Refunded:
			p.CapturedAmountMinor, p.RefundedAmountMinor = amount, amount
		case payment.Declined:
			p.DeclineCode, p.DeclineMessage = "insufficient_funds", "Insufficient funds"
		}
		if rnd.IntN(10) == 0 {
			period := int64(rnd.IntN(12))
			p.Kind, p.SubscriptionID, p.SubscriptionPeriod, p.SubscriptionAttempt =
				payment.KindRecurring, uuid.NewString(), &period, 1+rnd.IntN(3)
		}
		out = append(out, p)
	}
	require.NoError(t, e.store.InTx(ctx, func(tx *store.Tx) error {
		for _, p := range out {
			if err := tx.CreatePayment(ctx, p); err != nil {
				return err
			}
		}
		return nil
	}))
	return out
}

// exportCSV GETs the export with query and answers the response.
func exportCSV(t testing.TB, c *client.Client, query string) *client.Response {
	t.Helper()
	resp, err := c.Do(context.Background(), client.Request{Method: "GET", Target: "/cabinet/v1/payments/export" + query})
	require.NoError(t, err)
	return resp
}

// exportRows GETs the export, requires 200 CSV with the header row and
// answers the rows after it.
func exportRows(t testing.TB, c *client.Client, query string) [][]string {
	t.Helper()
	resp := exportCSV(t, c, query)
	require.Equal(t, http.StatusOK, resp.Status, "%s", resp.Body)
	require.Equal(t, "text/csv; charset=utf-8", resp.Header.Get("Content-Type"))
	r := csv.NewReader(bytes.NewReader(resp.Body))
	r.FieldsPerRecord = len(exportHeader)
	rows, err := r.ReadAll()
	require.NoError(t, err)
	require.NotEmpty(t, rows)
	require.Equal(t, exportHeader, rows[0])
	return rows[1:]
}

// listAll reads every page of GET /api/v1/payments with the filters.
func listAll(t testing.TB, c *client.Client, filters string) []openapi.Payment {
	t.Helper()
	var out []openapi.Payment
	cursor := ""
	for {
		q := "?limit=100"
		if filters != "" {
			q += "&" + filters
		}
		if cursor != "" {
			q += "&cursor=" + url.QueryEscape(cursor)
		}
		var page openapi.PaymentList
		require.NoError(t, c.JSON(context.Background(), "GET", "/api/v1/payments"+q, nil, &page))
		out = append(out, page.Items...)
		if page.NextCursor == nil {
			return out
		}
		cursor = *page.NextCursor
	}
}

// formulaSafe is the escaping the export promises, written again here.
func formulaSafe(v string) string {
	if v != "" && strings.ContainsRune("=+-@\t\r", rune(v[0])) {
		return "'" + v
	}
	return v
}

// wantRow is the export's row for a payment as the list shows it.
func wantRow(p openapi.Payment) []string {
	var decline, period, attempt string
	if p.Decline != nil {
		decline = p.Decline.Code
	}
	if p.SubscriptionPeriod != nil {
		period = strconv.FormatInt(*p.SubscriptionPeriod, 10)
	}
	if p.SubscriptionAttempt != nil {
		attempt = strconv.Itoa(*p.SubscriptionAttempt)
	}
	ts := func(t openapi.Time) string { return t.Std().UTC().Format(time.RFC3339) }
	n := func(v *int64) string {
		if v == nil {
			return "0"
		}
		return strconv.FormatInt(*v, 10)
	}
	row := []string{p.PaymentID, ts(p.CreatedAt), ts(p.UpdatedAt), p.Status, strconv.FormatInt(p.AmountMinor, 10),
		p.Currency, n(p.CapturedAmountMinor), n(p.RefundedAmountMinor), p.OrderID, p.CustomerReference,
		p.Description, p.PaymentMethod, p.MaskedCard, decline, p.OperationMode, p.SubscriptionID, period, attempt}
	for i := range row {
		row[i] = formulaSafe(row[i])
	}
	return row
}

func column(rows [][]string, name string) []string {
	i := slices.Index(exportHeader, name)
	out := make([]string, len(rows))
	for j, r := range rows {
		out[j] = r[i]
	}
	return out
}

// TestPaymentExport drives exportPayments (GET /cabinet/v1/payments/export)
// on both databases: for several filters the CSV is exactly every page of
// listPayments (GET /api/v1/payments) with the same filters, same ids in
// the same order, same values, over more payments than one export page;
// cells a spreadsheet would run are prefixed with '; another key's
// payments, verifications and payouts never appear; bad filters, limit
// and cursor are 400 envelopes like the list's; an unsigned call is 401.
func TestPaymentExport(t *testing.T) {
	each(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{})
		rnd := rand.New(rand.NewPCG(14, 1))
		seeded := seedPayments(t, e, e.aKey.ID, 1200, rnd)
		others := seedPayments(t, e, e.bKey.ID, 50, rnd)
		// A direct payment through the API, a verification and a payout of
		// key A: the payment is exported, the others never are.
		direct := e.direct(e.a, cardBody("4242424242424242", ""))
		e.createVerification(e.a, "ord-1", luhnCard(7))
		e.createPayout(e.a, payoutBody("4242424242424242", ""))

		mid := seeded[600].CreatedAt.Format(time.RFC3339)
		late := seeded[100].CreatedAt.Format(time.RFC3339)
		for _, filters := range []string{"", "status=succeeded", "status=declined&customer_reference=cust-2",
			"order_id=ord-1", "customer_reference=cust-4", "created_gte=" + url.QueryEscape(mid),
			"created_lt=" + url.QueryEscape(mid) + "&status=refunded",
			"created_gte=" + url.QueryEscape(mid) + "&created_lt=" + url.QueryEscape(late),
			"order_id=nothing-like-this"} {
			t.Run(filters, func(t *testing.T) {
				list := listAll(t, e.a, filters)
				q := ""
				if filters != "" {
					q = "?" + filters
				}
				rows := exportRows(t, e.a, q)
				want := make([][]string, len(list))
				for i, p := range list {
					want[i] = wantRow(p)
				}
				require.Equal(t, len(want), len(rows))
				require.Equal(t, want, rows)
			})
		}

		all := exportRows(t, e.a, "")
		require.Len(t, all, len(seeded)+1, "1,200 stored payments and the direct one; no verification, no payout")
		ids := column(all, "payment_id")
		require.Equal(t, direct.PaymentID, ids[0], "newest first")
		for _, p := range others {
			require.NotContains(t, ids, p.ID)
		}
		theirs := exportRows(t, e.b, "")
		require.Len(t, theirs, len(others))
		for _, id := range column(theirs, "payment_id") {
			require.False(t, slices.ContainsFunc(seeded, func(p *payment.Payment) bool { return p.ID == id }))
		}
		for _, row := range all {
			for _, cell := range row {
				require.NotContains(t, cell, "4242424242424242", "never a card number")
			}
		}

		// Bad filters: the list's 400 envelopes; paging is not a filter.
		for _, tc := range []struct{ query, code, field string }{
			{"?status=paid", "validation_error", "status"},
			{"?created_gte=yesterday", "validation_error", "created_gte"},
			{"?order_id=" + strings.Repeat("o", 201), "validation_error", "order_id"},
			{"?customer_reference=" + strings.Repeat("c", 129), "validation_error", "customer_reference"},
			{"?status=succeeded&status=declined", "validation_error", "status"},
			{"?limit=10", "unknown_field", "limit"},
			{"?cursor=abc", "unknown_field", "cursor"},
			{"?colour=red", "unknown_field", "colour"},
		} {
			for _, path := range []string{"/cabinet/v1/payments/export", "/cabinet/v1/payments/totals", "/api/v1/payments"} {
				if path == "/api/v1/payments" && tc.code == "unknown_field" && tc.field != "colour" {
					continue // the list pages
				}
				resp := e.get(e.a, path+tc.query)
				require.Equal(t, http.StatusBadRequest, resp.Status, "%s %s", path, tc.query)
				require.Equal(t, "application/json", resp.Header.Get("Content-Type"))
				var env openapi.ErrorEnvelope
				require.NoError(t, json.Unmarshal(resp.Body, &env), "%s", resp.Body)
				require.Equal(t, tc.code, env.Error.Code, "%s %s: %s", path, tc.query, resp.Body)
				require.NotNil(t, env.Error.Field, "%s %s: %s", path, tc.query, resp.Body)
				require.Equal(t, tc.field, *env.Error.Field, "%s %s: %s", path, tc.query, resp.Body)
			}
		}
		req, err := http.NewRequest("GET", e.url+"/cabinet/v1/payments/export", nil)
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
		require.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	})
}

// TestPaymentExportFormulas checks the escaping of cells a spreadsheet would
// run (docs/design/decisions.md section 13) on both databases: each such
// value comes out prefixed with ', and reads back exactly otherwise.
func TestPaymentExportFormulas(t *testing.T) {
	each(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{})
		ps := seedPayments(t, e, e.aKey.ID, 5, rand.New(rand.NewPCG(1, 2)))
		set := []struct{ order, desc, ref string }{
			{"=1+1", "@SUM(A1:A9)", "-2"},
			{"+33", "\tHYPERLINK(\"x\")", "\rcr"},
			{"plain", "a, \"b\"\nc", "ok"},
			{"a=b", "x@y", "2-1"},
			{"", "", ""},
		}
		ctx := context.Background()
		require.NoError(t, e.store.InTx(ctx, func(tx *store.Tx) error {
			for i, p := range ps {
				p.OrderID, p.Description, p.CustomerReference = set[i].order, set[i].desc, set[i].ref
				p.ID = uuid.Must(uuid.NewV7()).String()
				p.SubscriptionID, p.SubscriptionPeriod = "", nil
				if err := tx.CreatePayment(ctx, p); err != nil {
					return err
				}
			}
			return nil
		}))
		rows := exportRows(t, e.a, "")
		byID := map[string][]string{}
		for _, r := range rows {
			byID[r[0]] = r
		}
		at := func(name string) int { return slices.Index(exportHeader, name) }
		for i, p := range ps {
			row := byID[p.ID]
			require.NotNil(t, row, i)
			require.Equal(t, formulaSafe(set[i].order), row[at("order_id")])
			require.Equal(t, formulaSafe(set[i].desc), row[at("description")])
			require.Equal(t, formulaSafe(set[i].ref), row[at("customer_reference")])
		}
		require.Equal(t, "'=1+1", byID[ps[0].ID][at("order_id")])
		require.Equal(t, "'@SUM(A1:A9)", byID[ps[0].ID][at("description")])
		require.Equal(t, "'-2", byID[ps[0].ID][at("customer_reference")])
		require.Equal(t, "'+33", byID[ps[1].ID][at("order_id")])
		require.Equal(t, "'\tHYPERLINK(\"x\")", byID[ps[1].ID][at("description")])
		require.Equal(t, "'\rcr", byID[ps[1].ID][at("customer_reference")])
		require.Equal(t, "a=b", byID[ps[3].ID][at("order_id")])
	})
}

// TestPaymentTotalsEqualExport is the property of getPaymentTotals (GET
// /cabinet/v1/payments/totals), on both databases: for random filters the
// totals per currency equal the sums computed over the export with the
// same filters.
func TestPaymentTotalsEqualExport(t *testing.T) {
	each(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{})
		seeded := seedPayments(t, e, e.aKey.ID, 700, rand.New(rand.NewPCG(3, 4)))
		seedPayments(t, e, e.bKey.ID, 40, rand.New(rand.NewPCG(5, 6)))
		e.createPayout(e.a, payoutBody("4242424242424242", ""))
		succeeded := []string{"succeeded", "partially_refunded", "refunded"}
		rapid.Check(t, func(rt *rapid.T) {
			v := url.Values{}
			if rapid.Bool().Draw(rt, "by status") {
				v.Set("status", string(rapid.SampledFrom(payment.Statuses).Draw(rt, "status")))
			}
			if rapid.Bool().Draw(rt, "by order") {
				v.Set("order_id", fmt.Sprintf("ord-%d", rapid.IntRange(0, 8).Draw(rt, "order")))
			}
			if rapid.Bool().Draw(rt, "by payer") {
				v.Set("customer_reference", fmt.Sprintf("cust-%d", rapid.IntRange(0, 5).Draw(rt, "payer")))
			}
			if rapid.Bool().Draw(rt, "from") {
				v.Set("created_gte", seeded[rapid.IntRange(0, len(seeded)-1).Draw(rt, "gte")].CreatedAt.Format(time.RFC3339))
			}
			if rapid.Bool().Draw(rt, "until") {
				v.Set("created_lt", seeded[rapid.IntRange(0, len(seeded)-1).Draw(rt, "lt")].CreatedAt.Format(time.RFC3339))
			}
			q := ""
			if len(v) > 0 {
				q = "?" + v.Encode()
			}
			rows := exportRows(t, e.a, q)
			want := map[string]*openapi.CurrencyTotals{}
			num := func(s string) int64 { n, err := strconv.ParseInt(s, 10, 64); require.NoError(t, err); return n }
			at := func(name string) int { return slices.Index(exportHeader, name) }
			for _, r := range rows {
				cur := r[at("currency")]
				w := want[cur]
				if w == nil {
					w = &openapi.CurrencyTotals{Currency: cur, SucceededMinor: money.SumOf(), CapturedMinor: money.SumOf(), RefundedMinor: money.SumOf()}
					want[cur] = w
				}
				w.Count++
				if slices.Contains(succeeded, r[at("status")]) {
					w.SucceededCount++
					w.SucceededMinor = w.SucceededMinor.Add(num(r[at("amount_minor")]))
				}
				if r[at("status")] == "declined" {
					w.DeclinedCount++
				}
				w.CapturedMinor = w.CapturedMinor.Add(num(r[at("captured_amount_minor")]))
				w.RefundedMinor = w.RefundedMinor.Add(num(r[at("refunded_amount_minor")]))
			}
			wantList := openapi.PaymentTotals{Items: []openapi.CurrencyTotals{}}
			for _, cur := range []string{"EUR", "UAH", "USD"} {
				if w := want[cur]; w != nil {
					wantList.Items = append(wantList.Items, *w)
				}
			}
			var got openapi.PaymentTotals
			require.NoError(t, e.a.JSON(context.Background(), "GET", "/cabinet/v1/payments/totals"+q, nil, &got))
			require.Equal(t, wantList, got, q)
		})
	})
}
