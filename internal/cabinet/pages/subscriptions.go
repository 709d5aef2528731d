package pages

import (
	"context"
	"encoding/json"
	"errors"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/paygate/paygate/internal/cabinet"
	"github.com/paygate/paygate/internal/fault"
	"github.com/paygate/paygate/internal/merchant"
	"github.com/paygate/paygate/internal/money"
	"github.com/paygate/paygate/internal/payment"
	"github.com/paygate/paygate/internal/subscription"
)

// The subscriptions pages (docs/cabinet.md, "Subscriptions"): a key's
// subscriptions, one subscription with its mandate and its payments, and
// the pause, resume and cancel buttons, which do exactly what
// pauseSubscription (POST /subscriptions/{id}/pause), resumeSubscription
// and cancelSubscription do.

// SubscriptionQuery selects a page of one key's subscriptions, newest
// first.
type SubscriptionQuery struct {
	KeyID  string
	Status string // "": any
	// After is the (created, id) of the last subscription of the previous
	// page.
	AfterCreated *time.Time
	AfterID      string
	Limit        int
}

// ChargeQuery selects a page of a subscription's payments, newest first.
type ChargeQuery struct {
	AfterCreated *time.Time
	AfterID      string
	Limit        int
}

// SubscriptionsData is what these pages read and change;
// internal/cabinet/data adapts the store and the subscription domain to
// it. Nothing is cached.
type SubscriptionsData interface {
	ListSubscriptions(ctx context.Context, q SubscriptionQuery) ([]*subscription.Subscription, error)
	// FindSubscription finds a subscription by id, whatever key owns it;
	// nil: none.
	FindSubscription(ctx context.Context, id string) (*subscription.Subscription, error)
	// FindMandate finds the key's mandate; nil: none.
	FindMandate(ctx context.Context, keyID, id string) (*subscription.Mandate, error)
	// SubscriptionPayments lists a page of the payments that carry the
	// subscription's id: its charges, and the payment with terms that
	// started it (m's payment, when m is not nil).
	SubscriptionPayments(ctx context.Context, sub *subscription.Subscription, m *subscription.Mandate, q ChargeQuery) ([]*payment.Payment, error)
	// ActOnSubscription pauses, resumes or cancels the key's subscription
	// as the signed API does, in one transaction at the key's clock, with
	// the same events. A refusal is a *fault.Error: not_found, or
	// invalid_subscription_state when the status does not allow a.
	ActOnSubscription(ctx context.Context, key merchant.Key, id string, a subscription.Action) (*subscription.Subscription, error)
}

// subscriptionsView is the subscriptions list's template data.
type subscriptionsView struct {
	view
	Statuses []subscription.Status
	Status   string
	KeyNow   string // the key's clock, when it is not the real time
	Rows     []subscriptionRow
	Next     string // the next page's URL; "" on the last page
	First    string // the first page's URL when not on it
}

type subscriptionRow struct {
	ID, Created, Status, Amount, Every, NextRun, Until, LastDecline string
	FailedAttempts                                                  int
}

// subKeyNow is the time by the key's clock (docs/design/decisions.md
// section 14: a sandbox key's own clock; the real time in production),
// and that time written out when it is not the real time ("" otherwise).
func subKeyNow(k merchant.Key, now time.Time) (time.Time, string) {
	if keyOffset(k) == 0 {
		return now.UTC(), ""
	}
	now = now.Add(keyOffset(k)).UTC()
	return now, stamp(now)
}

func subscriptionRowOf(s *subscription.Subscription, now time.Time) subscriptionRow {
	r := subscriptionRow{ID: s.ID, Created: s.CreatedAt.UTC().Format("2006-01-02 15:04"), Status: string(s.Status),
		Amount: money.Format(s.AmountMinor, s.Currency), Every: subEvery(s.Interval), NextRun: "none",
		FailedAttempts: s.Attempt, LastDecline: s.LastDeclineCode}
	if s.NextRunAt != nil {
		r.NextRun, r.Until = s.NextRunAt.UTC().Format("2006-01-02 15:04"), subUntil(*s.NextRunAt, now)
	}
	return r
}

// subEvery says an interval in words: "1 month", "2 weeks".
func subEvery(i subscription.Interval) string {
	s := strconv.Itoa(i.Count) + " " + i.Unit
	if i.Count != 1 {
		s += "s"
	}
	return s
}

// subUntil says how far t is from the key's now: "due" once reached.
func subUntil(t, now time.Time) string {
	d := t.Sub(now)
	switch {
	case d <= 0:
		return "due"
	case d >= 48*time.Hour:
		return "in " + strconv.Itoa(int(d/(24*time.Hour))) + " days"
	case d >= 2*time.Hour:
		return "in " + strconv.Itoa(int(d/time.Hour)) + " hours"
	default:
		return "in " + strconv.Itoa(int(d/time.Minute)) + " minutes"
	}
}

// SubscriptionsPage is GET /cabinet/subscriptions: one granted key's
// subscriptions, newest first, a keyset page at a time, by status.
func (pg *Pages) SubscriptionsPage() http.Handler {
	return pg.Signed(func(w http.ResponseWriter, r *http.Request, u *cabinet.User, csrf string) {
		if pg.d.Subscriptions == nil {
			pg.notFound(w, "These pages are not served here.")
			return
		}
		base, ok := pg.scope(w, r, u, csrf, "Subscriptions")
		if !ok {
			return
		}
		v := subscriptionsView{view: base, Statuses: subscription.Statuses}
		if v.Key.ID == "" {
			pg.renderData(w, http.StatusOK, "subscriptions", v)
			return
		}
		q := r.URL.Query()
		f := SubscriptionQuery{KeyID: v.Key.ID, Limit: pageSize + 1}
		if s := q.Get("status"); slices.Contains(subscription.Statuses, subscription.Status(s)) {
			f.Status, v.Status = s, s
		}
		if f.AfterCreated, f.AfterID, ok = keysetAfter(q.Get("after")); !ok {
			pg.render(w, http.StatusBadRequest, "message", view{Title: "Bad link", Message: "This page link is not valid."})
			return
		}
		list, err := pg.d.Subscriptions.ListSubscriptions(r.Context(), f)
		if err != nil {
			pg.fail(w, err)
			return
		}
		link := url.Values{}
		if len(v.Keys) > 1 {
			link.Set("key", v.Key.ID)
		}
		if v.Status != "" {
			link.Set("status", v.Status)
		}
		if f.AfterCreated != nil {
			v.First = "/cabinet/subscriptions?" + link.Encode()
		}
		if len(list) > pageSize {
			list = list[:pageSize]
			last := list[len(list)-1]
			link.Set("after", afterValue(last.CreatedAt, last.ID))
			v.Next = "/cabinet/subscriptions?" + link.Encode()
		}
		now, shown := subKeyNow(v.Key, pg.users.Now())
		v.KeyNow = shown
		for _, s := range list {
			v.Rows = append(v.Rows, subscriptionRowOf(s, now))
		}
		pg.renderData(w, http.StatusOK, "subscriptions", v)
	})
}

// subscriptionView is one subscription's page.
type subscriptionView struct {
	view
	S        *subscription.Subscription
	Row      subscriptionRow
	Created  string
	Updated  string
	KeyNow   string
	Actions  []subscription.Action // the buttons: those the status allows, none for a viewer
	Mandate  *subscription.Mandate
	Evidence *subscription.Evidence
	Consent  string
	Charges  []chargeRow
	Next     string // the next page of payments; "" on the last
	First    string
}

type chargeRow struct {
	ID, Created, Status, Amount, Period, Attempt, Decline string
}

// subscriptionDone are the messages after a change (?done=), by action.
var subscriptionDone = map[string]string{
	string(subscription.Pause):  "Paused: nothing is charged until it is resumed.",
	string(subscription.Resume): "Resumed: charging goes on from the next period due after now.",
	string(subscription.Cancel): "Canceled: nothing will be charged again.",
}

// SubscriptionPage is GET /cabinet/subscriptions/{id}: a subscription of a
// granted key with its mandate and its payments; another key's is a 404
// page, as a missing one.
func (pg *Pages) SubscriptionPage() http.Handler {
	return pg.Signed(func(w http.ResponseWriter, r *http.Request, u *cabinet.User, csrf string) {
		v, ok := pg.subscriptionOf(w, r, u, csrf)
		if !ok {
			return
		}
		v.Message = subscriptionDone[r.URL.Query().Get("done")]
		pg.showSubscription(w, r, http.StatusOK, v)
	})
}

// subscriptionOf finds the path's subscription among the user's keys, with
// the view of its key; ok false: the answer was written.
func (pg *Pages) subscriptionOf(w http.ResponseWriter, r *http.Request, u *cabinet.User, csrf string) (subscriptionView, bool) {
	if pg.d.Subscriptions == nil {
		pg.notFound(w, "These pages are not served here.")
		return subscriptionView{}, false
	}
	s, err := pg.d.Subscriptions.FindSubscription(r.Context(), pathID(r))
	if err != nil {
		pg.fail(w, err)
		return subscriptionView{}, false
	}
	if s == nil {
		pg.notFound(w, "No such subscription among your keys.")
		return subscriptionView{}, false
	}
	base, ok := pg.scopeOf(w, r, u, csrf, "Subscription "+s.ID, s.AccessKeyID, "No such subscription among your keys.")
	if !ok {
		return subscriptionView{}, false
	}
	return subscriptionView{view: base, S: s}, true
}

// showSubscription renders v's subscription with its mandate and a page
// of its payments.
func (pg *Pages) showSubscription(w http.ResponseWriter, r *http.Request, status int, v subscriptionView) {
	s := v.S
	now, shown := subKeyNow(v.Key, pg.users.Now())
	v.Row, v.Created, v.Updated, v.KeyNow = subscriptionRowOf(s, now), stamp(s.CreatedAt), stamp(s.UpdatedAt), shown
	if v.User.Role.CanChange() {
		for _, a := range []subscription.Action{subscription.Pause, subscription.Resume, subscription.Cancel} {
			if _, ok := a.Allows(s.Status); ok {
				v.Actions = append(v.Actions, a)
			}
		}
	}
	ctx := r.Context()
	m, err := pg.d.Subscriptions.FindMandate(ctx, s.AccessKeyID, s.MandateID)
	if err != nil {
		pg.fail(w, err)
		return
	}
	if m != nil {
		v.Mandate = m
		if m.ConsentAt != nil {
			v.Consent = stamp(*m.ConsentAt)
		}
		// The evidence as getMandate (GET /mandates/{id}) shows it.
		var ev subscription.Evidence
		if len(m.Evidence) > 0 && json.Unmarshal(m.Evidence, &ev) == nil {
			v.Evidence = &ev
		}
	}
	q := ChargeQuery{Limit: pageSize + 1}
	var ok bool
	if q.AfterCreated, q.AfterID, ok = keysetAfter(r.URL.Query().Get("after")); !ok {
		pg.render(w, http.StatusBadRequest, "message", view{Title: "Bad link", Message: "This page link is not valid."})
		return
	}
	list, err := pg.d.Subscriptions.SubscriptionPayments(ctx, s, m, q)
	if err != nil {
		pg.fail(w, err)
		return
	}
	here := "/cabinet/subscriptions/" + url.PathEscape(s.ID)
	if q.AfterCreated != nil {
		v.First = here
	}
	if len(list) > pageSize {
		list = list[:pageSize]
		last := list[len(list)-1]
		v.Next = here + "?" + url.Values{"after": {afterValue(last.CreatedAt, last.ID)}}.Encode()
	}
	for _, p := range list {
		c := chargeRow{ID: p.ID, Created: p.CreatedAt.UTC().Format("2006-01-02 15:04"), Status: string(p.Status),
			Amount: money.Format(p.AmountMinor, p.Currency), Period: "terms", Decline: p.DeclineCode}
		if p.SubscriptionPeriod != nil {
			c.Period, c.Attempt = strconv.FormatInt(*p.SubscriptionPeriod, 10), strconv.Itoa(p.SubscriptionAttempt)
		}
		v.Charges = append(v.Charges, c)
	}
	pg.renderData(w, status, "subscription", v)
}

// subscriptionRefusal words a refused action, from the status the
// subscription has now.
var subscriptionRefusal = map[subscription.Action]string{
	subscription.Pause:  "paused",
	subscription.Resume: "resumed",
	subscription.Cancel: "canceled",
}

// ActOnSubscription is POST /cabinet/subscriptions/{id}/pause, /resume and
// /cancel: an admin's pause, resume or cancel, through the subscription
// domain exactly as the signed API (docs/subscriptions.md, "Statuses").
// Success redirects to the subscription's page (303); a status that does
// not allow the action answers 409 with the page and nothing changed.
func (pg *Pages) ActOnSubscription(a subscription.Action) http.Handler {
	return pg.Changing(func(w http.ResponseWriter, r *http.Request, u *cabinet.User, csrf string) {
		v, ok := pg.subscriptionOf(w, r, u, csrf)
		if !ok {
			return
		}
		_, err := pg.d.Subscriptions.ActOnSubscription(r.Context(), v.Key, v.S.ID, a)
		if f, isFault := fault.As(err); isFault && f.Code == fault.InvalidSubscriptionState {
			// Refused: show the subscription as it is now.
			s, err := pg.d.Subscriptions.FindSubscription(r.Context(), v.S.ID)
			if err != nil || s == nil {
				pg.fail(w, errors.Join(err, errors.New("the subscription vanished")))
				return
			}
			v.S = s
			v.Error = "This subscription is " + string(s.Status) + ": it cannot be " + subscriptionRefusal[a] +
				". Nothing was changed."
			pg.showSubscription(w, r, http.StatusConflict, v)
			return
		} else if isFault && f.Code == fault.NotFound {
			pg.notFound(w, "No such subscription among your keys.")
			return
		} else if err != nil {
			pg.fail(w, err)
			return
		}
		http.Redirect(w, r, "/cabinet/subscriptions/"+url.PathEscape(v.S.ID)+"?done="+string(a), http.StatusSeeOther)
	})
}

var _ = template.Must(tmpl.Parse(`
{{define "subscriptions"}}{{template "head" .}}{{template "nav" .}}<h1>Subscriptions</h1>
{{if not .Keys}}<p>No key has been granted to you yet.</p>{{else}}
<form method="get" action="/cabinet/subscriptions" class="filters">
{{template "key-field" .}}
<div><label for="status">Status</label><select id="status" name="status"><option value="">any</option>
{{range .Statuses}}<option{{if eq (print .) $.Status}} selected{{end}}>{{.}}</option>{{end}}</select></div>
<div class="actions"><button type="submit">Show</button> <a href="/cabinet/subscriptions{{.KeyParam}}">Clear</a></div></form>
{{if .KeyNow}}<p data-key-clock>This key's sandbox clock reads {{.KeyNow}}.</p>{{end}}
{{if .Rows}}<div class="scroll"><table><thead><tr><th>Created (UTC)</th><th>Status</th><th>Amount</th><th>Every</th><th>Next run (UTC)</th><th>Failed attempts</th><th>Last decline</th></tr></thead><tbody>
{{range .Rows}}<tr data-subscription="{{.ID}}"><td><a href="/cabinet/subscriptions/{{.ID}}">{{.Created}}</a><br><small><code>{{.ID}}</code></small></td><td>{{template "status" .Status}}</td><td class="num">{{.Amount}}</td><td>{{.Every}}</td><td>{{.NextRun}}{{if .Until}} <small>({{.Until}})</small>{{end}}</td><td class="num">{{.FailedAttempts}}</td><td>{{.LastDecline}}</td></tr>
{{end}}</tbody></table></div>{{else}}<p>No subscription matches.</p>{{end}}
{{if or .First .Next}}<p>{{if .First}}<a href="{{.First}}">Newest</a> {{end}}{{if .Next}}<a href="{{.Next}}" rel="next">Older</a>{{end}}</p>{{end}}
{{end}}{{template "foot" .}}{{end}}

{{define "subscription"}}{{template "head" .}}{{template "nav" .}}<h1>Subscription</h1>
{{if .Message}}<p role="status" data-done>{{.Message}}</p>{{end}}
{{if .Error}}<p class="error" role="alert">{{.Error}}</p>{{end}}
<dl data-subscription="{{.S.ID}}" data-status="{{.S.Status}}">
<dt>Id</dt><dd><code>{{.S.ID}}</code></dd>
<dt>Status</dt><dd>{{template "status" .S.Status}}</dd>
<dt>Amount</dt><dd>{{.Row.Amount}} every {{.Row.Every}}</dd>
<dt>Next run (UTC)</dt><dd>{{.Row.NextRun}}{{if .Row.Until}} ({{.Row.Until}}), period {{.S.Period}}{{end}}</dd>
{{if .KeyNow}}<dt>This key's sandbox clock</dt><dd data-key-clock>{{.KeyNow}}</dd>{{end}}
<dt>Failed attempts</dt><dd>{{.S.Attempt}}</dd>
{{if .S.LastDeclineCode}}<dt>Last decline</dt><dd>{{.S.LastDeclineCode}}</dd>{{end}}
<dt>Created</dt><dd>{{.Created}}</dd>
<dt>Updated</dt><dd>{{.Updated}}</dd>
</dl>
{{if .Actions}}<p>{{range .Actions}}<form method="post" class="inline" action="/cabinet/subscriptions/{{$.S.ID}}/{{.}}"><input type="hidden" name="csrf_token" value="{{$.CSRF}}"><button type="submit" data-action="{{.}}">{{if eq (print .) "pause"}}Pause{{else if eq (print .) "resume"}}Resume{{else}}Cancel{{end}}</button></form> {{end}}</p>{{end}}
<h2>Mandate</h2>
{{with .Mandate}}<dl data-mandate="{{.ID}}">
<dt>Id</dt><dd><code>{{.ID}}</code></dd>
<dt>Status</dt><dd>{{template "status" .Status}}</dd>
<dt>Card</dt><dd>{{if .CardMask}}{{.CardMask}}, expires {{printf "%02d" .CardExpMonth}}/{{.CardExpYear}}{{else}}none yet{{end}}</dd>
{{if .CustomerReference}}<dt>Customer reference</dt><dd>{{.CustomerReference}}</dd>{{end}}
<dt>Disclosure version</dt><dd>{{.DisclosureVersion}}</dd>
<dt>Consent given (UTC)</dt><dd>{{if $.Consent}}{{$.Consent}}{{else}}not yet{{end}}</dd>
{{with $.Evidence}}<dt>Consent evidence</dt><dd>{{if eq .Channel "hosted_page"}}on the hosted page{{else}}{{.Channel}} (the merchant vouches for it){{end}}{{if .ConsentBox}}, consent box ticked{{end}}{{if .PayerIP}}; payer IP {{.PayerIP}}{{end}}{{if .UserAgent}}; {{.UserAgent}}{{end}}</dd>{{end}}
<dt>Payment with the terms</dt><dd><a href="/cabinet/payments/{{.PaymentID}}"><code>{{.PaymentID}}</code></a></dd>
</dl>{{else}}<p>Not found.</p>{{end}}
<h2>Payments</h2>
{{if .Charges}}<div class="scroll"><table><thead><tr><th>Created (UTC)</th><th>Period</th><th>Attempt</th><th>Status</th><th>Amount</th><th>Decline</th></tr></thead><tbody>
{{range .Charges}}<tr data-charge="{{.ID}}"><td><a href="/cabinet/payments/{{.ID}}">{{.Created}}</a></td><td>{{.Period}}</td><td>{{.Attempt}}</td><td>{{template "status" .Status}}</td><td class="num">{{.Amount}}</td><td>{{.Decline}}</td></tr>
{{end}}</tbody></table></div>{{else}}<p>None yet.</p>{{end}}
{{if or .First .Next}}<p>{{if .First}}<a href="{{.First}}">Newest</a> {{end}}{{if .Next}}<a href="{{.Next}}" rel="next">Older</a>{{end}}</p>{{end}}
<p><a href="/cabinet/subscriptions{{.KeyParam}}">All subscriptions</a></p>
{{template "foot" .}}{{end}}
`))
