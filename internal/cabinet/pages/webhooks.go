package pages

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/paygate/paygate/internal/cabinet"
	"github.com/paygate/paygate/internal/webhook"
)

// The webhook endpoints and event log pages (docs/cabinet.md, "Webhook
// endpoints and events"): a key's endpoints, read-only (they are managed
// through the API and the command line), its events newest first, one
// event with its payload and every delivery attempt, and the resend that
// POST /api/v1/events/{id}/resend does (docs/webhooks.md, "The event log").

// WebhookEndpoint is an endpoint as these pages show it. It has no field
// for the signing secret, so no template can show it.
type WebhookEndpoint struct {
	ID, URL        string
	EventTypes     []string // empty: every type
	CreatedAt      time.Time
	DisabledAt     *time.Time // set when it answered 410 Gone
	DisabledReason string
	// Health: deliveries still being tried and given up, and the latest
	// attempt of a pending delivery.
	Pending, Failed int
	LastPending     *Attempt
}

// Enabled reports whether the endpoint still receives events.
func (e WebhookEndpoint) Enabled() bool { return e.DisabledAt == nil }

// Takes reports whether the endpoint's filter takes an event type.
func (e WebhookEndpoint) Takes(eventType string) bool {
	return len(e.EventTypes) == 0 || slices.Contains(e.EventTypes, eventType)
}

// EventQuery selects a page of one key's events, newest first.
type EventQuery struct {
	KeyID      string
	Type       string // exact; "" for any
	ResourceID string // exact; "" for any
	// After is the (created, id) of the last event of the previous page.
	AfterCreated *time.Time
	AfterID      string
	Limit        int
}

// LoggedEvent is one event of a key's log.
type LoggedEvent struct {
	ID, KeyID, Type, ResourceType, ResourceID string
	CreatedAt                                 time.Time
	Body                                      []byte // exactly as sent
}

// EventRow is an event of the list with its deliveries counted by status.
type EventRow struct {
	LoggedEvent
	Deliveries map[string]int
}

// Delivery is an event's delivery to one endpoint with every attempt of
// it, oldest first.
type Delivery struct {
	ID, EndpointID, URL string
	Status              string // webhook.Pending, Succeeded, Failed
	Reason              string // why it was given up
	NextAttemptAt       *time.Time
	Attempts            []Attempt
}

// WebhooksData is what these pages read and change; internal/cabinet/data
// adapts the store and the webhook service to it. Nothing is cached.
type WebhooksData interface {
	// Endpoints lists the key's endpoints that are not removed, oldest
	// first, with their health.
	Endpoints(ctx context.Context, keyID string) ([]WebhookEndpoint, error)
	Events(ctx context.Context, q EventQuery) ([]EventRow, error)
	// FindEvent finds an event by id, whatever key owns it; nil: none.
	FindEvent(ctx context.Context, id string) (*LoggedEvent, error)
	Deliveries(ctx context.Context, e *LoggedEvent) ([]Delivery, error)
	// Resend queues a new round of delivery of the key's event now, as
	// resendEvent (POST /api/v1/events/{id}/resend) does, to endpointID or
	// ("") to every enabled endpoint that takes it, and returns how many
	// endpoints it queued. ErrNoEndpoint: none to send to.
	Resend(ctx context.Context, keyID, eventID, endpointID string) (int, error)
}

// ErrNoEndpoint: a resend found no enabled endpoint to send to.
var ErrNoEndpoint = errors.New("no enabled webhook endpoint to send to")

// ErrNoEvent: the key has no such event.
var ErrNoEvent = errors.New("no such event")

// maxResourceID bounds the resource filter, as GET /api/v1/events does.
const maxResourceID = 64

type webhooksView struct {
	view
	Endpoints []WebhookEndpoint
}

// WebhooksPage is GET /cabinet/webhooks: the shown key's endpoints and how
// their deliveries fare. Never a secret.
func (pg *Pages) WebhooksPage() http.Handler {
	return pg.Signed(func(w http.ResponseWriter, r *http.Request, u *cabinet.User, csrf string) {
		if pg.d.Webhooks == nil {
			pg.notFound(w, "These pages are not served here.")
			return
		}
		base, ok := pg.scope(w, r, u, csrf, "Webhook endpoints")
		if !ok {
			return
		}
		v := webhooksView{view: base}
		if v.Key.ID != "" {
			eps, err := pg.d.Webhooks.Endpoints(r.Context(), v.Key.ID)
			if err != nil {
				pg.fail(w, err)
				return
			}
			v.Endpoints = eps
		}
		pg.renderData(w, http.StatusOK, "webhooks", v)
	})
}

type eventsView struct {
	view
	Type, ResourceID string
	Rows             []eventLine
	Next, First      string
	Problem          string
}

type eventLine struct {
	ID, Created, Type, ResourceID, Deliveries string
	Link                                      string // the resource's page, "" when it has none
}

// EventsPage is GET /cabinet/events: the shown key's events, newest first,
// a keyset page at a time, filtered by type and resource id (exact).
func (pg *Pages) EventsPage() http.Handler {
	return pg.Signed(func(w http.ResponseWriter, r *http.Request, u *cabinet.User, csrf string) {
		if pg.d.Webhooks == nil {
			pg.notFound(w, "These pages are not served here.")
			return
		}
		base, ok := pg.scope(w, r, u, csrf, "Events")
		if !ok {
			return
		}
		v := eventsView{view: base}
		if v.Key.ID == "" {
			pg.renderData(w, http.StatusOK, "events", v)
			return
		}
		q := r.URL.Query()
		f := EventQuery{KeyID: v.Key.ID, Limit: pageSize + 1}
		if t := strings.TrimSpace(q.Get("type")); t != "" {
			if webhook.ValidType(t) {
				f.Type, v.Type = t, t
			} else {
				v.Problem = "An event type looks like payment.succeeded; " + strconv.Quote(t) + " was left out."
			}
		}
		if id := strings.TrimSpace(q.Get("resource_id")); id != "" {
			if utf8.RuneCountInString(id) <= maxResourceID && storable(id) {
				f.ResourceID, v.ResourceID = id, id
			} else {
				v.Problem = "A resource id has at most 64 characters of text; the one given was left out."
			}
		}
		if f.AfterCreated, f.AfterID, ok = keysetAfter(q.Get("after")); !ok {
			pg.badLink(w)
			return
		}
		list, err := pg.d.Webhooks.Events(r.Context(), f)
		if err != nil {
			pg.fail(w, err)
			return
		}
		link := url.Values{}
		if len(v.Keys) > 1 {
			link.Set("key", v.Key.ID)
		}
		for k, s := range map[string]string{"type": v.Type, "resource_id": v.ResourceID} {
			if s != "" {
				link.Set(k, s)
			}
		}
		if f.AfterCreated != nil {
			v.First = "/cabinet/events?" + link.Encode()
		}
		if len(list) > pageSize {
			list = list[:pageSize]
			last := list[len(list)-1]
			link.Set("after", afterValue(last.CreatedAt, last.ID))
			v.Next = "/cabinet/events?" + link.Encode()
		}
		for _, e := range list {
			v.Rows = append(v.Rows, eventLine{ID: e.ID, Created: e.CreatedAt.UTC().Format("2006-01-02 15:04:05"), Type: e.Type,
				ResourceID: e.ResourceID, Link: resourcePath(e.ResourceType, e.ResourceID), Deliveries: deliverySummary(e.Deliveries)})
		}
		pg.renderData(w, http.StatusOK, "events", v)
	})
}

// deliverySummary says how an event's deliveries fare: "1 succeeded, 1
// pending", or that no endpoint took it.
func deliverySummary(counts map[string]int) string {
	var parts []string
	for _, s := range []string{webhook.Succeeded, webhook.Pending, webhook.Failed} {
		if n := counts[s]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, s))
		}
	}
	if len(parts) == 0 {
		return "no delivery"
	}
	return strings.Join(parts, ", ")
}

type eventView struct {
	view
	Event      *LoggedEvent
	Created    string
	Payload    string // the body as sent, indented
	Deliveries []Delivery
	// Targets are the enabled endpoints a resend may choose; Takes is how
	// many of them take the event's type (the default).
	Targets  []WebhookEndpoint
	Takes    int
	Endpoint string // the endpoint chosen in a refused resend
}

// EventPage is GET /cabinet/events/{id}: an event of a granted key, its
// payload as sent, and every delivery with every attempt; with the resend
// form for an admin.
func (pg *Pages) EventPage() http.Handler {
	return pg.Signed(func(w http.ResponseWriter, r *http.Request, u *cabinet.User, csrf string) {
		v, ok := pg.event(w, r, u, csrf)
		if !ok {
			return
		}
		// The text is ours, never the URL's: a link cannot make the page
		// claim a delivery that was not queued.
		if r.URL.Query().Get("done") == "resent" {
			v.Message = "Queued for delivery again: the attempts appear below."
		}
		pg.renderData(w, http.StatusOK, "event", v)
	})
}

// event reads the event page's data; ok false: the answer was written. An
// event of a key not granted is a 404 page, as a missing one
// (docs/design/decisions.md section 13).
func (pg *Pages) event(w http.ResponseWriter, r *http.Request, u *cabinet.User, csrf string) (eventView, bool) {
	if pg.d.Webhooks == nil {
		pg.notFound(w, "These pages are not served here.")
		return eventView{}, false
	}
	ctx := r.Context()
	e, err := pg.d.Webhooks.FindEvent(ctx, pathID(r))
	if err != nil {
		pg.fail(w, err)
		return eventView{}, false
	}
	if e == nil {
		pg.notFound(w, "No such event among your keys.")
		return eventView{}, false
	}
	base, ok := pg.scopeOf(w, r, u, csrf, "Event "+e.ID, e.KeyID, "No such event among your keys.")
	if !ok {
		return eventView{}, false
	}
	v := eventView{view: base, Event: e, Created: stamp(e.CreatedAt), Payload: pretty(e.Body)}
	if v.Deliveries, err = pg.d.Webhooks.Deliveries(ctx, e); err != nil {
		pg.fail(w, err)
		return eventView{}, false
	}
	if u.Role.CanChange() {
		eps, err := pg.d.Webhooks.Endpoints(ctx, e.KeyID)
		if err != nil {
			pg.fail(w, err)
			return eventView{}, false
		}
		for _, ep := range eps {
			if ep.Enabled() {
				v.Targets = append(v.Targets, ep)
				if ep.Takes(e.Type) {
					v.Takes++
				}
			}
		}
	}
	return v, true
}

// pretty indents a JSON body for a <pre>; a body that is not JSON is shown
// as it is.
func pretty(body []byte) string {
	var b bytes.Buffer
	if err := json.Indent(&b, body, "", "  "); err != nil {
		return string(body)
	}
	return b.String()
}

// ResendEvent is POST /cabinet/events/{id}/resend: what resendEvent (POST
// /api/v1/events/{id}/resend) does, for an admin; then back to the event
// (303). No enabled endpoint to send to: the event page again, 422.
func (pg *Pages) ResendEvent() http.Handler {
	return pg.Changing(func(w http.ResponseWriter, r *http.Request, u *cabinet.User, csrf string) {
		v, ok := pg.event(w, r, u, csrf)
		if !ok {
			return
		}
		endpoint := strings.TrimSpace(r.PostFormValue("endpoint_id"))
		_, err := pg.d.Webhooks.Resend(r.Context(), v.Event.KeyID, v.Event.ID, endpoint)
		switch {
		case errors.Is(err, ErrNoEvent):
			pg.notFound(w, "No such event among your keys.")
			return
		case errors.Is(err, ErrNoEndpoint):
			v.Endpoint = endpoint
			if endpoint == "" {
				v.Error = "No enabled webhook endpoint of this key takes " + v.Event.Type +
					": nothing was sent. Choose an endpoint below, or add one through the API."
			} else {
				v.Error = "That endpoint is not an enabled webhook endpoint of this key: nothing was sent."
			}
			pg.renderData(w, http.StatusUnprocessableEntity, "event", v)
			return
		case err != nil:
			pg.fail(w, err)
			return
		}
		q := url.Values{"done": {"resent"}}
		if len(v.Keys) > 1 {
			q.Set("key", v.Key.ID)
		}
		http.Redirect(w, r, "/cabinet/events/"+url.PathEscape(v.Event.ID)+"?"+q.Encode(), http.StatusSeeOther)
	})
}

var _ = template.Must(tmpl.Parse(`
{{define "webhooks"}}{{template "head" .}}{{template "nav" .}}<h1>Webhook endpoints</h1>
{{if not .Keys}}<p>No key has been granted to you yet.</p>{{else}}
<p>Where Paygate sends this key's events. Endpoints are added and removed through the API
(<code>POST /api/v1/webhook-endpoints</code>) or with <code>paygate webhooks</code>; their signing secrets are shown only then.
<a href="/cabinet/events{{.KeyParam}}">The event log</a>.</p>
{{if .Endpoints}}<div class="scroll"><table><thead><tr><th>URL</th><th>Event types</th><th>State</th><th>Created (UTC)</th><th>Deliveries</th></tr></thead><tbody>
{{range .Endpoints}}<tr data-endpoint="{{.ID}}"><td><code>{{.URL}}</code><br><small><code>{{.ID}}</code></small></td>
<td>{{if .EventTypes}}{{range $i, $t := .EventTypes}}{{if $i}}, {{end}}{{$t}}{{end}}{{else}}every type{{end}}</td>
<td data-state="{{if .Enabled}}enabled{{else}}disabled{{end}}">{{if .Enabled}}{{template "status" "enabled"}}{{else}}{{template "status" "disabled"}} {{.DisabledAt.UTC.Format "2006-01-02 15:04"}}{{if .DisabledReason}} ({{.DisabledReason}}){{end}}{{end}}</td>
<td>{{.CreatedAt.UTC.Format "2006-01-02 15:04"}}</td>
<td data-pending="{{.Pending}}" data-failed="{{.Failed}}">{{if or .Pending .Failed}}{{.Pending}} pending, {{.Failed}} given up{{else}}nothing pending or given up{{end}}
{{with .LastPending}}<br><small>last attempt {{.At.UTC.Format "2006-01-02 15:04:05"}}: {{if .StatusCode}}HTTP {{.StatusCode}}{{else}}no answer ({{.Error}}){{end}}</small>{{end}}</td></tr>
{{end}}</tbody></table></div>{{else}}<p>This key has no webhook endpoint.</p>{{end}}
{{end}}{{template "foot" .}}{{end}}

{{define "events"}}{{template "head" .}}{{template "nav" .}}<h1>Events</h1>
{{if not .Keys}}<p>No key has been granted to you yet.</p>{{else}}
<form method="get" action="/cabinet/events" class="filters">
{{template "key-field" .}}
<div><label for="type">Type (exact, e.g. payment.succeeded)</label><input id="type" name="type" value="{{.Type}}"></div>
<div><label for="resource_id">Resource id (exact)</label><input id="resource_id" name="resource_id" value="{{.ResourceID}}"></div>
<div class="actions"><button type="submit">Show</button> <a href="/cabinet/events{{.KeyParam}}">Clear</a></div></form>
{{if .Problem}}<p class="error" role="alert">{{.Problem}}</p>{{end}}
{{if .Rows}}<div class="scroll"><table><thead><tr><th>Created (UTC)</th><th>Type</th><th>Resource</th><th>Deliveries</th></tr></thead><tbody>
{{range .Rows}}<tr data-event="{{.ID}}"><td><a href="/cabinet/events/{{.ID}}{{$.KeyParam}}">{{.Created}}</a></td><td>{{.Type}}</td>
<td>{{if .Link}}<a href="{{.Link}}"><code>{{.ResourceID}}</code></a>{{else}}<code>{{.ResourceID}}</code>{{end}}</td><td>{{.Deliveries}}</td></tr>
{{end}}</tbody></table></div>{{else}}<p>No event matches.</p>{{end}}
<p>{{if .First}}<a href="{{.First}}">Newest</a> {{end}}{{if .Next}}<a href="{{.Next}}" rel="next">Older</a>{{end}}</p>
{{end}}{{template "foot" .}}{{end}}

{{define "event"}}{{template "head" .}}{{template "nav" .}}<h1>Event</h1>
{{if .Message}}<p role="status">{{.Message}}</p>{{end}}
{{if .Error}}<p class="error" role="alert">{{.Error}}</p>{{end}}
<dl>
<dt>Id</dt><dd><code>{{.Event.ID}}</code></dd>
<dt>Type</dt><dd>{{.Event.Type}}</dd>
<dt>Resource</dt><dd>{{.Event.ResourceType}} {{with resourcePath .Event.ResourceType .Event.ResourceID}}<a href="{{.}}"><code>{{$.Event.ResourceID}}</code></a>{{else}}<code>{{.Event.ResourceID}}</code>{{end}}</dd>
<dt>Created</dt><dd>{{.Created}}</dd>
</dl>
<h2>Payload</h2>
<div class="scroll"><pre id="payload">{{.Payload}}</pre></div>
<h2>Deliveries</h2>
{{if .Deliveries}}{{range .Deliveries}}<section data-delivery="{{.ID}}" data-endpoint="{{.EndpointID}}" data-status="{{.Status}}">
<h3><code>{{.URL}}</code></h3>
<p>{{template "status" .Status}}{{if .Reason}} ({{.Reason}}){{end}}{{with .NextAttemptAt}}; next attempt {{.UTC.Format "2006-01-02 15:04:05"}} UTC{{end}}</p>
{{if .Attempts}}<div class="scroll"><table><thead><tr><th>Attempted (UTC)</th><th>Result</th></tr></thead><tbody>
{{range .Attempts}}<tr data-attempt><td>{{.At.UTC.Format "2006-01-02 15:04:05"}}</td><td>{{if .StatusCode}}HTTP {{.StatusCode}}{{else}}no answer ({{.Error}}){{end}}</td></tr>
{{end}}</tbody></table></div>{{else}}<p><small>No attempt yet.</small></p>{{end}}</section>
{{end}}{{else}}<p>None: no endpoint took this event.</p>{{end}}
{{if .User.Role.CanChange}}<h2>Resend</h2>
{{if .Targets}}<form method="post" action="/cabinet/events/{{.Event.ID}}/resend{{.KeyParam}}" id="resend">
<input type="hidden" name="csrf_token" value="{{.CSRF}}">
<label for="endpoint_id">Send to</label><select id="endpoint_id" name="endpoint_id">
<option value="">every enabled endpoint that takes {{.Event.Type}} ({{.Takes}})</option>
{{range .Targets}}<option value="{{.ID}}"{{if eq .ID $.Endpoint}} selected{{end}}>{{.URL}}{{if not (.Takes $.Event.Type)}} (its filter leaves this type out){{end}}</option>{{end}}
</select>
<button type="submit" data-resend="{{.Event.ID}}">Resend</button></form>
<p><small>A new round of attempts starts now; the <code>webhook-id</code> stays the event's id.</small></p>
{{else}}<p>This key has no enabled webhook endpoint to resend to.</p>{{end}}{{end}}
<p><a href="/cabinet/events{{.KeyParam}}">All events</a></p>
{{template "foot" .}}{{end}}
`))
