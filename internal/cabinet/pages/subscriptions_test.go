package pages_test

import (
	"context"
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/cabinet"
	"github.com/paygate/paygate/internal/store"
	"github.com/paygate/paygate/internal/store/storetest"
	"github.com/paygate/paygate/internal/subscription"
)

var actionRE = regexp.MustCompile(`data-action="([a-z]+)"`)

// TestSubscriptionButtons: a subscription's page offers an admin the
// buttons its status allows and a viewer none (docs/cabinet.md,
// "Subscriptions": Pause for active and past_due, Resume for paused,
// Cancel for incomplete, active, past_due and paused).
func TestSubscriptionButtons(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{})
		m := e.mandate(t, e.a, "cust-1")
		admin := e.signedIn(t, "ann@example.com", cabinet.Admin, e.a)
		viewer := e.signedIn(t, "vic@example.com", cabinet.Viewer, e.a)
		for _, c := range []struct {
			status subscription.Status
			admin  []string
		}{
			{subscription.Incomplete, []string{"cancel"}},
			{subscription.Active, []string{"pause", "cancel"}},
			{subscription.PastDue, []string{"pause", "cancel"}},
			{subscription.Paused, []string{"resume", "cancel"}},
			{subscription.Canceled, nil},
			{subscription.Completed, nil},
		} {
			t.Run(string(c.status), func(t *testing.T) {
				path := "/cabinet/subscriptions/" + e.subscription(t, m, c.status, e.clock.Now()).ID
				a := admin.get(path)
				require.Equal(t, http.StatusOK, a.status)
				require.Equal(t, c.admin, rows(actionRE, a.body), "an admin's buttons")
				a = viewer.get(path)
				require.Equal(t, http.StatusOK, a.status)
				require.Empty(t, rows(actionRE, a.body), "a viewer's")
			})
		}
	})
}

// TestSubscriptionNextRun: the next run says how far it is by the key's
// clock, "due" once that clock has reached it, and a page of a key whose
// sandbox clock runs ahead says what that clock reads (docs/cabinet.md,
// "Subscriptions"; docs/design/decisions.md section 14).
func TestSubscriptionNextRun(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{})
		ctx := context.Background()
		const ahead = 10 * 24 * time.Hour
		require.NoError(t, e.store.InTx(ctx, func(tx *store.Tx) error { return tx.SetKeyClockOffset(ctx, e.b.ID, ahead) }))
		b := e.signedIn(t, "ann@example.com", cabinet.Viewer, e.a, e.b)
		now := e.clock.Now()
		for _, c := range []struct {
			name  string
			key   string
			in    time.Duration // from the real time
			until string
		}{
			{"days", e.a.ID, 3*24*time.Hour + time.Hour, "(in 3 days)"},
			{"hours", e.a.ID, 5*time.Hour + time.Minute, "(in 5 hours)"},
			{"minutes", e.a.ID, 30*time.Minute + time.Second, "(in 30 minutes)"},
			{"reached", e.a.ID, -time.Minute, "(due)"},
			{"reached by the key's clock only", e.b.ID, 3 * 24 * time.Hour, "(due)"},
			{"days by the key's clock", e.b.ID, ahead + 2*24*time.Hour + time.Hour, "(in 2 days)"},
		} {
			t.Run(c.name, func(t *testing.T) {
				k := e.a
				if c.key == e.b.ID {
					k = e.b
				}
				s := e.subscription(t, e.mandate(t, k, "cust-1"), subscription.Active, now)
				next := now.Add(c.in)
				s.NextRunAt = &next
				require.NoError(t, e.store.InTx(ctx, func(tx *store.Tx) error { return tx.UpdateSubscription(ctx, s) }))

				a := b.get("/cabinet/subscriptions/" + s.ID)
				require.Equal(t, http.StatusOK, a.status)
				require.Contains(t, a.body, next.UTC().Format("2006-01-02 15:04")+" "+c.until)
				a = b.get("/cabinet/subscriptions?key=" + c.key)
				require.Regexp(t, `data-subscription="`+s.ID+`">[^\n]*`+regexp.QuoteMeta(c.until), a.body)
				reads := "This key's sandbox clock reads " + now.Add(ahead).Format("2006-01-02 15:04:05 UTC")
				if k.ID == e.b.ID {
					require.Contains(t, a.body, reads)
				} else {
					require.NotContains(t, a.body, "This key's sandbox clock")
				}
			})
		}
	})
}

// TestConfirmations: what a page says was done comes from the pages' own
// words for a known action, never from the URL (docs/cabinet.md, "Saved
// cards", "Subscriptions", "Resend"): a link cannot make a page claim a
// change that did not happen in other words.
func TestConfirmations(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{})
		now := e.clock.Now()
		sub := e.subscription(t, e.mandate(t, e.a, "cust-1"), subscription.Active, now)
		ev := e.event(t, e.a, "payment.succeeded", "payment", "pay_1", `{}`, now)
		b := e.signedIn(t, "ann@example.com", cabinet.Viewer, e.a)
		for _, c := range []struct {
			name, path, says string
		}{
			{"a card deleted", "/cabinet/cards?done=deleted", "The saved card was deleted: it can no longer be used."},
			{"a subscription paused", "/cabinet/subscriptions/" + sub.ID + "?done=pause", "Paused: nothing is charged until it is resumed."},
			{"a subscription resumed", "/cabinet/subscriptions/" + sub.ID + "?done=resume", "Resumed: charging goes on from the next period due after now."},
			{"a subscription canceled", "/cabinet/subscriptions/" + sub.ID + "?done=cancel", "Canceled: nothing will be charged again."},
			{"an event resent", "/cabinet/events/" + ev.ID + "?done=resent", "Queued for delivery again: the attempts appear below."},
			{"words of the URL on the cards", "/cabinet/cards?done=Your+card+was+stolen", ""},
			{"an action no page does", "/cabinet/subscriptions/" + sub.ID + "?done=refund", ""},
			{"words of the URL on an event", "/cabinet/events/" + ev.ID + "?done=Call+us", ""},
		} {
			t.Run(c.name, func(t *testing.T) {
				a := b.get(c.path)
				require.Equal(t, http.StatusOK, a.status)
				if c.says == "" {
					require.NotContains(t, a.body, `role="status"`)
					require.NotContains(t, a.body, "stolen")
					require.NotContains(t, a.body, "Call us")
					return
				}
				require.Regexp(t, `role="status"[^>]*>`+regexp.QuoteMeta(c.says)+`</p>`, a.body)
			})
		}
	})
}
