package pages

import (
	"context"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/paygate/paygate/internal/cabinet"
	"github.com/paygate/paygate/internal/money"
	"github.com/paygate/paygate/internal/operation"
	"github.com/paygate/paygate/internal/payment"
)

// The payments pages (docs/cabinet.md, Payments): a key's payments with
// filters, a chart of payments per day by status, and one payment's detail.
// Every request checks the key against the user's grants, read from the
// database with the session; another key's payment is a 404 page.

// PaymentQuery selects a page of one key's payments, newest first.
type PaymentQuery struct {
	KeyID  string
	Status string
	From   *time.Time // created at or after
	Before *time.Time // created before
	// Search matches a payment id, order_id or customer_reference exactly.
	Search string
	// After is the (created, id) of the last payment of the previous page.
	AfterCreated *time.Time
	AfterID      string
	Limit        int
}

// DayCount is how many of a key's payments of one status were created on
// one UTC day.
type DayCount struct {
	Day    time.Time
	Status string
	Count  int
}

// Attempt is one delivery attempt of an event.
type Attempt struct {
	EndpointID string
	At         time.Time
	StatusCode int    // 0: no answer
	Error      string // why no answer came
}

// Event is one of a payment's events with its delivery attempts.
type Event struct {
	ID, Type  string
	CreatedAt time.Time
	Attempts  []Attempt
}

// Detail is what a payment's page shows besides the payment.
type Detail struct {
	Operations []operation.Operation
	// Attempts are the payment's tries, one channel each, oldest first
	// (docs/design/decisions.md section 17).
	Attempts []payment.Attempt
	Refunds  []payment.Refund
	Events   []Event
}

// PaymentsReader is what the payments pages read; internal/cabinet/data
// adapts the store to it. Nothing is cached: a payment is listed as soon
// as it is stored.
type PaymentsReader interface {
	ListPayments(ctx context.Context, q PaymentQuery) ([]*payment.Payment, error)
	// PaymentsPerDay counts the key's payments created in [from, to) per
	// UTC day and status (status "" counts all), in one query.
	PaymentsPerDay(ctx context.Context, keyID, status string, from, to time.Time) ([]DayCount, error)
	// FindPayment finds a payment by id, whatever key owns it; nil: none.
	FindPayment(ctx context.Context, id string) (*payment.Payment, error)
	PaymentDetail(ctx context.Context, p *payment.Payment) (Detail, error)
	// Totals are getPaymentTotals (GET /cabinet/v1/payments/totals) of the
	// payments q selects.
	Totals(ctx context.Context, q PaymentQuery) ([]CurrencyTotals, error)
}

// CurrencyTotals are one currency's totals of the filtered payments, as
// getPaymentTotals (GET /cabinet/v1/payments/totals) counts them.
type CurrencyTotals struct {
	Currency                                     string
	Count, SucceededCount, DeclinedCount         int64
	SucceededMinor, CapturedMinor, RefundedMinor money.Sum
}

const (
	pageSize = 50
	// chartDays caps the chart's range; a longer filter charts its last
	// chartDays days.
	chartDays = 90
	// defaultChartDays is the chart's range when the filter names none.
	defaultChartDays = 30
	dateLayout       = "2006-01-02"
)

// statuses are the payment statuses the filter offers.
var statuses = []payment.Status{payment.Created, payment.AwaitingPaymentData, payment.Processing,
	payment.RequiresAction, payment.Authorized, payment.Succeeded, payment.Declined, payment.Failed,
	payment.Canceled, payment.Expired, payment.ManualReview, payment.PartiallyRefunded, payment.Refunded}

// paymentsView is the payments list's template data.
type paymentsView struct {
	view
	Statuses []payment.Status
	Status   string
	From, To string
	Search   string
	Rows     []paymentRow
	Next     string // the next page's URL; "" on the last page
	First    string // the first page's URL when not on it
	Export   string // the filtered view's CSV
	Totals   string // the filtered view's totals page
	Chart    chart
	Problem  string // a filter that could not be read
}

type paymentRow struct {
	ID, Created, Status, Amount, OrderID, CustomerReference, MaskedCard string
}

func row(p *payment.Payment) paymentRow {
	return paymentRow{ID: p.ID, Created: p.CreatedAt.UTC().Format("2006-01-02 15:04"), Status: string(p.Status),
		Amount: money.Format(p.AmountMinor, p.Currency), OrderID: p.OrderID, CustomerReference: p.CustomerReference,
		MaskedCard: p.MaskedCard}
}

func (pg *Pages) notFound(w http.ResponseWriter, msg string) {
	pg.render(w, http.StatusNotFound, "message", view{Title: "Not found", Message: msg})
}

// PaymentsPage is GET /cabinet/payments: one granted key's payments,
// filtered, a keyset page at a time, with the chart of the filtered range.
func (pg *Pages) PaymentsPage() http.Handler {
	return pg.Signed(func(w http.ResponseWriter, r *http.Request, u *cabinet.User, csrf string) {
		if pg.payments == nil {
			pg.notFound(w, "These pages are not served here.")
			return
		}
		base, ok := pg.scope(w, r, u, csrf, "Payments")
		if !ok {
			return
		}
		v := paymentsView{view: base, Statuses: statuses}
		if v.Key.ID == "" {
			pg.renderData(w, http.StatusOK, "payments", v)
			return
		}
		f, link := v.filter(r.URL.Query())
		f.Limit = pageSize + 1
		if f.AfterCreated, f.AfterID, ok = keysetAfter(r.URL.Query().Get("after")); !ok {
			pg.badLink(w)
			return
		}
		list, err := pg.payments.ListPayments(r.Context(), f)
		if err != nil {
			pg.fail(w, err)
			return
		}
		v.Export = "/cabinet/payments/export?" + link.Encode()
		v.Totals = "/cabinet/payments/totals?" + link.Encode()
		if f.AfterCreated != nil {
			v.First = "/cabinet/payments?" + link.Encode()
		}
		if len(list) > pageSize {
			list = list[:pageSize]
			last := list[len(list)-1]
			link.Set("after", afterValue(last.CreatedAt, last.ID))
			v.Next = "/cabinet/payments?" + link.Encode()
		}
		for _, p := range list {
			v.Rows = append(v.Rows, row(p))
		}
		start, end := chartRange(f.From, f.Before, pg.users.Now().Add(keyOffset(v.Key)).UTC())
		counts, err := pg.payments.PaymentsPerDay(r.Context(), v.Key.ID, f.Status, start, end)
		if err != nil {
			pg.fail(w, err)
			return
		}
		v.Chart = drawChart(start, end, counts, f.From != nil && start.After(*f.From))
		pg.renderData(w, http.StatusOK, "payments", v)
	})
}

// filter reads the page's filters from the query into v and a query (its
// Limit and keyset bound unset), and returns the link query that keeps
// them (and the key when the user has several).
func (v *paymentsView) filter(q url.Values) (PaymentQuery, url.Values) {
	f := PaymentQuery{KeyID: v.Key.ID, Search: strings.TrimSpace(q.Get("q"))}
	badSearch := !storable(f.Search)
	if badSearch {
		f.Search = ""
	}
	v.Search = f.Search
	if s := q.Get("status"); slices.Contains(statuses, payment.Status(s)) {
		f.Status, v.Status = s, s
	}
	from, to, problem := dates(q.Get("from"), q.Get("to"))
	v.Problem = problem
	if badSearch {
		v.Problem = "The search is not text (invalid UTF-8 or a NUL) and was left out."
	}
	if from != nil {
		f.From, v.From = from, from.Format(dateLayout)
	}
	if to != nil {
		before := to.AddDate(0, 0, 1) // the "to" day is included
		f.Before, v.To = &before, to.Format(dateLayout)
	}
	link := url.Values{}
	if len(v.Keys) > 1 {
		link.Set("key", v.Key.ID)
	}
	for k, s := range map[string]string{"status": v.Status, "from": v.From, "to": v.To, "q": v.Search} {
		if s != "" {
			link.Set(k, s)
		}
	}
	return f, link
}

// dates reads the filter's dates (YYYY-MM-DD, UTC); a date that does not
// parse is left out and said.
func dates(from, to string) (*time.Time, *time.Time, string) {
	var out [2]*time.Time
	problem := ""
	for i, s := range []string{from, to} {
		if s == "" {
			continue
		}
		t, err := time.Parse(dateLayout, s)
		if err != nil {
			problem = "Dates are written YYYY-MM-DD; " + strconv.Quote(s) + " was left out."
			continue
		}
		out[i] = &t
	}
	return out[0], out[1], problem
}

// chartRange is the chart's [start, end) in whole UTC days: the filter's
// range, its last chartDays days when longer, the last defaultChartDays
// days when it names none.
func chartRange(from, before *time.Time, now time.Time) (time.Time, time.Time) {
	end := now.Truncate(24*time.Hour).AddDate(0, 0, 1)
	if before != nil {
		end = *before
	}
	start := end.AddDate(0, 0, -defaultChartDays)
	if from != nil {
		start = *from
	}
	if end.Sub(start) > chartDays*24*time.Hour {
		start = end.AddDate(0, 0, -chartDays)
	}
	if !start.Before(end) {
		start = end.AddDate(0, 0, -1)
	}
	return start, end
}

// chart is a stacked bar chart of payments per day by status, drawn as
// inline SVG on the server: no script, nothing the CSP must allow.
type chart struct {
	Width, Height int
	Bars          []bar
	Legend        []legend
	From, To      string // the days shown, inclusive
	Capped        bool
	Total         int
	Label         string
}

type bar struct {
	X, Y, W, H int
	Fill       string
	Day        string
	Status     string
	Count      int
}

type legend struct {
	Status string
	Fill   string
	Count  int
}

// colors of the statuses; the others are grey.
var colors = map[string]string{
	string(payment.Succeeded): "#2e7d32", string(payment.Authorized): "#81c784",
	string(payment.Declined): "#c62828", string(payment.Failed): "#ef6c00",
	string(payment.Refunded): "#6a1b9a", string(payment.PartiallyRefunded): "#ab47bc",
	string(payment.Processing): "#1565c0", string(payment.RequiresAction): "#42a5f5",
	string(payment.Canceled): "#757575", string(payment.Expired): "#9e9e9e",
}

func color(status string) string {
	if c, ok := colors[status]; ok {
		return c
	}
	return "#bdbdbd"
}

func drawChart(start, end time.Time, counts []DayCount, capped bool) chart {
	days := int(end.Sub(start) / (24 * time.Hour))
	const slot, height = 8, 120
	c := chart{Width: days * slot, Height: height, Capped: capped, From: start.Format(dateLayout),
		To: end.AddDate(0, 0, -1).Format(dateLayout)}
	perDay := map[int]int{}
	perStatus := map[string]int{}
	for _, d := range counts {
		perDay[int(d.Day.Sub(start)/(24*time.Hour))] += d.Count
		perStatus[d.Status] += d.Count
		c.Total += d.Count
	}
	top := 1
	for _, n := range perDay {
		top = max(top, n)
	}
	stacked := map[int]int{}
	for _, d := range counts { // oldest day first, then by status
		i := int(d.Day.Sub(start) / (24 * time.Hour))
		h := max(1, d.Count*height/top)
		stacked[i] += h
		c.Bars = append(c.Bars, bar{X: i * slot, Y: height - stacked[i], W: slot - 1, H: h, Fill: color(d.Status),
			Day: d.Day.Format(dateLayout), Status: d.Status, Count: d.Count})
	}
	for _, s := range statuses {
		if n := perStatus[string(s)]; n > 0 {
			c.Legend = append(c.Legend, legend{Status: string(s), Fill: color(string(s)), Count: n})
		}
	}
	c.Label = fmt.Sprintf("Payments per day by status, %s to %s: %d in all", c.From, c.To, c.Total)
	return c
}

// detailView is a payment's page.
type detailView struct {
	view
	P          *payment.Payment
	Amount     string
	Captured   string
	Refunded   string
	Created    string
	Updated    string
	Operations []operation.Operation
	Attempts   []payment.Attempt
	Refunds    []payment.Refund
	Events     []Event
	Money      func(int64) string
}

// PaymentPage is GET /cabinet/payments/{id}: a payment of a granted key
// with its operations, refunds, events and their delivery attempts.
func (pg *Pages) PaymentPage() http.Handler {
	return pg.Signed(func(w http.ResponseWriter, r *http.Request, u *cabinet.User, csrf string) {
		if pg.payments == nil {
			pg.notFound(w, "These pages are not served here.")
			return
		}
		p, err := pg.payments.FindPayment(r.Context(), pathID(r))
		if err != nil {
			pg.fail(w, err)
			return
		}
		if p == nil {
			pg.notFound(w, "No such payment among your keys.")
			return
		}
		base, ok := pg.scopeOf(w, r, u, csrf, "Payment "+p.ID, p.AccessKeyID, "No such payment among your keys.")
		if !ok {
			return
		}
		d, err := pg.payments.PaymentDetail(r.Context(), p)
		if err != nil {
			pg.fail(w, err)
			return
		}
		f := func(n int64) string { return money.Format(n, p.Currency) }
		pg.renderData(w, http.StatusOK, "payment", detailView{view: base,
			P: p, Amount: f(p.AmountMinor), Captured: f(p.CapturedAmountMinor), Refunded: f(p.RefundedAmountMinor),
			Created: stamp(p.CreatedAt), Updated: stamp(p.UpdatedAt), Operations: d.Operations, Refunds: d.Refunds,
			Attempts: d.Attempts, Events: d.Events, Money: f})
	})
}

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") }

var _ = template.Must(tmpl.Parse(`
{{define "nav"}}<header class="top"><div class="bar">{{template "brand" .}}
<form method="post" action="/cabinet/sign-out" class="who"><input type="hidden" name="csrf_token" value="{{.CSRF}}">
<span>{{.User.Email}} ({{.User.Role}})</span> <button type="submit">Sign out</button></form></div>
<nav aria-label="Cabinet">{{$k := .KeyParam}}{{range .Nav}}<a href="{{.Path}}{{$k}}"{{if .Current}} aria-current="page"{{end}}>{{.Label}}</a>{{end}}</nav></header>
<main>{{if gt (len .Keys) 1}}<p class="key">Key: <strong>{{.Key.Name}}</strong> ({{.Key.Environment}})</p>{{end}}{{end}}

{{define "payments"}}{{template "head" .}}{{template "nav" .}}<h1>Payments</h1>
{{if not .Keys}}<p>No key has been granted to you yet.</p>{{else}}
<form method="get" action="/cabinet/payments" class="filters">
{{template "key-field" .}}
<div><label for="q">Id, order id or customer</label><input id="q" name="q" value="{{.Search}}"></div>
<div><label for="status">Status</label><select id="status" name="status"><option value="">any</option>
{{range .Statuses}}<option{{if eq (print .) $.Status}} selected{{end}}>{{.}}</option>{{end}}</select></div>
<div><label for="from">Created from</label><input id="from" name="from" type="date" value="{{.From}}"></div>
<div><label for="to">Created to</label><input id="to" name="to" type="date" value="{{.To}}"></div>
<div class="actions"><button type="submit">Show</button> <a href="/cabinet/payments{{.KeyParam}}">Clear</a></div></form>
{{if .Problem}}<p class="error" role="alert">{{.Problem}}</p>{{end}}
<p><a id="export" href="{{.Export}}" download>Export CSV</a> · <a id="totals" href="{{.Totals}}">Totals</a> <small>(of every page of this view)</small></p>
<figure><svg class="chart" role="img" aria-label="{{.Chart.Label}}" viewBox="0 0 {{.Chart.Width}} {{.Chart.Height}}" preserveAspectRatio="none" xmlns="http://www.w3.org/2000/svg">
<line x1="0" y1="{{.Chart.Height}}" x2="{{.Chart.Width}}" y2="{{.Chart.Height}}" stroke="#999" stroke-width="1"/>
{{range .Chart.Bars}}<rect x="{{.X}}" y="{{.Y}}" width="{{.W}}" height="{{.H}}" fill="{{.Fill}}" data-day="{{.Day}}" data-status="{{.Status}}" data-count="{{.Count}}"><title>{{.Day}} {{.Status}}: {{.Count}}</title></rect>
{{end}}</svg>
<figcaption>{{.Chart.From}} to {{.Chart.To}} (UTC), {{.Chart.Total}} payments{{if .Chart.Capped}}, the last 90 days of the range{{end}}:
{{range .Chart.Legend}}<span class="dot" data-legend="{{.Status}}"><svg viewBox="0 0 10 10" width="10" height="10"><rect width="10" height="10" fill="{{.Fill}}"/></svg> {{.Status}} {{.Count}}</span> {{end}}</figcaption></figure>
{{if .Rows}}<div class="scroll"><table><thead><tr><th>Created (UTC)</th><th>Status</th><th>Amount</th><th>Order id</th><th>Customer</th><th>Card</th></tr></thead><tbody>
{{range .Rows}}<tr><td><a href="/cabinet/payments/{{.ID}}">{{.Created}}</a></td><td>{{template "status" .Status}}</td><td class="num">{{.Amount}}</td><td>{{.OrderID}}</td><td>{{.CustomerReference}}</td><td>{{.MaskedCard}}</td></tr>
{{end}}</tbody></table></div>{{else}}<p>No payment matches.</p>{{end}}
<p>{{if .First}}<a href="{{.First}}">Newest</a> {{end}}{{if .Next}}<a href="{{.Next}}" rel="next">Older</a>{{end}}</p>
{{end}}{{template "foot" .}}{{end}}

{{define "payment"}}{{template "head" .}}{{template "nav" .}}<h1>Payment</h1>
<dl>
<dt>Id</dt><dd><code>{{.P.ID}}</code></dd>
<dt>Status</dt><dd>{{template "status" .P.Status}}</dd>
<dt>Amount</dt><dd>{{.Amount}}</dd>
<dt>Captured</dt><dd>{{.Captured}}</dd>
<dt>Refunded</dt><dd>{{.Refunded}}</dd>
<dt>Kind</dt><dd>{{.P.Kind}}</dd>
<dt>Order id</dt><dd>{{.P.OrderID}}</dd>
{{if .P.Description}}<dt>Description</dt><dd>{{.P.Description}}</dd>{{end}}
{{if .P.CustomerReference}}<dt>Customer reference</dt><dd>{{.P.CustomerReference}}</dd>{{end}}
{{if .P.MaskedCard}}<dt>Card</dt><dd>{{.P.MaskedCard}}{{if .P.CardScheme}} ({{.P.CardScheme}}){{end}}</dd>{{end}}
{{if .P.Method}}<dt>Method</dt><dd>{{.P.Method}}</dd>{{end}}
{{if .P.DeclineCode}}<dt>Decline</dt><dd>{{.P.DeclineCode}}{{if .P.DeclineMessage}}: {{.P.DeclineMessage}}{{end}}</dd>{{end}}
{{if .P.SubscriptionID}}<dt>Subscription</dt><dd><a href="/cabinet/subscriptions/{{.P.SubscriptionID}}"><code>{{.P.SubscriptionID}}</code></a></dd>{{end}}
<dt>Created</dt><dd>{{.Created}}</dd>
<dt>Updated</dt><dd>{{.Updated}}</dd>
</dl>
{{if gt (len .Attempts) 1}}<h2>Attempts</h2><div class="scroll"><table><thead><tr><th>Started (UTC)</th><th>Channel</th><th>Status</th><th>Decline</th><th>Next because</th></tr></thead><tbody>
{{range .Attempts}}<tr><td>{{.CreatedAt.UTC.Format "2006-01-02 15:04:05"}}</td><td>{{.Channel}}</td><td>{{template "status" .Status}}</td><td>{{.DeclineCode}}</td><td>{{.Reason}}</td></tr>
{{end}}</tbody></table></div>{{end}}
<h2>Operations</h2>
{{if .Operations}}<div class="scroll"><table><thead><tr><th>Created (UTC)</th><th>Kind</th><th>State</th><th>Amount</th><th>Result</th></tr></thead><tbody>
{{range .Operations}}<tr><td>{{.CreatedAt.UTC.Format "2006-01-02 15:04:05"}}</td><td>{{.Kind}}</td><td>{{template "status" .State}}</td><td class="num">{{call $.Money .AmountMinor}}</td><td>{{.Result}}</td></tr>
{{end}}</tbody></table></div>{{else}}<p>None.</p>{{end}}
{{if .Refunds}}<h2>Refunds</h2><div class="scroll"><table><thead><tr><th>Created (UTC)</th><th>Id</th><th>Amount</th><th>Status</th></tr></thead><tbody>
{{range .Refunds}}<tr><td>{{.CreatedAt.UTC.Format "2006-01-02 15:04:05"}}</td><td><code>{{.ID}}</code></td><td class="num">{{call $.Money .AmountMinor}}</td><td>{{template "status" .Status}}</td></tr>
{{end}}</tbody></table></div>{{end}}
<h2>Events</h2>
{{if .Events}}<ul class="events">{{range .Events}}<li><strong>{{.Type}}</strong> {{.CreatedAt.UTC.Format "2006-01-02 15:04:05"}} <a href="/cabinet/events/{{.ID}}"><code>{{.ID}}</code></a>
{{if .Attempts}}<ul>{{range .Attempts}}<li>{{.At.UTC.Format "15:04:05"}} → {{if .StatusCode}}HTTP {{.StatusCode}}{{else}}no answer ({{.Error}}){{end}}</li>{{end}}</ul>{{else}}<br><small>no delivery attempt</small>{{end}}</li>
{{end}}</ul>{{else}}<p>None.</p>{{end}}
<p><a href="/cabinet/payments">All payments</a></p>
{{template "foot" .}}{{end}}
`))
