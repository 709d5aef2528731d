package pages

import (
	"context"
	"html/template"
	"net/http"
	"time"

	"github.com/paygate/paygate/internal/cabinet"
	"github.com/paygate/paygate/internal/clock"
	"github.com/paygate/paygate/internal/money"
)

// The payments page's export and totals (docs/cabinet.md, "Exports and
// totals"): the same filters as the page, over every page of it, as the
// signed exportPayments and getPaymentTotals compute them.

// ExportFunc writes every payment q selects (its Limit and keyset bound
// ignored) into w as exportPayments (GET /cabinet/v1/payments/export)
// writes them, at the key's clock carried by ctx: internal/server, which
// serves that route and owns the payments' API view, hands it (Deps.Export).
// An error with started false means nothing was written; with started true
// the caller must abort the connection.
type ExportFunc func(ctx context.Context, w http.ResponseWriter, q PaymentQuery) (started bool, err error)

// ExportPayments is GET /cabinet/payments/export: the filtered view as a
// CSV download, streamed; an error after the first byte aborts the
// connection, so the browser reports a failed download rather than keeping
// a CSV cut short.
func (pg *Pages) ExportPayments() http.Handler {
	return pg.Signed(func(w http.ResponseWriter, r *http.Request, u *cabinet.User, csrf string) {
		if pg.d.Export == nil {
			pg.notFound(w, "These pages are not served here.")
			return
		}
		base, ok := pg.scope(w, r, u, csrf, "Export")
		if !ok {
			return
		}
		if base.Key.ID == "" {
			pg.notFound(w, "No key has been granted to you yet.")
			return
		}
		v := paymentsView{view: base}
		f, _ := v.filter(r.URL.Query())
		ctx := clock.With(r.Context(), keyOffset(base.Key))
		started, err := pg.d.Export(ctx, w, f)
		switch {
		case err == nil:
		case !started:
			pg.fail(w, err)
		default:
			pg.log.Error("cabinet export aborted after streaming started", "key", base.Key.ID, "error", err)
			panic(http.ErrAbortHandler)
		}
	})
}

// totalsView is the totals page.
type totalsView struct {
	paymentsView
	Rows []totalsRow
	Back string
	// At is when the totals were read (UTC, the key's clock).
	At string
}

type totalsRow struct {
	Currency                        string
	Count, SucceededCount, Declined int64
	Succeeded, Captured, Refunded   string
}

// TotalsPage is GET /cabinet/payments/totals: per currency, the totals of
// the filtered view.
func (pg *Pages) TotalsPage() http.Handler {
	return pg.Signed(func(w http.ResponseWriter, r *http.Request, u *cabinet.User, csrf string) {
		if pg.payments == nil {
			pg.notFound(w, "These pages are not served here.")
			return
		}
		base, ok := pg.scope(w, r, u, csrf, "Totals")
		if !ok {
			return
		}
		v := totalsView{paymentsView: paymentsView{view: base}}
		if base.Key.ID == "" {
			pg.renderData(w, http.StatusOK, "totals", v)
			return
		}
		f, link := v.filter(r.URL.Query())
		v.Back = "/cabinet/payments?" + link.Encode()
		v.Export = "/cabinet/payments/export?" + link.Encode()
		ts, err := pg.payments.Totals(r.Context(), f)
		if err != nil {
			pg.fail(w, err)
			return
		}
		for _, t := range ts {
			v.Rows = append(v.Rows, totalsRow{Currency: t.Currency, Count: t.Count, SucceededCount: t.SucceededCount,
				Declined: t.DeclinedCount, Succeeded: money.FormatSum(t.SucceededMinor, t.Currency),
				Captured: money.FormatSum(t.CapturedMinor, t.Currency), Refunded: money.FormatSum(t.RefundedMinor, t.Currency)})
		}
		v.At = pg.users.Now().Add(keyOffset(base.Key)).UTC().Format(time.DateTime)
		pg.renderData(w, http.StatusOK, "totals", v)
	})
}

var _ = template.Must(tmpl.Parse(`
{{define "filter-summary"}}<p class="filters">{{if .Status}}Status {{.Status}}. {{end}}{{if .From}}From {{.From}}. {{end}}{{if .To}}To {{.To}}. {{end}}{{if .Search}}Matching “{{.Search}}”. {{end}}{{if not (or .Status .From .To .Search)}}Every payment.{{end}}</p>{{end}}

{{define "totals"}}{{template "head" .}}{{template "nav" .}}<h1>Totals</h1>
{{if not .Keys}}<p>No key has been granted to you yet.</p>{{else}}
{{template "filter-summary" .}}
{{if .Problem}}<p class="error" role="alert">{{.Problem}}</p>{{end}}
{{if .Rows}}<div class="scroll"><table id="totals"><thead><tr><th>Currency</th><th class="num">Payments</th><th class="num">Succeeded</th><th class="num">Succeeded amount</th><th class="num">Captured</th><th class="num">Refunded</th><th class="num">Declined</th></tr></thead><tbody>
{{range .Rows}}<tr data-currency="{{.Currency}}"><td>{{.Currency}}</td><td class="num" data-count="{{.Count}}">{{.Count}}</td><td class="num">{{.SucceededCount}}</td><td class="num">{{.Succeeded}}</td><td class="num">{{.Captured}}</td><td class="num">{{.Refunded}}</td><td class="num">{{.Declined}}</td></tr>
{{end}}</tbody></table></div>{{else}}<p>No payment matches.</p>{{end}}
<p><small>Read at {{.At}} UTC. Succeeded counts succeeded, partially refunded and refunded payments.</small></p>
<p><a href="{{.Back}}">Back to the payments</a> · <a href="{{.Export}}" download>Export CSV</a></p>
{{end}}{{template "foot" .}}{{end}}
`))
