package pages

import (
	"context"
	"html/template"
	"net/http"
	"strings"
	"time"

	"github.com/paygate/paygate/internal/allowance"
	"github.com/paygate/paygate/internal/cabinet"
	"github.com/paygate/paygate/internal/merchant"
	"github.com/paygate/paygate/internal/money"
)

// The allowances and channels pages (docs/cabinet.md, "Allowances" and
// "Channels"): what a key may collect and pay out today, and the channels
// its payments are routed to. Read-only: allowances are set with `paygate
// limits`, channels assigned with `paygate channels`.

// AllowanceDay is a key's allowances with the figures of the key's
// current allowance day.
type AllowanceDay struct {
	Now   time.Time // the key's clock: its UTC date is the day
	Items []allowance.Figures
}

// ChannelInfo is a channel as GET /api/v1/payment-channels shows it, with
// what its provider profile can do.
type ChannelInfo struct {
	ID             string
	Alias          string
	PaymentMethods []string
	Currencies     []string
	CheckoutMode   string
	// Capabilities of the channel's provider profile (refund, saved_cards,
	// ...); nil when the provider is not configured in this process.
	Capabilities []string
}

// SettingsData is what these pages read; internal/cabinet/data adapts the
// store and the domain services to it. Nothing is cached.
type SettingsData interface {
	// Allowances lists the key's allowances as listLimits (GET /limits)
	// does, at the key's clock.
	Allowances(ctx context.Context, key merchant.Key) (AllowanceDay, error)
	// Channels lists the key's channels in routing order, never a provider
	// secret.
	Channels(ctx context.Context, keyID string) ([]ChannelInfo, error)
}

// allowancesView is the allowances page's template data.
type allowancesView struct {
	view
	Day      string
	ResetsAt string
	Rows     []allowanceRow
}

type allowanceRow struct {
	Allowance, Currency, PerTransaction, Daily, Used, Reserved, Remaining string
}

// AllowancesPage is GET /cabinet/allowances: the shown key's allowances
// (docs/design/decisions.md section 12) with today's used, reserved and
// remaining amounts, today being the UTC date of the key's clock.
func (pg *Pages) AllowancesPage() http.Handler {
	return pg.Signed(func(w http.ResponseWriter, r *http.Request, u *cabinet.User, csrf string) {
		if pg.d.Settings == nil {
			pg.notFound(w, "These pages are not served here.")
			return
		}
		base, ok := pg.scope(w, r, u, csrf, "Allowances")
		if !ok {
			return
		}
		v := allowancesView{view: base}
		if v.Key.ID == "" {
			pg.renderData(w, http.StatusOK, "allowances", v)
			return
		}
		d, err := pg.d.Settings.Allowances(r.Context(), v.Key)
		if err != nil {
			pg.fail(w, err)
			return
		}
		v.Day, v.ResetsAt = allowance.Day(d.Now), stamp(allowance.ResetsAt(d.Now))
		limit := func(n *int64, currency string) string {
			if n == nil {
				return "unlimited"
			}
			return money.Format(*n, currency)
		}
		for _, f := range d.Items {
			c := f.Setting.Currency
			v.Rows = append(v.Rows, allowanceRow{Allowance: string(f.Setting.Allowance), Currency: c,
				PerTransaction: limit(f.Setting.PerTransactionMinor, c), Daily: limit(f.Setting.DailyMinor, c),
				Used: money.Format(f.Usage.UsedMinor, c), Reserved: money.Format(f.Usage.ReservedMinor, c),
				Remaining: limit(f.RemainingMinor, c)})
		}
		pg.renderData(w, http.StatusOK, "allowances", v)
	})
}

// channelsView is the channels page's template data.
type channelsView struct {
	view
	Rows []channelRow
}

type channelRow struct {
	ID, Alias, Methods, Currencies, CheckoutMode, Capabilities string
}

// ChannelsPage is GET /cabinet/channels: the shown key's channels, in the
// order payments are routed to them.
func (pg *Pages) ChannelsPage() http.Handler {
	return pg.Signed(func(w http.ResponseWriter, r *http.Request, u *cabinet.User, csrf string) {
		if pg.d.Settings == nil {
			pg.notFound(w, "These pages are not served here.")
			return
		}
		base, ok := pg.scope(w, r, u, csrf, "Channels")
		if !ok {
			return
		}
		v := channelsView{view: base}
		if v.Key.ID == "" {
			pg.renderData(w, http.StatusOK, "channels", v)
			return
		}
		list, err := pg.d.Settings.Channels(r.Context(), v.Key.ID)
		if err != nil {
			pg.fail(w, err)
			return
		}
		for _, ch := range list {
			row := channelRow{ID: ch.ID, Alias: ch.Alias, Methods: strings.Join(ch.PaymentMethods, ", "),
				Currencies: strings.Join(ch.Currencies, ", "), CheckoutMode: ch.CheckoutMode,
				Capabilities: strings.Join(ch.Capabilities, ", ")}
			if ch.Capabilities == nil {
				row.Capabilities = "unknown"
			}
			v.Rows = append(v.Rows, row)
		}
		pg.renderData(w, http.StatusOK, "channels", v)
	})
}

var _ = template.Must(tmpl.Parse(`
{{define "settings-key"}}{{if gt (len .Keys) 1}}<form method="get" class="filters"><label for="key">Key</label><select id="key" name="key">
{{range .Keys}}<option value="{{.ID}}"{{if eq .ID $.Key.ID}} selected{{end}}>{{.Name}} ({{.Environment}})</option>{{end}}
</select> <button type="submit">Show</button></form>{{end}}{{end}}

{{define "allowances"}}{{template "head" .}}{{template "nav" .}}<h1>Allowances</h1>
{{if not .Keys}}<p>No key has been granted to you yet.</p>{{else}}{{template "settings-key" .}}
<p>Today is <strong data-day="{{.Day}}">{{.Day}}</strong> (UTC, by this key's clock); the day's amounts reset at {{.ResetsAt}}.
An allowance or currency not listed is unlimited. Allowances are set with <code>paygate limits set</code>.</p>
{{if .Rows}}<div class="scroll"><table><thead><tr><th>Allowance</th><th>Currency</th><th>Per transaction</th><th>Daily</th><th>Used today</th><th>Reserved today</th><th>Remaining</th></tr></thead><tbody>
{{range .Rows}}<tr data-allowance="{{.Allowance}}" data-currency="{{.Currency}}"><td>{{.Allowance}}</td><td>{{.Currency}}</td><td class="num">{{.PerTransaction}}</td><td class="num">{{.Daily}}</td><td class="num" data-used>{{.Used}}</td><td class="num" data-reserved>{{.Reserved}}</td><td class="num" data-remaining>{{.Remaining}}</td></tr>
{{end}}</tbody></table></div>{{else}}<p>None set: this key is unlimited.</p>{{end}}
{{end}}{{template "foot" .}}{{end}}

{{define "channels"}}{{template "head" .}}{{template "nav" .}}<h1>Channels</h1>
{{if not .Keys}}<p>No key has been granted to you yet.</p>{{else}}{{template "settings-key" .}}
<p>A payment goes to the first channel of this list that takes its currency (and, for a direct payment, its method). Channels are assigned with <code>paygate channels assign</code>.</p>
{{if .Rows}}<div class="scroll"><table><thead><tr><th>Alias</th><th>Methods</th><th>Currencies</th><th>Checkout</th><th>Capabilities</th></tr></thead><tbody>
{{range .Rows}}<tr data-channel="{{.ID}}"><td>{{.Alias}}<br><small><code>{{.ID}}</code></small></td><td>{{.Methods}}</td><td>{{.Currencies}}</td><td>{{.CheckoutMode}}</td><td>{{.Capabilities}}</td></tr>
{{end}}</tbody></table></div>{{else}}<p>No channel is assigned to this key: it cannot take payments.</p>{{end}}
{{end}}{{template "foot" .}}{{end}}
`))
