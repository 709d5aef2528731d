package pages_test

import (
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/cabinet"
	"github.com/paygate/paygate/internal/store/storetest"
	"github.com/paygate/paygate/internal/subscription"
)

// clone is another tab of the same browser: the same cookies, kept apart
// from here on.
func (b *browser) clone() *browser {
	c := *b
	c.cookies = maps.Clone(b.cookies)
	c.header = b.header.Clone()
	return &c
}

// TestEveryFormNeedsItsToken: every POST of a signed-in page carries the
// anti-forgery token of this browser and this session, and every POST
// that changes data is an admin's (docs/cabinet.md, "Security choices"
// and "Roles"). A form without it, with a forged one, with the token of
// the browser's ended session, with another browser's, without the
// browser's cookie, or a viewer's own is a 403 page and changes nothing;
// the same form with the right token then does what it says.
func TestEveryFormNeedsItsToken(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{})
		ann := e.user(t, "ann@example.com", cabinet.Admin, e.a)
		admin := e.browser(t)
		admin.signIn(ann)
		ended := admin.token("/cabinet/")
		require.Equal(t, http.StatusSeeOther, admin.post("/cabinet/sign-out", url.Values{"csrf_token": {ended}}).status)
		admin.signIn(ann)
		tok := admin.token("/cabinet/")
		bob := e.signedIn(t, "bob@example.com", cabinet.Admin, e.a)
		viewer := e.signedIn(t, "vic@example.com", cabinet.Viewer, e.a)
		noBrowserCookie := admin.clone()
		delete(noBrowserCookie.cookies, "paygate_cabinet_browser")

		refusals := []struct {
			name string
			from *browser
			form url.Values
			says string
		}{
			{"no token", admin, url.Values{}, "did not come from this site"},
			{"a forged token", admin, url.Values{"csrf_token": {"forged"}}, "did not come from this site"},
			{"the token of the browser's ended session", admin, url.Values{"csrf_token": {ended}}, "did not come from this site"},
			{"another browser's token", admin, url.Values{"csrf_token": {bob.token("/cabinet/")}}, "did not come from this site"},
			{"the right token without the browser's cookie", noBrowserCookie, url.Values{"csrf_token": {tok}}, "did not come from this site"},
			{"a viewer's own token", viewer, url.Values{"csrf_token": {viewer.token("/cabinet/")}}, "Your role (viewer)"},
		}

		m := e.mandate(t, e.a, "cust-1")
		now := e.clock.Now()
		card := e.card(t, e.a, "cust-1", now)
		active, paused := e.subscription(t, m, subscription.Active, now), e.subscription(t, m, subscription.Paused, now)
		cancelable := e.subscription(t, m, subscription.Active, now)
		e.endpoint(t, e.a, "https://hooks.example/paygate")
		ev := e.event(t, e.a, "payment.succeeded", "payment", "pay_1", `{"id":"x"}`, now)
		subState := func(id string) func() string {
			return func() string {
				return fmt.Sprint(e.subscriptionStatus(t, id), storetest.EventTypes(t, e.store, e.a.ID, id))
			}
		}
		for _, c := range []struct {
			name, path string
			state      func() string
		}{
			{"delete a saved card", "/cabinet/cards/" + card.ID + "/delete",
				func() string { return fmt.Sprint("usable ", e.usable(t, e.a, card.ID)) }},
			{"pause a subscription", "/cabinet/subscriptions/" + active.ID + "/pause", subState(active.ID)},
			{"resume a subscription", "/cabinet/subscriptions/" + paused.ID + "/resume", subState(paused.ID)},
			{"cancel a subscription", "/cabinet/subscriptions/" + cancelable.ID + "/cancel", subState(cancelable.ID)},
			{"resend an event", "/cabinet/events/" + ev.ID + "/resend",
				func() string { return fmt.Sprint(e.deliveries(t, ev.ID), " deliveries") }},
		} {
			t.Run(c.name, func(t *testing.T) {
				before := c.state()
				for _, r := range refusals {
					a := r.from.post(c.path, r.form)
					require.Equal(t, http.StatusForbidden, a.status, r.name)
					require.Contains(t, a.body, r.says, r.name)
					require.Equal(t, before, c.state(), "%s changed something", r.name)
				}
				a := admin.post(c.path, url.Values{"csrf_token": {tok}})
				require.Equal(t, http.StatusSeeOther, a.status, "the right token: %s", a.body)
				require.NotEqual(t, before, c.state(), "the right token changes it")
			})
		}

		t.Run("sign out", func(t *testing.T) {
			for _, r := range refusals {
				if strings.Contains(r.name, "viewer") {
					continue // anyone may sign out
				}
				a := r.from.post("/cabinet/sign-out", r.form)
				require.Equal(t, http.StatusForbidden, a.status, r.name)
				require.Equal(t, http.StatusOK, admin.get("/cabinet/").status, "%s ended the session", r.name)
			}
			require.Equal(t, http.StatusSeeOther, admin.post("/cabinet/sign-out", url.Values{"csrf_token": {tok}}).status)
			require.Equal(t, "/cabinet/sign-in", admin.get("/cabinet/").location)
		})
	})
}
