package pages

import (
	"context"
	"html/template"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/paygate/paygate/internal/cabinet"
	"github.com/paygate/paygate/internal/money"
	"github.com/paygate/paygate/internal/payout"
	"github.com/paygate/paygate/internal/verification"
)

// The verifications and payouts pages (docs/cabinet.md, "Verifications"
// and "Payouts"): the shown key's card verifications and payouts, newest
// first, with a status filter, and each one's page with its events. They
// show what getCardVerification (GET /card-verifications/{id}) and
// getPayout (GET /payouts/{id}) answer, and no more: masks, never a card
// number, a code or a wallet payload (the domain types hold none). Nothing
// here changes data.

// ActivityQuery selects a page of one key's verifications or payouts,
// newest first.
type ActivityQuery struct {
	KeyID  string
	Status string // "" for every status
	// After is the (created, id) of the last row of the previous page.
	AfterCreated *time.Time
	AfterID      string
	Limit        int
}

// ActivityData is what these pages read; internal/cabinet/data adapts the
// store to it. Nothing is cached.
type ActivityData interface {
	ListVerifications(ctx context.Context, q ActivityQuery) ([]*verification.Verification, error)
	// FindVerification finds a verification by id, whatever key owns it;
	// nil: none.
	FindVerification(ctx context.Context, id string) (*verification.Verification, error)
	ListPayouts(ctx context.Context, q ActivityQuery) ([]*payout.Payout, error)
	// FindPayout finds a payout by id, whatever key owns it; nil: none.
	FindPayout(ctx context.Context, id string) (*payout.Payout, error)
	// ResourceEvents lists the key's events about one resource, newest
	// first, with their delivery attempts.
	ResourceEvents(ctx context.Context, keyID, resourceID string) ([]Event, error)
}

// VerificationsPage is GET /cabinet/verifications: the shown key's card
// verifications.
func (pg *Pages) VerificationsPage() http.Handler { return pg.activityList(verificationPages) }

// VerificationPage is GET /cabinet/verifications/{id}: one verification
// with its events.
func (pg *Pages) VerificationPage() http.Handler { return pg.activityPage(verificationPages) }

// PayoutsPage is GET /cabinet/payouts: the shown key's payouts.
func (pg *Pages) PayoutsPage() http.Handler { return pg.activityList(payoutPages) }

// PayoutPage is GET /cabinet/payouts/{id}: one payout with its events.
func (pg *Pages) PayoutPage() http.Handler { return pg.activityPage(payoutPages) }

// activityItem is a verification or a payout as these pages show it: the
// fields of its API answer (CardVerification, Payout) that concern staff.
type activityItem struct {
	ID, OrderID, Status  string
	Final                bool
	Card                 string // the mask; "" for a wallet payout
	Decline, DeclineText string
	Created, Updated     string
	BankPaymentID        string
	BankName             string
	// Verifications only.
	Attempts int
	Expires  string // while a code is awaited
	// Payouts only.
	Amount, Account, Method string

	keyID     string
	createdAt time.Time
}

// Destination is where a payout's money goes: the card's mask, or the
// wallet's kind (apple_pay...).
func (it activityItem) Destination() string {
	if it.Card != "" {
		return it.Card
	}
	return it.Method
}

func verificationItem(v *verification.Verification) activityItem {
	it := activityItem{ID: v.ID, OrderID: v.OrderID, Status: string(v.Status), Final: v.Status.Final(), Card: v.CardMask,
		Decline: v.DeclineCode, Attempts: v.VerifyAttempts, Created: stamp(v.CreatedAt), Updated: stamp(v.UpdatedAt),
		keyID: v.AccessKeyID, createdAt: v.CreatedAt}
	if v.DeclineCode != "" {
		it.DeclineText = verification.ClientDescription(v)
	}
	// Only a verification awaiting its code expires (docs/design/decisions.md
	// section 15).
	if v.Status == verification.CodeSent {
		it.Expires = stamp(v.ExpiresAt)
	}
	if b := v.BankReference; b != nil {
		it.BankPaymentID, it.BankName = b.PaymentID, b.Name
	}
	return it
}

func payoutItem(p *payout.Payout) activityItem {
	it := activityItem{ID: p.ID, OrderID: p.OrderID, Status: string(p.Status), Final: p.Status.Final(), Card: p.CardMask,
		Decline: p.DeclineCode, Created: stamp(p.CreatedAt), Updated: stamp(p.UpdatedAt),
		Amount: money.Format(p.AmountMinor, p.Currency), Account: p.Account, Method: p.Method,
		keyID: p.AccessKeyID, createdAt: p.CreatedAt}
	if p.DeclineCode != "" {
		it.DeclineText = p.ClientDescription
	}
	if b := p.BankReference; b != nil {
		it.BankPaymentID, it.BankName = b.PaymentID, b.Name
	}
	return it
}

// activityKind is what differs between the verifications and the payouts
// pages.
type activityKind struct {
	path, title, one string // "/cabinet/payouts", "Payouts", "Payout"
	list, page       string // the templates
	statuses         []string
	listRows         func(ctx context.Context, d ActivityData, q ActivityQuery) ([]activityItem, error)
	find             func(ctx context.Context, d ActivityData, id string) (*activityItem, error)
}

var verificationPages = activityKind{path: "/cabinet/verifications", title: "Verifications", one: "Verification",
	list: "verifications", page: "verification",
	statuses: []string{string(verification.Pending), string(verification.CodeSent), string(verification.Verified),
		string(verification.Failed), string(verification.ManualReview)},
	listRows: func(ctx context.Context, d ActivityData, q ActivityQuery) ([]activityItem, error) {
		vs, err := d.ListVerifications(ctx, q)
		return activityItems(vs, verificationItem), err
	},
	find: func(ctx context.Context, d ActivityData, id string) (*activityItem, error) {
		v, err := d.FindVerification(ctx, id)
		return activityItemOf(v, verificationItem), err
	},
}

var payoutPages = activityKind{path: "/cabinet/payouts", title: "Payouts", one: "Payout",
	list: "payouts", page: "payout",
	statuses: func() []string {
		out := make([]string, len(payout.Statuses))
		for i, s := range payout.Statuses {
			out[i] = string(s)
		}
		return out
	}(),
	listRows: func(ctx context.Context, d ActivityData, q ActivityQuery) ([]activityItem, error) {
		ps, err := d.ListPayouts(ctx, q)
		return activityItems(ps, payoutItem), err
	},
	find: func(ctx context.Context, d ActivityData, id string) (*activityItem, error) {
		p, err := d.FindPayout(ctx, id)
		return activityItemOf(p, payoutItem), err
	},
}

func activityItems[T any](xs []*T, f func(*T) activityItem) []activityItem {
	out := make([]activityItem, len(xs))
	for i, x := range xs {
		out[i] = f(x)
	}
	return out
}

// activityItemOf is f(x), or nil when x is.
func activityItemOf[T any](x *T, f func(*T) activityItem) *activityItem {
	if x == nil {
		return nil
	}
	it := f(x)
	return &it
}

// activityListView is a list page's template data.
type activityListView struct {
	view
	Path        string // the list's
	Statuses    []string
	Status      string
	Rows        []activityItem
	Next, First string
}

// activityList serves GET /cabinet/verifications and GET /cabinet/payouts:
// the shown key's rows, newest first, of one status if asked, a keyset
// page at a time.
func (pg *Pages) activityList(k activityKind) http.Handler {
	return pg.Signed(func(w http.ResponseWriter, r *http.Request, u *cabinet.User, csrf string) {
		if pg.d.Activity == nil {
			pg.notFound(w, "These pages are not served here.")
			return
		}
		base, ok := pg.scope(w, r, u, csrf, k.title)
		if !ok {
			return
		}
		v := activityListView{view: base, Statuses: k.statuses, Path: k.path}
		if v.Key.ID == "" {
			pg.renderData(w, http.StatusOK, k.list, v)
			return
		}
		q := r.URL.Query()
		f := ActivityQuery{KeyID: v.Key.ID, Limit: pageSize + 1}
		if s := q.Get("status"); slices.Contains(k.statuses, s) {
			f.Status, v.Status = s, s
		}
		if f.AfterCreated, f.AfterID, ok = keysetAfter(q.Get("after")); !ok {
			pg.badLink(w)
			return
		}
		rows, err := k.listRows(r.Context(), pg.d.Activity, f)
		if err != nil {
			pg.fail(w, err)
			return
		}
		more := len(rows) > pageSize
		if more {
			rows = rows[:pageSize]
		}
		v.Rows = rows
		var last activityItem
		if len(rows) > 0 {
			last = rows[len(rows)-1]
		}
		v.First, v.Next = keysetLinks(k.path, listLink(v.view, "status", v.Status), f.AfterCreated != nil, more,
			last.createdAt, last.ID)
		pg.renderData(w, http.StatusOK, k.list, v)
	})
}

// activityPageView is a verification's or a payout's page.
type activityPageView struct {
	view
	It     activityItem
	Events []Event
	Path   string // the list's
}

// activityPage serves GET /cabinet/verifications/{id} and GET
// /cabinet/payouts/{id}: one of a granted key's, with its events and their
// delivery attempts. Another key's is as unknown as a missing one
// (docs/design/decisions.md section 13).
func (pg *Pages) activityPage(k activityKind) http.Handler {
	return pg.Signed(func(w http.ResponseWriter, r *http.Request, u *cabinet.User, csrf string) {
		if pg.d.Activity == nil {
			pg.notFound(w, "These pages are not served here.")
			return
		}
		it, err := k.find(r.Context(), pg.d.Activity, pathID(r))
		if err != nil {
			pg.fail(w, err)
			return
		}
		missing := "No such " + strings.ToLower(k.one) + " among your keys."
		if it == nil {
			pg.notFound(w, missing)
			return
		}
		base, ok := pg.scopeOf(w, r, u, csrf, k.one+" "+it.ID, it.keyID, missing)
		if !ok {
			return
		}
		events, err := pg.d.Activity.ResourceEvents(r.Context(), it.keyID, it.ID)
		if err != nil {
			pg.fail(w, err)
			return
		}
		pg.renderData(w, http.StatusOK, k.page, activityPageView{view: base, It: *it, Events: events, Path: k.path})
	})
}

var _ = template.Must(tmpl.Parse(`
{{define "activity-filter"}}<form method="get" action="{{.Path}}" class="filters">{{template "key-field" .}}
<div><label for="status">Status</label><select id="status" name="status"><option value="">any</option>
{{range .Statuses}}<option{{if eq . $.Status}} selected{{end}}>{{.}}</option>{{end}}</select></div>
<div class="actions"><button type="submit">Show</button> <a href="{{.Path}}{{.KeyParam}}">Clear</a></div></form>{{end}}

{{define "activity-pager"}}<p>{{if .First}}<a href="{{.First}}">Newest</a> {{end}}{{if .Next}}<a href="{{.Next}}" rel="next">Older</a>{{end}}</p>{{end}}

{{define "verifications"}}{{template "head" .}}{{template "nav" .}}<h1>Card verifications</h1>
{{if not .Keys}}<p>No key has been granted to you yet.</p>{{else}}
{{template "activity-filter" .}}
{{if .Rows}}<div class="scroll"><table><thead><tr><th>Created</th><th>Status</th><th>Card</th><th>Codes tried</th><th>Code awaited until</th><th>Decline</th><th>Order id</th></tr></thead><tbody>
{{range .Rows}}<tr data-verification="{{.ID}}"><td><a href="/cabinet/verifications/{{.ID}}{{$.KeyParam}}">{{.Created}}</a></td><td>{{template "status" .Status}}</td><td>{{.Card}}</td><td class="num">{{.Attempts}}</td><td>{{.Expires}}</td><td>{{.Decline}}</td><td>{{.OrderID}}</td></tr>
{{end}}</tbody></table></div>{{else}}<p>No card verification matches.</p>{{end}}
{{template "activity-pager" .}}{{end}}{{template "foot" .}}{{end}}

{{define "payouts"}}{{template "head" .}}{{template "nav" .}}<h1>Payouts</h1>
{{if not .Keys}}<p>No key has been granted to you yet.</p>{{else}}
{{template "activity-filter" .}}
{{if .Rows}}<div class="scroll"><table><thead><tr><th>Created</th><th>Status</th><th>Amount</th><th>To</th><th>Decline</th><th>Order id</th></tr></thead><tbody>
{{range .Rows}}<tr data-payout="{{.ID}}"><td><a href="/cabinet/payouts/{{.ID}}{{$.KeyParam}}">{{.Created}}</a></td><td>{{template "status" .Status}}</td><td class="num">{{.Amount}}</td><td>{{.Destination}}</td><td>{{.Decline}}</td><td>{{.OrderID}}</td></tr>
{{end}}</tbody></table></div>{{else}}<p>No payout matches.</p>{{end}}
{{template "activity-pager" .}}{{end}}{{template "foot" .}}{{end}}

{{define "activity-common"}}<dt>Id</dt><dd><code>{{.It.ID}}</code></dd>
<dt>Order id</dt><dd>{{.It.OrderID}}</dd>
<dt>Status</dt><dd data-status="{{.It.Status}}">{{template "status" .It.Status}}{{if .It.Final}} (final){{end}}</dd>{{end}}

{{define "activity-tail"}}{{if .It.Decline}}<dt>Decline</dt><dd>{{.It.Decline}}{{if .It.DeclineText}}: {{.It.DeclineText}}{{end}}</dd>{{end}}
{{if or .It.BankPaymentID .It.BankName}}<dt>Bank reference</dt><dd>{{.It.BankPaymentID}}{{if .It.BankName}} ({{.It.BankName}}){{end}}</dd>{{end}}
<dt>Created</dt><dd>{{.It.Created}}</dd>
<dt>Updated</dt><dd>{{.It.Updated}}</dd>
</dl>
<h2>Events</h2>
{{if .Events}}<ul class="events">{{range .Events}}<li data-event="{{.ID}}"><strong>{{.Type}}</strong> {{.CreatedAt.UTC.Format "2006-01-02 15:04:05"}} <code>{{.ID}}</code>
{{if .Attempts}}<ul>{{range .Attempts}}<li>{{.At.UTC.Format "15:04:05"}} → {{if .StatusCode}}HTTP {{.StatusCode}}{{else}}no answer ({{.Error}}){{end}}</li>{{end}}</ul>{{else}}<br><small>no delivery attempt</small>{{end}}</li>
{{end}}</ul>{{else}}<p>None.</p>{{end}}
<p><a href="{{.Path}}{{.KeyParam}}">Back to the list</a></p>{{end}}

{{define "verification"}}{{template "head" .}}{{template "nav" .}}<h1>Card verification</h1>
<dl>{{template "activity-common" .}}
{{if .It.Card}}<dt>Card</dt><dd>{{.It.Card}}</dd>{{end}}
<dt>Codes tried</dt><dd>{{.It.Attempts}}</dd>
{{if .It.Expires}}<dt>Code awaited until</dt><dd>{{.It.Expires}}</dd>{{end}}
{{template "activity-tail" .}}{{template "foot" .}}{{end}}

{{define "payout"}}{{template "head" .}}{{template "nav" .}}<h1>Payout</h1>
<dl>{{template "activity-common" .}}
<dt>Amount</dt><dd>{{.It.Amount}}</dd>
<dt>Method</dt><dd>{{.It.Method}}</dd>
{{if .It.Card}}<dt>Card</dt><dd>{{.It.Card}}</dd>{{end}}
{{if .It.Account}}<dt>Account</dt><dd>{{.It.Account}}</dd>{{end}}
{{template "activity-tail" .}}{{template "foot" .}}{{end}}
`))
