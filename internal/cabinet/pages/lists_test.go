package pages_test

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/cabinet"
	"github.com/paygate/paygate/internal/merchant"
	"github.com/paygate/paygate/internal/payment"
	"github.com/paygate/paygate/internal/payout"
	"github.com/paygate/paygate/internal/store/storetest"
	"github.com/paygate/paygate/internal/subscription"
	"github.com/paygate/paygate/internal/verification"
)

var (
	olderRE  = regexp.MustCompile(`<a href="([^"]+)" rel="next">Older</a>`)
	newestRE = regexp.MustCompile(`<a href="([^"]+)">Newest</a>`)
)

// rows are the ids a list page shows, in order, as re's first group
// finds them.
func rows(re *regexp.Regexp, body string) []string {
	var ids []string
	for _, m := range re.FindAllStringSubmatch(body, -1) {
		ids = append(ids, m[1])
	}
	return ids
}

// link is the page's link of re, unescaped, "" when there is none.
func link(re *regexp.Regexp, body string) string {
	if m := re.FindStringSubmatch(body); m != nil {
		return html.UnescapeString(m[1])
	}
	return ""
}

// aList is one list of the pages: where it is, the filter it is read
// with, how its rows are found, and how to store a row of the key created
// at a time, matching the filter or not.
type aList struct {
	name, path, filter string
	row                *regexp.Regexp
	store              func(t *testing.T, e *env, k merchant.Key, created time.Time, match bool) string
}

var everyList = []aList{
	{"payments", "/cabinet/payments", "status=succeeded", regexp.MustCompile(`href="/cabinet/payments/([^"?/]+)"`),
		func(t *testing.T, e *env, k merchant.Key, created time.Time, match bool) string {
			return e.payment(t, k, func(p *payment.Payment) {
				p.CreatedAt, p.UpdatedAt = created, created
				if !match {
					p.Status = payment.Declined
				}
			}).ID
		}},
	{"saved cards", "/cabinet/cards", "customer_reference=cust-1", regexp.MustCompile(`<tr data-card="([^"]+)"`),
		func(t *testing.T, e *env, k merchant.Key, created time.Time, match bool) string {
			if match {
				return e.card(t, k, "cust-1", created).ID
			}
			return e.card(t, k, "cust-10", created).ID
		}},
	{"verifications", "/cabinet/verifications", "status=verified", regexp.MustCompile(`<tr data-verification="([^"]+)"`),
		func(t *testing.T, e *env, k merchant.Key, created time.Time, match bool) string {
			return e.verification(t, k, func(v *verification.Verification) {
				v.CreatedAt, v.UpdatedAt = created, created
				if !match {
					v.Status = verification.Failed
				}
			}).ID
		}},
	{"payouts", "/cabinet/payouts", "status=succeeded", regexp.MustCompile(`<tr data-payout="([^"]+)"`),
		func(t *testing.T, e *env, k merchant.Key, created time.Time, match bool) string {
			return e.payout(t, k, func(p *payout.Payout) {
				p.CreatedAt, p.UpdatedAt = created, created
				if !match {
					p.Status = payout.Declined
				}
			}).ID
		}},
	{"subscriptions", "/cabinet/subscriptions", "status=active", regexp.MustCompile(`<tr data-subscription="([^"]+)"`),
		func(t *testing.T, e *env, k merchant.Key, created time.Time, match bool) string {
			status := subscription.Active
			if !match {
				status = subscription.Paused
			}
			return e.subscription(t, e.mandate(t, k, "cust-1"), status, created).ID
		}},
	{"events", "/cabinet/events", "type=payment.succeeded", regexp.MustCompile(`<tr data-event="([^"]+)"`),
		func(t *testing.T, e *env, k merchant.Key, created time.Time, match bool) string {
			typ := "payment.succeeded"
			if !match {
				typ = "payment.declined"
			}
			return e.event(t, k, typ, "payment", "pay_1", `{}`, created).ID
		}},
}

// TestKeysetPages: every list pages the same way (docs/cabinet.md,
// "Payments" and "The other lists"): newest first, 50 a page, an "Older"
// link to the next keyset page and a "Newest" link back, both keeping the
// shown key and the filter; a row made while one reads neither shifts nor
// repeats the rows of the next page.
func TestKeysetPages(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{})
		b := e.signedIn(t, "ann@example.com", cabinet.Viewer, e.a, e.b) // two keys: links keep ?key=
		for _, l := range everyList {
			t.Run(l.name, func(t *testing.T) {
				start := e.clock.Now()
				var want []string // newest first
				for i := 1; i <= 52; i++ {
					want = append(want, l.store(t, e, e.a, start.Add(-time.Duration(i)*time.Minute), true))
					if i%20 == 0 {
						l.store(t, e, e.a, start.Add(-time.Duration(i)*time.Minute-time.Second), false)
					}
				}
				first := l.path + "?key=" + e.a.ID + "&" + l.filter
				page := b.get(first)
				require.Equal(t, http.StatusOK, page.status, page.body)
				require.Equal(t, want[:50], rows(l.row, page.body))
				require.Empty(t, link(newestRE, page.body), "the first page has no Newest link")
				older := link(olderRE, page.body)
				require.NotEmpty(t, older)
				keeps(t, older, e.a.ID, l.filter, true)

				made := l.store(t, e, e.a, start.Add(time.Second), true) // while one reads

				page = b.get(older)
				require.Equal(t, http.StatusOK, page.status, page.body)
				require.Equal(t, want[50:], rows(l.row, page.body), "the next page neither shifts nor repeats")
				require.Empty(t, link(olderRE, page.body), "the last page")
				newest := link(newestRE, page.body)
				keeps(t, newest, e.a.ID, l.filter, false)

				page = b.get(newest)
				require.Equal(t, append([]string{made}, want[:49]...), rows(l.row, page.body))
			})
		}
	})
}

// keeps checks that a list's link keeps the key and the filter, and
// names the page's last row only when after is.
func keeps(t *testing.T, link, keyID, filter string, after bool) {
	t.Helper()
	u, err := url.Parse(link)
	require.NoError(t, err)
	q := u.Query()
	require.Equal(t, keyID, q.Get("key"), link)
	name, value, _ := strings.Cut(filter, "=")
	require.Equal(t, value, q.Get(name), link)
	require.Equal(t, after, q.Has("after"), link)
}

// TestFilterValidation: what the lists do with a filter or a page link
// that no form of theirs writes (docs/cabinet.md, "Payments" and "The
// other lists"): a value that is not one the filter offers is left out
// (the page says so where the filter is typed), a page link that is not
// one the list wrote is a 400 page; never a 500.
func TestFilterValidation(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{})
		now := e.clock.Now()
		ok := e.payment(t, e.a, nil).ID
		declined := e.payment(t, e.a, func(p *payment.Payment) { p.Status = payment.Declined }).ID
		card1, card2 := e.card(t, e.a, "cust-1", now).ID, e.card(t, e.a, "cust-2", now).ID
		sub := e.subscription(t, e.mandate(t, e.a, "cust-3"), subscription.Active, now).ID
		ev1 := e.event(t, e.a, "payment.succeeded", "payment", ok, `{}`, now).ID
		ev2 := e.event(t, e.a, "payment.declined", "payment", declined, `{}`, now).ID
		ver := e.verification(t, e.a, nil).ID
		po := e.payout(t, e.a, nil).ID
		b := e.signedIn(t, "ann@example.com", cabinet.Viewer, e.a)
		badAfter := []string{"nonsense", "1700000000000000", "1700000000000000_", "x_pay_1",
			"1700000000000000_" + strings.Repeat("a", 65), "1_%FF", "1_%00"}
		long := strings.Repeat("r", 65)

		for _, c := range []struct {
			name, path string
			status     int
			says       string
			shows      []string // ids on the page
			hides      []string
		}{
			{"a from date that is not a date", "/cabinet/payments?status=declined&from=2024-13-01", http.StatusOK,
				"Dates are written YYYY-MM-DD; &#34;2024-13-01&#34; was left out.", []string{declined}, []string{ok}},
			{"a to date that is not a date", "/cabinet/payments?to=yesterday", http.StatusOK,
				"Dates are written YYYY-MM-DD; &#34;yesterday&#34; was left out.", []string{ok, declined}, nil},
			{"a status the filter does not offer", "/cabinet/payments?status=bogus", http.StatusOK, "",
				[]string{ok, declined}, nil},
			{"a search that is not text", "/cabinet/payments?q=a%00b", http.StatusOK,
				"The search is not text (invalid UTF-8 or a NUL) and was left out.", []string{ok, declined}, nil},
			{"the totals of a date that is not a date", "/cabinet/payments/totals?from=2024-02-30", http.StatusOK,
				"Dates are written YYYY-MM-DD; &#34;2024-02-30&#34; was left out.", nil, nil},
			{"a customer that is not text", "/cabinet/cards?customer_reference=%FF", http.StatusOK, "",
				[]string{card1, card2}, nil},
			{"a verification status not offered", "/cabinet/verifications?status=bogus", http.StatusOK, "",
				[]string{ver}, nil},
			{"a payout status not offered", "/cabinet/payouts?status=bogus", http.StatusOK, "", []string{po}, nil},
			{"a subscription status not offered", "/cabinet/subscriptions?status=bogus", http.StatusOK, "",
				[]string{sub}, nil},
			{"an event type not of the form resource.status", "/cabinet/events?type=Payment+Succeeded", http.StatusOK,
				"An event type looks like payment.succeeded; &#34;Payment Succeeded&#34; was left out.",
				[]string{ev1, ev2}, nil},
			{"a resource id over 64 characters", "/cabinet/events?resource_id=" + long, http.StatusOK,
				"A resource id has at most 64 characters of text; the one given was left out.", []string{ev1, ev2}, nil},
			{"a subscription's payments page link not written by it", "/cabinet/subscriptions/" + sub + "?after=nonsense",
				http.StatusBadRequest, "This page link is not valid.", nil, nil},
		} {
			t.Run(c.name, func(t *testing.T) {
				a := b.get(c.path)
				require.Equal(t, c.status, a.status, a.body)
				if c.says != "" {
					require.Contains(t, a.body, c.says)
				} else {
					require.NotContains(t, a.body, `role="alert"`)
				}
				for _, id := range c.shows {
					require.Contains(t, a.body, id)
				}
				for _, id := range c.hides {
					require.NotContains(t, a.body, id)
				}
			})
		}

		t.Run("a page link not written by the list", func(t *testing.T) {
			for _, l := range everyList {
				for _, after := range badAfter {
					a := b.get(l.path + "?after=" + after)
					require.Equal(t, http.StatusBadRequest, a.status, "%s after=%s", l.path, after)
					require.Contains(t, a.body, "This page link is not valid.")
				}
			}
		})

		t.Run("a filter the list offers is kept in its form", func(t *testing.T) {
			a := b.get("/cabinet/payments?status=declined&from=2020-01-02&to=2020-01-03&q=order-1")
			require.Equal(t, http.StatusOK, a.status)
			for _, s := range []string{`<option selected>declined</option>`, `name="from" type="date" value="2020-01-02"`,
				`name="to" type="date" value="2020-01-03"`, `name="q" value="order-1"`} {
				require.Contains(t, a.body, s)
			}
			a = b.get("/cabinet/payments?status=bogus")
			require.NotContains(t, a.body, "<option selected>")
			require.True(t, slices.Contains(rows(everyList[0].row, a.body), ok))
		})
	})
}

// TestPaymentAttempts: a payment tried on two channels shows its attempts,
// oldest first, with why the next was made; a payment of one attempt
// shows none (docs/design/decisions.md section 17).
func TestPaymentAttempts(t *testing.T) {
	eachDB(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{})
		ctx := context.Background()
		chs, err := e.store.ChannelsForKey(ctx, e.a.ID)
		require.NoError(t, err)
		first, err := e.store.FindChannelByAlias(ctx, "sandbox-refunds")
		require.NoError(t, err)
		p := e.payment(t, e.a, nil)
		single := e.payment(t, e.a, nil)
		require.NoError(t, e.store.CreatePaymentAttempt(ctx, payment.Attempt{OperationID: uuid.NewString(), PaymentID: p.ID,
			ChannelID: first.ID, Status: payment.Failed, DeclineCode: "processing_error", Reason: payment.ReasonSoftDecline,
			CreatedAt: p.CreatedAt, EndedAt: p.CreatedAt.Add(time.Second)}))
		ann := e.signedIn(t, "ann@example.com", cabinet.Admin, e.a)
		page := ann.get("/cabinet/payments/" + p.ID)
		require.Equal(t, http.StatusOK, page.status)
		require.Contains(t, page.body, "<h2>Attempts</h2>")
		i, j := strings.Index(page.body, "<td>sandbox-refunds</td>"), strings.Index(page.body, "<td>"+chs[0].Alias+"</td>")
		require.True(t, i > 0 && j > i, "oldest first: %s", page.body)
		require.Contains(t, page.body, "<td>soft_decline</td>")
		require.NotContains(t, ann.get("/cabinet/payments/"+single.ID).body, "<h2>Attempts</h2>")
	})
}
