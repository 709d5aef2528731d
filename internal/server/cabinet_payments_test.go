package server_test

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/cabinet"
	"github.com/paygate/paygate/internal/client"
	"github.com/paygate/paygate/internal/openapi"
	"github.com/paygate/paygate/internal/payment"
	"github.com/paygate/paygate/internal/store"
	"github.com/paygate/paygate/internal/store/storetest"
)

// signedInStaff makes a viewer of the keys and signs it in through its
// setup link.
func (e *env) signedInStaff(t *testing.T, email string, keyIDs ...string) *staffBrowser {
	t.Helper()
	return e.signedInAs(t, email, cabinet.Viewer, keyIDs...)
}

// signedInAdmin makes an admin of the keys and signs it in.
func (e *env) signedInAdmin(t *testing.T, email string, keyIDs ...string) *staffBrowser {
	t.Helper()
	return e.signedInAs(t, email, cabinet.Admin, keyIDs...)
}

// signedInAs makes a user of the role and keys and signs it in through its
// setup link.
func (e *env) signedInAs(t *testing.T, email string, role cabinet.Role, keyIDs ...string) *staffBrowser {
	t.Helper()
	_, token, err := e.app.Cabinet.CreateUser(context.Background(), email, role, keyIDs)
	require.NoError(t, err)
	b := newStaffBrowser(t)
	status, body, csrf := b.get(e.url + "/cabinet/setup/" + token)
	require.Equal(t, http.StatusOK, status, body)
	const pw = "a long passphrase"
	status, _, _ = b.post(e.url+"/cabinet/setup/"+token, url.Values{"password": {pw}, "password_again": {pw}, "csrf_token": {csrf}})
	require.Equal(t, http.StatusSeeOther, status)
	return b
}

func orderBody(order, customerRef string) string {
	return fmt.Sprintf(`{"order_id":%q,"amount_minor":1234,"currency":"USD","customer_reference":%q,%s,
		"payment_method":{"type":"card","card":{"number":"4242424242424242","expire_month":12,"expire_year":%d,"cvv":"123"}}}`,
		order, customerRef, visaCustomer, time.Now().Year()+2)
}

var (
	paymentLinkRE = regexp.MustCompile(`href="/cabinet/payments/([^"?]+)"`)
	nextLinkRE    = regexp.MustCompile(`href="([^"]+)" rel="next"`)
	barRE         = regexp.MustCompile(`data-day="([^"]+)" data-status="([^"]+)" data-count="(\d+)"`)
)

func paymentIDs(body string) []string {
	var ids []string
	for _, m := range paymentLinkRE.FindAllStringSubmatch(body, -1) {
		ids = append(ids, m[1])
	}
	return ids
}

// TestCabinetPayments drives the payments pages with plain HTTP on both
// databases (docs/design/decisions.md section 13; docs/cabinet.md,
// Payments): a user of key A sees A's payments and never B's, filters,
// search, pagination, the detail with operations and events, the chart's
// counts, no card number anywhere, and no page without a session.
func TestCabinetPayments(t *testing.T) {
	each(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{})
		ctx := context.Background()
		pay := func(c *client.Client, order, ref string) openapi.Payment { return e.direct(c, orderBody(order, ref)) }
		pA := pay(e.a, "order-a", "cust-a")
		pB := pay(e.b, "bee-order", "bee-cust")

		// Earlier payments of both keys, stored as the API stores them:
		// ten a day on each of the six days before today, in three
		// statuses.
		tmplA, err := e.store.FindPaymentByID(ctx, pA.PaymentID)
		require.NoError(t, err)
		tmplB, err := e.store.FindPaymentByID(ctx, pB.PaymentID)
		require.NoError(t, err)
		today := e.clock.Now().UTC().Truncate(24 * time.Hour)
		seeded := map[string]map[string]int{} // day → status → count, key A
		cycle := []payment.Status{payment.Succeeded, payment.Declined, payment.Succeeded, payment.Failed}
		require.NoError(t, e.store.InTx(ctx, func(tx *store.Tx) error {
			for day := 1; day <= 6; day++ {
				for i := range 10 {
					for _, tp := range []*payment.Payment{tmplA, tmplB} {
						p := *tp
						p.ID = fmt.Sprintf("%s-seed-%d-%d", tp.ID, day, i)
						p.Status = cycle[(day+i)%len(cycle)]
						p.OrderID = fmt.Sprintf("%s-%d-%d", tp.OrderID, day, i)
						p.CustomerReference = fmt.Sprintf("%s-%d-%d", tp.CustomerReference, day, i)
						p.CreatedAt = today.AddDate(0, 0, -day).Add(time.Duration(i) * time.Hour)
						p.UpdatedAt = p.CreatedAt
						if err := tx.CreatePayment(ctx, &p); err != nil {
							return err
						}
						if tp == tmplA {
							d := p.CreatedAt.Format("2006-01-02")
							if seeded[d] == nil {
								seeded[d] = map[string]int{}
							}
							seeded[d][string(p.Status)]++
						}
					}
				}
			}
			return nil
		}))
		const totalA = 61

		// Without a session: to the sign-in page.
		stranger := newStaffBrowser(t)
		for _, path := range []string{"/cabinet/payments", "/cabinet/payments/" + pA.PaymentID} {
			resp, err := stranger.c.Get(e.url + path)
			require.NoError(t, err)
			resp.Body.Close()
			require.Equal(t, http.StatusSeeOther, resp.StatusCode, path)
			require.Equal(t, "/cabinet/sign-in", resp.Header.Get("Location"))
		}

		ann := e.signedInStaff(t, "ann@example.com", e.aKey.ID)
		status, home, _ := ann.get(e.url + "/cabinet/")
		require.Equal(t, http.StatusOK, status)
		require.Contains(t, home, `href="/cabinet/payments"`)

		// The list, newest first, page by page: every one of A's, none of
		// B's, no card number.
		var all []string
		next := "/cabinet/payments"
		pages := 0
		for next != "" {
			status, body, _ := ann.get(e.url + next)
			require.Equal(t, http.StatusOK, status, body)
			require.NotContains(t, body, "4242424242424242")
			require.NotContains(t, body, pB.PaymentID)
			require.NotContains(t, body, "bee-order")
			all = append(all, paymentIDs(body)...)
			next = ""
			if m := nextLinkRE.FindStringSubmatch(body); m != nil {
				next = html.UnescapeString(m[1])
			}
			pages++
		}
		require.Equal(t, 2, pages)
		require.Len(t, all, totalA)
		require.Equal(t, pA.PaymentID, all[0], "newest first")
		seen := map[string]bool{}
		var last time.Time
		for i, id := range all {
			require.False(t, seen[id], "listed twice: %s", id)
			seen[id] = true
			p, err := e.store.FindPaymentByID(ctx, id)
			require.NoError(t, err)
			require.Equal(t, e.aKey.ID, p.AccessKeyID)
			if i > 0 {
				require.False(t, p.CreatedAt.After(last), "newest first")
			}
			last = p.CreatedAt
		}
		status, body, _ := ann.get(e.url + "/cabinet/payments")
		require.Equal(t, http.StatusOK, status)
		require.Contains(t, body, "424242******4242", "the masked card")
		require.Contains(t, body, "USD 12.34")

		// The chart: one bar per day and status, counts as stored (the
		// default range is the last 30 days, today included).
		bars := map[string]map[string]int{}
		for _, m := range barRE.FindAllStringSubmatch(body, -1) {
			n, _ := strconv.Atoi(m[3])
			if bars[m[1]] == nil {
				bars[m[1]] = map[string]int{}
			}
			bars[m[1]][m[2]] += n
		}
		want := map[string]map[string]int{today.Format("2006-01-02"): {"processing": 1}}
		for d, byStatus := range seeded {
			want[d] = byStatus
		}
		require.Equal(t, want, bars)
		require.Contains(t, body, "<svg")
		require.Contains(t, body, fmt.Sprintf("%d payments", totalA))

		list := func(query string) []string {
			t.Helper()
			status, body, _ := ann.get(e.url + "/cabinet/payments?" + query)
			require.Equal(t, http.StatusOK, status, body)
			require.NotContains(t, body, "4242424242424242")
			return paymentIDs(body)
		}
		// Status.
		declined := 0
		for _, byStatus := range seeded {
			declined += byStatus["declined"]
		}
		ids := list("status=declined")
		require.Len(t, ids, declined)
		for _, id := range ids {
			p, err := e.store.FindPaymentByID(ctx, id)
			require.NoError(t, err)
			require.Equal(t, payment.Declined, p.Status)
		}
		// Dates: one day, both ends included; a range of three days.
		day2 := today.AddDate(0, 0, -2).Format("2006-01-02")
		require.Len(t, list("from="+day2+"&to="+day2), 10)
		require.Len(t, list("from="+today.AddDate(0, 0, -3).Format("2006-01-02")+"&to="+day2), 20)
		require.Len(t, list("from="+day2+"&to="+day2+"&status=succeeded"), seeded[day2]["succeeded"])
		status, body, _ = ann.get(e.url + "/cabinet/payments?from=" + day2 + "&to=" + day2)
		require.Equal(t, http.StatusOK, status)
		n := 0
		for _, m := range barRE.FindAllStringSubmatch(body, -1) {
			require.Equal(t, day2, m[1], "the chart covers the filtered range")
			c, _ := strconv.Atoi(m[3])
			n += c
		}
		require.Equal(t, 10, n)

		// The chart's range is capped at 90 days: a longer filter charts
		// its last 90.
		from := today.AddDate(0, 0, -200).Format("2006-01-02")
		status, body, _ = ann.get(e.url + "/cabinet/payments?from=" + from)
		require.Equal(t, http.StatusOK, status)
		require.Len(t, paymentIDs(body), 50)
		require.Contains(t, body, "Payments per day by status, "+today.AddDate(0, 0, -89).Format("2006-01-02")+" to "+
			today.Format("2006-01-02"))
		require.Contains(t, body, "the last 90 days of the range")

		// Search: id, order id, customer reference, exactly; B's finds
		// nothing; a payment made a moment ago is found at once.
		for _, q := range []string{pA.PaymentID, "order-a", "cust-a"} {
			require.Equal(t, []string{pA.PaymentID}, list("q="+url.QueryEscape(q)), q)
		}
		require.Empty(t, list("q=order-"))
		for _, q := range []string{pB.PaymentID, "bee-order", "bee-cust"} {
			require.Empty(t, list("q="+url.QueryEscape(q)), q)
		}
		fresh := pay(e.a, "order-fresh", "cust-fresh")
		for _, q := range []string{fresh.PaymentID, "order-fresh", "cust-fresh"} {
			require.Equal(t, []string{fresh.PaymentID}, list("q="+q), q)
		}

		// Another key in the URL: not found.
		status, _, _ = ann.get(e.url + "/cabinet/payments?key=" + e.bKey.ID)
		require.Equal(t, http.StatusNotFound, status)

		// The detail: fields, operations and events; never the card number.
		status, body, _ = ann.get(e.url + "/cabinet/payments/" + pA.PaymentID)
		require.Equal(t, http.StatusOK, status, body)
		require.NotContains(t, body, "4242424242424242")
		require.Contains(t, body, "424242******4242")
		require.Contains(t, body, "order-a")
		require.Contains(t, body, "USD 12.34")
		require.Contains(t, body, "<td>pay</td>", "the pay operation")
		require.Contains(t, body, "payment.processing", "the event")
		for _, id := range []string{pB.PaymentID, "pay_unknown"} {
			status, body, _ = ann.get(e.url + "/cabinet/payments/" + id)
			require.Equal(t, http.StatusNotFound, status, id)
			require.NotContains(t, body, "bee-order")
		}

		// Grants are read on every request: once B is granted, the key
		// selector appears and B's payments with it.
		require.NoError(t, e.app.Cabinet.Grant(ctx, "ann@example.com", e.bKey.ID))
		status, body, _ = ann.get(e.url + "/cabinet/payments")
		require.Equal(t, http.StatusOK, status)
		require.Contains(t, body, `name="key"`)
		require.NotContains(t, body, pB.PaymentID, "key A first")
		require.Equal(t, []string{pB.PaymentID}, list("key="+e.bKey.ID+"&q=bee-order"))
		status, _, _ = ann.get(e.url + "/cabinet/payments/" + pB.PaymentID)
		require.Equal(t, http.StatusOK, status)
		require.False(t, strings.Contains(body, "4242424242424242"))
	})
}
