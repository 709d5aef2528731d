package pages

import (
	"context"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/paygate/paygate/internal/cabinet"
	"github.com/paygate/paygate/internal/money"
	"github.com/paygate/paygate/internal/reconcile"
)

// The reconciliation pages (docs/reconciliation.md, "In the cabinet";
// docs/design/decisions.md section 18): the reconciled days of the
// accounts the shown key's payments go through, and per account and day
// the key's breaks, on a page and as CSV. An account may serve several
// merchants' keys, so a run's own counts (movements, matched, pending,
// fees, breaks) are never shown: they would tell one merchant another's
// volume. A key sees the run's status and times and its own breaks; an
// orphan (a break of no key) is for operators only.

// ReconciledDay is an account's reconciled day as one key sees it.
type ReconciledDay struct {
	Account    string // the provider account
	Day        string // YYYY-MM-DD, UTC
	Status     string // running, done or failed
	StartedAt  time.Time
	FinishedAt *time.Time
	// Breaks counts the key's breaks of the run by kind; a kind without
	// one is absent.
	Breaks map[string]int
}

// Break is one of a key's breaks.
type Break struct {
	Seq int // its order in the run, from 1
	// Payout: PaymentID names a payout, not a payment.
	Payout bool
	reconcile.Break
}

// ReconciliationData is what these pages read; internal/cabinet/data
// adapts the store to it. Every method answers for one key only, and
// nothing for the key "".
type ReconciliationData interface {
	// ReconciledDays lists the runs the key sees, newest day first, then
	// by account, up to limit, after the run (afterDay, afterAccount)
	// ("" for the first page). A key sees the runs of the accounts its
	// channels are on and those holding one of its breaks.
	ReconciledDays(ctx context.Context, keyID, afterDay, afterAccount string, limit int) ([]ReconciledDay, error)
	// ReconciledDay is one run as the key sees it; nil: none it sees.
	ReconciledDay(ctx context.Context, keyID, account, day string) (*ReconciledDay, error)
	// Breaks are the key's breaks of the run after seq afterSeq, in order,
	// up to limit.
	Breaks(ctx context.Context, keyID, account, day string, afterSeq, limit int) ([]Break, error)
}

// runRow is a run in the list and at the top of its page.
type runRow struct {
	Account, Day, Status, Tone, Started, Finished string
	Link, CSV                                     string
	Total                                         int
	Kinds                                         []kindCount // every kind, in reconcile.BreakKinds' order
	Done                                          bool
}

type kindCount struct {
	Kind  string
	Count int
}

// runTone is a run's status colour.
func runTone(status string) string {
	switch status {
	case "done":
		return "ok"
	case "running":
		return "warn"
	case "failed":
		return "bad"
	}
	return ""
}

func (v view) runRow(d ReconciledDay) runRow {
	path := "/cabinet/reconciliation/" + url.PathEscape(d.Account) + "/" + d.Day
	r := runRow{Account: d.Account, Day: d.Day, Status: d.Status, Tone: runTone(d.Status), Started: stamp(d.StartedAt),
		Link: path + v.KeyParam(), CSV: path + "/breaks.csv" + v.KeyParam(), Done: d.Status == "done"}
	if d.FinishedAt != nil {
		r.Finished = stamp(*d.FinishedAt)
	}
	for _, k := range reconcile.BreakKinds {
		r.Kinds = append(r.Kinds, kindCount{Kind: k, Count: d.Breaks[k]})
		r.Total += d.Breaks[k]
	}
	return r
}

// reconciliationView is the list's template data.
type reconciliationView struct {
	view
	Rows        []runRow
	First, Next string
}

// ReconciliationPage is GET /cabinet/reconciliation: the reconciled days
// the shown key sees, newest first, a keyset page at a time
// ("?after=<day>_<account>").
func (pg *Pages) ReconciliationPage() http.Handler {
	return pg.Signed(func(w http.ResponseWriter, r *http.Request, u *cabinet.User, csrf string) {
		if pg.d.Reconciliation == nil {
			pg.notFound(w, "These pages are not served here.")
			return
		}
		base, ok := pg.scope(w, r, u, csrf, "Reconciliation")
		if !ok {
			return
		}
		v := reconciliationView{view: base}
		if v.Key.ID == "" {
			pg.renderData(w, http.StatusOK, "reconciliation", v)
			return
		}
		afterDay, afterAccount := "", ""
		if after := r.URL.Query().Get("after"); after != "" {
			afterDay, afterAccount, ok = strings.Cut(after, "_")
			if !ok || !validDay(afterDay) || !validAccount(afterAccount) {
				pg.badLink(w)
				return
			}
		}
		days, err := pg.d.Reconciliation.ReconciledDays(r.Context(), v.Key.ID, afterDay, afterAccount, pageSize+1)
		if err != nil {
			pg.fail(w, err)
			return
		}
		more := len(days) > pageSize
		if more {
			days = days[:pageSize]
		}
		for _, d := range days {
			v.Rows = append(v.Rows, v.runRow(d))
		}
		link := listLink(v.view)
		if afterDay != "" {
			v.First = "/cabinet/reconciliation?" + link.Encode()
		}
		if more {
			last := days[len(days)-1]
			link.Set("after", last.Day+"_"+last.Account)
			v.Next = "/cabinet/reconciliation?" + link.Encode()
		}
		pg.renderData(w, http.StatusOK, "reconciliation", v)
	})
}

// validDay: s is a day as a run stores it, YYYY-MM-DD.
func validDay(s string) bool {
	t, err := time.Parse(dateLayout, s)
	return err == nil && t.Format(dateLayout) == s
}

// validAccount: s could name a provider account; anything else would be a
// 500 page (PostgreSQL refuses NUL and invalid UTF-8 in text).
func validAccount(s string) bool { return s != "" && len(s) <= maxID && storable(s) }

// breakRow is a break as the day's page shows it.
type breakRow struct {
	Seq               int
	Kind, Operation   string
	Resource, Link    string // the payment's or payout's id, and its page
	Paygate, Acquirer *sideCell
	Ref               string
	Payout            bool
}

// sideCell is one side of a break.
type sideCell struct{ Kind, Amount, Currency, At string }

func cell(s *reconcile.Side) *sideCell {
	if s == nil {
		return nil
	}
	return &sideCell{Kind: s.Kind, Amount: money.Format(s.AmountMinor, s.Currency), Currency: s.Currency,
		At: s.At.UTC().Format(time.DateTime)}
}

// dayView is an account's day.
type dayView struct {
	view
	Run         runRow
	Rows        []breakRow
	First, Next string
}

// ReconciliationDayPage is GET /cabinet/reconciliation/{account}/{day}:
// the run's status and the shown key's breaks, both sides of each, a
// keyset page at a time ("?after=<seq>").
func (pg *Pages) ReconciliationDayPage() http.Handler {
	return pg.Signed(func(w http.ResponseWriter, r *http.Request, u *cabinet.User, csrf string) {
		v, d, ok := pg.reconciledDay(w, r, u, csrf)
		if !ok {
			return
		}
		after := 0
		if s := r.URL.Query().Get("after"); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil || n < 1 {
				pg.badLink(w)
				return
			}
			after = n
		}
		dv := dayView{view: v, Run: v.runRow(*d)}
		if !dv.Run.Done {
			pg.renderData(w, http.StatusOK, "reconciliation-day", dv)
			return
		}
		bs, err := pg.d.Reconciliation.Breaks(r.Context(), v.Key.ID, d.Account, d.Day, after, pageSize+1)
		if err != nil {
			pg.fail(w, err)
			return
		}
		more := len(bs) > pageSize
		if more {
			bs = bs[:pageSize]
		}
		for _, b := range bs {
			row := breakRow{Seq: b.Seq, Kind: b.Kind, Operation: b.Key, Resource: b.PaymentID,
				Paygate: cell(b.Paygate), Acquirer: cell(b.Provider), Payout: b.Payout}
			if b.Provider != nil {
				row.Ref = b.Provider.Ref
			}
			if b.Payout {
				row.Link = resourcePath("payout", b.PaymentID)
			} else {
				row.Link = resourcePath("payment", b.PaymentID)
			}
			dv.Rows = append(dv.Rows, row)
		}
		path := "/cabinet/reconciliation/" + url.PathEscape(d.Account) + "/" + d.Day
		link := listLink(v)
		if after > 0 {
			dv.First = path + "?" + link.Encode()
		}
		if more {
			link.Set("after", strconv.Itoa(bs[len(bs)-1].Seq))
			dv.Next = path + "?" + link.Encode()
		}
		pg.renderData(w, http.StatusOK, "reconciliation-day", dv)
	})
}

// reconciledDay reads the path's account and day and the run the shown key
// sees. ok false: the answer was written: a bad day or account is a 400
// page, a run the key does not see a 404 page, as one that does not exist.
func (pg *Pages) reconciledDay(w http.ResponseWriter, r *http.Request, u *cabinet.User, csrf string) (view, *ReconciledDay, bool) {
	if pg.d.Reconciliation == nil {
		pg.notFound(w, "These pages are not served here.")
		return view{}, nil, false
	}
	account, day := r.PathValue("account"), r.PathValue("day")
	if !validDay(day) {
		pg.render(w, http.StatusBadRequest, "message", view{Title: "Bad link",
			Message: "A reconciled day is written YYYY-MM-DD (UTC) in this page's link."})
		return view{}, nil, false
	}
	if !validAccount(account) {
		pg.render(w, http.StatusBadRequest, "message", view{Title: "Bad link",
			Message: "This page's link does not name an acquirer account."})
		return view{}, nil, false
	}
	v, ok := pg.scope(w, r, u, csrf, "Reconciliation of "+account+", "+day)
	if !ok {
		return view{}, nil, false
	}
	var d *ReconciledDay
	var err error
	if v.Key.ID != "" {
		if d, err = pg.d.Reconciliation.ReconciledDay(r.Context(), v.Key.ID, account, day); err != nil {
			pg.fail(w, err)
			return view{}, nil, false
		}
	}
	if d == nil {
		pg.notFound(w, "No reconciliation of this acquirer account on this day among your key's.")
		return view{}, nil, false
	}
	return v, d, true
}

var _ = template.Must(tmpl.Parse(`
{{define "run-kinds"}}{{range .Kinds}}{{if .Count}}<span class="dot" data-kind="{{.Kind}}">{{.Kind}} {{.Count}}</span> {{end}}{{end}}{{end}}

{{define "reconciliation"}}{{template "head" .}}{{template "nav" .}}<h1>Reconciliation</h1>
{{if not .Keys}}<p>No key has been granted to you yet.</p>{{else}}{{template "settings-key" .}}
<p>Every day (UTC), Paygate compares the money it moved on each acquirer account with the acquirer's own records. Listed: the days of the accounts this key's payments go through, with this key's breaks.</p>
{{if .Rows}}<div class="scroll"><table id="runs"><thead><tr><th>Day</th><th>Account</th><th>Status</th><th class="num">Breaks</th><th>By kind</th></tr></thead><tbody>
{{range .Rows}}<tr data-run="{{.Account}}/{{.Day}}" data-breaks="{{.Total}}"><td><a href="{{.Link}}">{{.Day}}</a></td><td>{{.Account}}</td><td><span class="badge {{.Tone}}">{{.Status}}</span></td><td class="num">{{if .Done}}{{.Total}}{{end}}</td><td>{{if .Done}}{{template "run-kinds" .}}{{end}}</td></tr>
{{end}}</tbody></table></div>{{else}}<p>No day has been reconciled on this key's accounts yet.</p>{{end}}
<p>{{if .First}}<a href="{{.First}}">Newest</a> {{end}}{{if .Next}}<a href="{{.Next}}" rel="next">Older</a>{{end}}</p>
{{end}}{{template "foot" .}}{{end}}

{{define "side"}}{{if .}}<span data-side-kind>{{.Kind}}</span><br><strong class="num">{{.Amount}}</strong><br><small>{{.At}}</small>{{else}}<small>nothing</small>{{end}}{{end}}

{{define "reconciliation-day"}}{{template "head" .}}{{template "nav" .}}<h1>Reconciliation of {{.Run.Account}}, {{.Run.Day}}</h1>
<dl>
<dt>Acquirer account</dt><dd><code>{{.Run.Account}}</code></dd>
<dt>Day (UTC)</dt><dd>{{.Run.Day}}</dd>
<dt>Status</dt><dd><span class="badge {{.Run.Tone}}" id="status">{{.Run.Status}}</span></dd>
<dt>Started</dt><dd>{{.Run.Started}}</dd>
{{if .Run.Finished}}<dt>Finished</dt><dd>{{.Run.Finished}}</dd>{{end}}
{{if .Run.Done}}<dt>Breaks of this key</dt><dd><span id="total">{{.Run.Total}}</span>{{if .Run.Total}}: {{template "run-kinds" .Run}}{{end}}</dd>{{end}}
</dl>
{{if not .Run.Done}}{{if eq .Run.Status "running"}}<p role="status">This day is being reconciled now; its breaks show here when the run ends.</p>{{else}}<p class="error" role="alert">This day's reconciliation failed (an acquirer that did not answer, say); it is tried again, and shows here once it ends.</p>{{end}}
{{else}}
<p><small>Only the breaks of this key's payments and payouts are shown. An account may serve other merchants too, so the run's figures for the whole account are not.</small></p>
<h2>Breaks</h2>
{{if .Rows}}<p><a id="csv" href="{{.Run.CSV}}" download>Download CSV</a> <small>(every break of this key on this day)</small></p>
<div class="scroll"><table id="breaks"><thead><tr><th>Kind</th><th>Payment or payout</th><th>Paygate</th><th>Acquirer</th><th>Acquirer's ref</th></tr></thead><tbody>
{{range .Rows}}<tr data-seq="{{.Seq}}" data-kind="{{.Kind}}" data-resource="{{.Resource}}"><td><span class="badge bad">{{.Kind}}</span><br><small>operation <code>{{.Operation}}</code></small></td>
<td>{{if .Link}}<a href="{{.Link}}"><code>{{.Resource}}</code></a>{{else}}<code>{{.Resource}}</code>{{end}}{{if .Payout}}<br><small>payout</small>{{end}}</td>
<td data-paygate>{{template "side" .Paygate}}</td><td data-acquirer>{{template "side" .Acquirer}}</td><td>{{if .Ref}}<code>{{.Ref}}</code>{{end}}</td></tr>
{{end}}</tbody></table></div>{{else}}<p id="clean">No break of this key on this day.</p>{{end}}
<p>{{if .First}}<a href="{{.First}}">First breaks</a> {{end}}{{if .Next}}<a href="{{.Next}}" rel="next">More</a>{{end}}</p>
{{end}}
<p><a href="/cabinet/reconciliation{{.KeyParam}}">All reconciled days</a></p>
{{template "foot" .}}{{end}}
`))
