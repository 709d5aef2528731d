package pages_test

import (
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/cabinet"
	"github.com/paygate/paygate/internal/merchant"
	"github.com/paygate/paygate/internal/store/storetest"
	"github.com/paygate/paygate/internal/subscription"
)

// signedInPaths are a GET of every signed-in page and every POST.
var (
	signedInGETs = []string{"/cabinet/", "/cabinet/payments", "/cabinet/payments/x", "/cabinet/payments/export",
		"/cabinet/payments/totals", "/cabinet/cards", "/cabinet/verifications", "/cabinet/verifications/x",
		"/cabinet/payouts", "/cabinet/payouts/x", "/cabinet/subscriptions", "/cabinet/subscriptions/x",
		"/cabinet/webhooks", "/cabinet/events", "/cabinet/events/x", "/cabinet/allowances", "/cabinet/channels",
		"/cabinet/reconciliation", "/cabinet/reconciliation/acq/2026-01-15", "/cabinet/reconciliation/acq/2026-01-15/breaks.csv"}
	signedInPOSTs = []string{"/cabinet/cards/x/delete", "/cabinet/subscriptions/x/pause",
		"/cabinet/subscriptions/x/resume", "/cabinet/subscriptions/x/cancel", "/cabinet/events/x/resend"}
)

// TestSignedPagesNeedSession: without a live session every signed-in GET
// goes to the sign-in page and every POST is a 403 page (docs/cabinet.md,
// "Security choices": a session ends after 2 hours without use or 12
// hours after sign-in).
func TestSignedPagesNeedSession(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, db storetest.Database) {
		x := &exportTo{answer: writeCSV}
		e := newEnv(t, db, options{export: x.export})
		ann := e.user(t, "ann@example.com", cabinet.Admin, e.a)
		check := func(t *testing.T, b *browser) {
			t.Helper()
			for _, path := range signedInGETs {
				a := b.get(path)
				require.Equal(t, http.StatusSeeOther, a.status, path)
				require.Equal(t, "/cabinet/sign-in", a.location, path)
			}
			for _, path := range signedInPOSTs {
				a := b.post(path, url.Values{"csrf_token": {"any"}})
				require.Equal(t, http.StatusForbidden, a.status, path)
				require.Contains(t, a.body, "Your session has ended. Sign in again.", path)
			}
			require.Empty(t, x.keys(), "nothing exported")
		}

		t.Run("no session", func(t *testing.T) { check(t, e.browser(t)) })

		t.Run("idle too long", func(t *testing.T) {
			b := e.browser(t)
			b.signIn(ann)
			e.clock.Add(cabinet.SessionIdle - time.Second)
			require.Equal(t, http.StatusOK, b.get("/cabinet/").status, "just in time: its use is recorded")
			e.clock.Add(cabinet.SessionIdle - time.Second)
			require.Equal(t, http.StatusOK, b.get("/cabinet/").status)
			e.clock.Add(cabinet.SessionIdle + time.Second)
			check(t, b)
		})

		t.Run("too old, however used", func(t *testing.T) {
			b := e.browser(t)
			b.signIn(ann)
			for age := time.Duration(0); age <= cabinet.SessionAbsolute; age += time.Hour {
				require.Equal(t, http.StatusOK, b.get("/cabinet/").status, "used at %s", age)
				e.clock.Add(time.Hour)
			}
			check(t, b)
		})
	})
}

// TestKeyScope: a user sees only the keys granted (docs/cabinet.md,
// "Roles" and "The other lists"; docs/design/decisions.md section 13): a
// key not granted named in a URL is a 404 page on every page; another
// key's payment, verification, payout, subscription or event is the same
// 404 page as a missing one, and cannot be changed; a resource shows
// under its own key whatever ?key= says; a user without a key sees empty
// pages.
func TestKeyScope(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, db storetest.Database) {
		x := &exportTo{answer: writeCSV}
		e := newEnv(t, db, options{export: x.export})
		type resources struct {
			payment, verification, payout, subscription, event, card string
			key                                                      merchant.Key
		}
		of := func(k merchant.Key) resources {
			now := e.clock.Now()
			m := e.mandate(t, k, "cust-"+k.ID)
			e.endpoint(t, k, "https://hooks.example/"+k.ID)
			p := e.payment(t, k, nil)
			return resources{key: k, payment: p.ID, verification: e.verification(t, k, nil).ID,
				payout: e.payout(t, k, nil).ID, subscription: e.subscription(t, m, subscription.Active, now).ID,
				event: e.event(t, k, "payment.succeeded", "payment", p.ID, `{}`, now).ID,
				card:  e.card(t, k, "cust-"+k.ID, now).ID}
		}
		mine, theirs := of(e.a), of(e.b)
		ann := e.signedIn(t, "ann@example.com", cabinet.Admin, e.a)
		// notTheirs: the page shows nothing of key B.
		notTheirs := func(t *testing.T, body, what string) {
			t.Helper()
			for _, s := range []string{theirs.key.ID, theirs.key.AccessKey, theirs.payment, theirs.verification,
				theirs.payout, theirs.subscription, theirs.event, theirs.card} {
				require.NotContains(t, body, s, what)
			}
		}

		t.Run("a key not granted is a 404 page", func(t *testing.T) {
			for _, path := range []string{"/cabinet/", "/cabinet/payments", "/cabinet/payments/export",
				"/cabinet/payments/totals", "/cabinet/cards", "/cabinet/verifications", "/cabinet/payouts",
				"/cabinet/subscriptions", "/cabinet/webhooks", "/cabinet/events", "/cabinet/allowances", "/cabinet/channels",
				"/cabinet/reconciliation"} {
				a := ann.get(path + "?key=" + theirs.key.ID)
				require.Equal(t, http.StatusNotFound, a.status, path)
				require.Contains(t, a.body, "No such key among yours.", path)
				notTheirs(t, a.body, path)
				require.Equal(t, http.StatusOK, ann.get(path+"?key="+mine.key.ID).status, path)
			}
			require.Equal(t, []string{mine.key.ID}, x.keys(), "key B's CSV was never asked for")
		})

		t.Run("another key's resource is as unknown as a missing one", func(t *testing.T) {
			for _, c := range []struct{ list, mine, theirs string }{
				{"payments", mine.payment, theirs.payment},
				{"verifications", mine.verification, theirs.verification},
				{"payouts", mine.payout, theirs.payout},
				{"subscriptions", mine.subscription, theirs.subscription},
				{"events", mine.event, theirs.event},
			} {
				base := "/cabinet/" + c.list + "/"
				require.Equal(t, http.StatusOK, ann.get(base+c.mine).status, c.list)
				missing := ann.get(base + "00000000-0000-0000-0000-000000000000")
				require.Equal(t, http.StatusNotFound, missing.status, c.list)
				for _, path := range []string{base + c.theirs, base + c.theirs + "?key=" + theirs.key.ID,
					base + c.theirs + "?key=" + mine.key.ID} {
					a := ann.get(path)
					require.Equal(t, http.StatusNotFound, a.status, path)
					require.Equal(t, missing.body, a.body, path)
					notTheirs(t, a.body, path)
				}
			}
		})

		t.Run("one kind's id under another kind's page", func(t *testing.T) {
			for _, path := range []string{"/cabinet/verifications/" + mine.payout, "/cabinet/payouts/" + mine.verification,
				"/cabinet/payments/" + mine.payout, "/cabinet/subscriptions/" + mine.payment, "/cabinet/events/" + mine.payment} {
				require.Equal(t, http.StatusNotFound, ann.get(path).status, path)
			}
		})

		t.Run("another key's resource cannot be changed", func(t *testing.T) {
			tok := ann.token("/cabinet/")
			for _, path := range []string{
				"/cabinet/cards/" + theirs.card + "/delete",
				"/cabinet/cards/" + theirs.card + "/delete?key=" + theirs.key.ID,
				"/cabinet/cards/" + theirs.card + "/delete?key=" + mine.key.ID,
				"/cabinet/subscriptions/" + theirs.subscription + "/pause",
				"/cabinet/subscriptions/" + theirs.subscription + "/cancel",
				"/cabinet/events/" + theirs.event + "/resend",
			} {
				a := ann.post(path, url.Values{"csrf_token": {tok}})
				require.Equal(t, http.StatusNotFound, a.status, path)
				notTheirs(t, a.body, path)
			}
			require.True(t, e.usable(t, theirs.key, theirs.card))
			require.Equal(t, subscription.Active, e.subscriptionStatus(t, theirs.subscription))
			require.Empty(t, storetest.EventTypes(t, e.store, theirs.key.ID, theirs.subscription))
			require.Zero(t, e.deliveries(t, theirs.event))
		})

		t.Run("a resource shows under its own key", func(t *testing.T) {
			both := e.signedIn(t, "carl@example.com", cabinet.Viewer, e.a, e.b)
			nav := `href="/cabinet/payments?key=` + theirs.key.ID + `"`
			for _, path := range []string{"/cabinet/payments/" + theirs.payment, "/cabinet/verifications/" + theirs.verification,
				"/cabinet/payouts/" + theirs.payout, "/cabinet/subscriptions/" + theirs.subscription, "/cabinet/events/" + theirs.event} {
				a := both.get(path + "?key=" + mine.key.ID)
				require.Equal(t, http.StatusOK, a.status, path)
				require.Contains(t, a.body, nav, "%s: the navigation keeps key B", path)
			}
			a := both.get("/cabinet/payments?key=" + theirs.key.ID)
			require.Contains(t, a.body, theirs.payment)
			require.NotContains(t, a.body, mine.payment)
		})

		t.Run("a user without a key", func(t *testing.T) {
			dan := e.signedIn(t, "dan@example.com", cabinet.Admin)
			for _, path := range []string{"/cabinet/", "/cabinet/payments", "/cabinet/payments/totals", "/cabinet/cards",
				"/cabinet/verifications", "/cabinet/payouts", "/cabinet/subscriptions", "/cabinet/webhooks", "/cabinet/events",
				"/cabinet/allowances", "/cabinet/channels", "/cabinet/reconciliation"} {
				a := dan.get(path)
				require.Equal(t, http.StatusOK, a.status, path)
				require.Contains(t, a.body, "No key has been granted to you yet.", path)
				require.NotContains(t, a.body, mine.key.ID, path)
			}
			require.Equal(t, http.StatusNotFound, dan.get("/cabinet/payments/export").status)
			require.Equal(t, http.StatusNotFound, dan.get("/cabinet/reconciliation/sandbox/2026-01-15").status)
			require.Equal(t, http.StatusNotFound, dan.get("/cabinet/payments/"+mine.payment).status)
			a := dan.post("/cabinet/cards/"+mine.card+"/delete", url.Values{"csrf_token": {dan.token("/cabinet/")}})
			require.Equal(t, http.StatusNotFound, a.status)
			require.True(t, e.usable(t, mine.key, mine.card))
			require.NotContains(t, x.keys(), theirs.key.ID)
		})
	})
}
