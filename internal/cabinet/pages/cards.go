package pages

import (
	"context"
	"fmt"
	"html/template"
	"net/http"
	"time"

	"github.com/paygate/paygate/internal/cabinet"
	"github.com/paygate/paygate/internal/merchant"
	"github.com/paygate/paygate/internal/savedcard"
)

// The saved cards page (docs/cabinet.md, "Saved cards"): the shown key's
// usable saved cards, masked, with a Delete button for an admin. A card of
// another key, or one already deleted, is a 404 page.

// CardQuery selects a page of one key's usable saved cards, newest first.
type CardQuery struct {
	KeyID             string
	CustomerReference string // exact; "" for every payer
	// After is the (created, id) of the last card of the previous page.
	AfterCreated *time.Time
	AfterID      string
	Limit        int
}

// CardsData is what these pages read and change; internal/cabinet/data
// adapts the store to it.
type CardsData interface {
	// ListCards lists the key's usable saved cards as
	// listPaymentMethodTokens (GET /cabinet/v1/payment-method-tokens) does.
	ListCards(ctx context.Context, q CardQuery) ([]savedcard.Card, error)
	// DeleteCard does what deletePaymentMethodToken (DELETE
	// /cabinet/v1/payment-method-tokens/{id}) does, at the key's clock.
	// false: the key has no such usable card, and nothing changed.
	DeleteCard(ctx context.Context, key merchant.Key, id string) (bool, error)
}

// cardsView is the saved cards page's template data.
type cardsView struct {
	view
	CustomerReference string
	CanDelete         bool
	Rows              []cardRow
	Next, First       string
}

type cardRow struct {
	ID, CustomerReference, MaskedCard, Scheme, Expiry, Created string
}

// deletedMessage is what the list says after a deletion (?done=deleted).
const deletedMessage = "The saved card was deleted: it can no longer be used."

// CardsPage is GET /cabinet/cards: the shown key's usable saved cards,
// optionally of one customer_reference, newest first, a keyset page at a
// time.
func (pg *Pages) CardsPage() http.Handler {
	return pg.Signed(func(w http.ResponseWriter, r *http.Request, u *cabinet.User, csrf string) {
		if pg.d.Cards == nil {
			pg.notFound(w, "These pages are not served here.")
			return
		}
		base, ok := pg.scope(w, r, u, csrf, "Saved cards")
		if !ok {
			return
		}
		q := r.URL.Query()
		// Only a deletion is ever confirmed; the text is ours, never the URL's.
		if q.Get("done") == "deleted" {
			base.Message = deletedMessage
		}
		v := cardsView{view: base, CanDelete: u.Role.CanChange(), CustomerReference: q.Get("customer_reference")}
		if !storable(v.CustomerReference) {
			v.CustomerReference = "" // not text: left out, as no filter
		}
		if v.Key.ID == "" {
			pg.renderData(w, http.StatusOK, "cards", v)
			return
		}
		f := CardQuery{KeyID: v.Key.ID, CustomerReference: v.CustomerReference, Limit: pageSize + 1}
		if f.AfterCreated, f.AfterID, ok = keysetAfter(q.Get("after")); !ok {
			pg.badLink(w)
			return
		}
		list, err := pg.d.Cards.ListCards(r.Context(), f)
		if err != nil {
			pg.fail(w, err)
			return
		}
		link := listLink(v.view, "customer_reference", v.CustomerReference)
		more := len(list) > pageSize
		if more {
			list = list[:pageSize]
		}
		var lastCreated time.Time
		var lastID string
		for _, c := range list {
			v.Rows = append(v.Rows, cardRow{ID: c.ID, CustomerReference: c.CustomerReference, MaskedCard: c.MaskedCard,
				Scheme: c.Scheme, Expiry: fmt.Sprintf("%02d/%04d", c.ExpMonth, c.ExpYear), Created: utcMinute(c.CreatedAt)})
			lastCreated, lastID = c.CreatedAt, c.ID
		}
		v.First, v.Next = keysetLinks("/cabinet/cards", link, f.AfterCreated != nil, more, lastCreated, lastID)
		pg.renderData(w, http.StatusOK, "cards", v)
	})
}

// DeleteCard is POST /cabinet/cards/{id}/delete: what
// deletePaymentMethodToken (DELETE /cabinet/v1/payment-method-tokens/{id})
// does for the shown key, then back to the list (Post/Redirect/Get). An
// admin's only (Changing); another key's card, or one already deleted, is
// a 404 page and nothing changes.
func (pg *Pages) DeleteCard() http.Handler {
	return pg.Changing(func(w http.ResponseWriter, r *http.Request, u *cabinet.User, csrf string) {
		if pg.d.Cards == nil {
			pg.notFound(w, "These pages are not served here.")
			return
		}
		v, ok := pg.scope(w, r, u, csrf, "Saved cards")
		if !ok {
			return
		}
		found := false
		if v.Key.ID != "" {
			var err error
			if found, err = pg.d.Cards.DeleteCard(r.Context(), v.Key, pathID(r)); err != nil {
				pg.fail(w, err)
				return
			}
		}
		if !found {
			pg.notFound(w, "No such saved card among your keys (or it was already deleted).")
			return
		}
		link := listLink(v, "customer_reference", r.PostFormValue("customer_reference"))
		link.Set("done", "deleted")
		http.Redirect(w, r, "/cabinet/cards?"+link.Encode(), http.StatusSeeOther)
	})
}

var _ = template.Must(tmpl.Parse(`
{{define "cards"}}{{template "head" .}}{{template "nav" .}}<h1>Saved cards</h1>
{{if .Message}}<p role="status" data-done="deleted">{{.Message}}</p>{{end}}
{{if not .Keys}}<p>No key has been granted to you yet.</p>{{else}}
<form method="get" action="/cabinet/cards" class="filters">{{template "key-field" .}}
<div><label for="customer_reference">Customer reference (exact)</label><input id="customer_reference" name="customer_reference" value="{{.CustomerReference}}" maxlength="128"></div>
<div class="actions"><button type="submit">Show</button> <a href="/cabinet/cards{{.KeyParam}}">Clear</a></div></form>
{{if .Rows}}<div class="scroll"><table><thead><tr><th>Customer</th><th>Card</th><th>Scheme</th><th>Expires</th><th>Created (UTC)</th>{{if .CanDelete}}<th></th>{{end}}</tr></thead><tbody>
{{range .Rows}}<tr data-card="{{.ID}}"><td>{{.CustomerReference}}</td><td>{{.MaskedCard}}</td><td>{{.Scheme}}</td><td>{{.Expiry}}</td><td>{{.Created}}</td>
{{- if $.CanDelete}}<td><form method="post" class="inline" action="/cabinet/cards/{{.ID}}/delete{{$.KeyParam}}"><input type="hidden" name="csrf_token" value="{{$.CSRF}}">
{{- if $.CustomerReference}}<input type="hidden" name="customer_reference" value="{{$.CustomerReference}}">{{end -}}
<button type="submit" data-delete="{{.ID}}">Delete</button></form></td>{{end}}</tr>
{{end}}</tbody></table></div>{{else}}<p>No saved card{{if .CustomerReference}} of this customer{{end}}.</p>{{end}}
<p>{{if .First}}<a href="{{.First}}">Newest</a> {{end}}{{if .Next}}<a href="{{.Next}}" rel="next">Older</a>{{end}}</p>
{{end}}{{template "foot" .}}{{end}}
`))
