package acquirer

import (
	"bytes"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/paygate/paygate/internal/card"

	"github.com/paygate/paygate/internal/provider/sandbox/wire"
)

// The pages a payer sees at the sandbox: the issuer's 3DS challenge
// (docs/design/decisions.md section 9: a form that posts outcome=approve or
// outcome=deny) and the sandbox's own checkout. Plain HTML forms, no script,
// no third-party asset; forms post back to their own URL.

var pageTemplates = template.Must(template.New("pages").Parse(`
{{define "head"}}<!doctype html>
<html lang="{{.L.Lang}}">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>body{font:16px/1.4 system-ui,sans-serif;max-width:26rem;margin:2rem auto;padding:0 1rem;color:#222}
label{display:block;margin:.7rem 0 .2rem}input{width:100%;padding:.45rem;box-sizing:border-box}
.row{display:flex;gap:.6rem}.row>div{flex:1}button{margin:1rem .5rem 0 0;padding:.55rem 1.1rem}
.note{color:#666;font-size:.85rem}.error{color:#a00}</style></head>
<body><p class="note">{{.L.Banner}}</p><h1>{{.Title}}</h1>
{{end}}
{{define "challenge"}}{{template "head" .}}<p>{{.L.ChallengeText}}</p>
<p>{{.L.Amount}}: <strong>{{.Amount}}</strong></p>
<form method="post">
<button type="submit" name="outcome" value="approve">{{.L.Approve}}</button>
<button type="submit" name="outcome" value="deny">{{.L.Deny}}</button>
</form></body></html>
{{end}}
{{define "checkout"}}{{template "head" .}}<p>{{.L.Amount}}: <strong>{{.Amount}}</strong></p>
{{if .Error}}<p class="error" role="alert">{{.Error}}</p>{{end}}
<form method="post">
<label for="number">{{.L.CardNumber}}</label>
<input id="number" name="number" inputmode="numeric" autocomplete="cc-number" required>
<div class="row"><div><label for="expire_month">{{.L.ExpMonth}}</label>
<input id="expire_month" name="expire_month" inputmode="numeric" autocomplete="cc-exp-month" placeholder="MM" required></div>
<div><label for="expire_year">{{.L.ExpYear}}</label>
<input id="expire_year" name="expire_year" inputmode="numeric" autocomplete="cc-exp-year" placeholder="YYYY" required></div>
<div><label for="cvv">{{.L.CVV}}</label>
<input id="cvv" name="cvv" inputmode="numeric" autocomplete="cc-csc" required></div></div>
<label for="cardholder">{{.L.Holder}}</label>
<input id="cardholder" name="cardholder" autocomplete="cc-name">
<button type="submit">{{.L.Pay}}</button>
</form></body></html>
{{end}}
{{define "message"}}{{template "head" .}}{{if .Status}}<p>{{.L.Status}}: <strong>{{.Status}}</strong></p>{{end}}
{{if .Error}}<p class="error">{{.Error}}</p>{{end}}</body></html>
{{end}}`))

type pageData struct {
	L      labels
	Title  string
	Amount string
	Error  string
	Status string
}

// render writes a page. Pages carry payment state, so nothing caches them;
// the policy allows the inline style and nothing else.
func render(w http.ResponseWriter, status int, name string, d pageData) {
	var b bytes.Buffer
	if err := pageTemplates.ExecuteTemplate(&b, name, d); err != nil {
		http.Error(w, "page error", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	w.Write(b.Bytes())
}

func renderMessage(w http.ResponseWriter, status int, l labels, msg string) {
	render(w, status, "message", pageData{L: l, Title: l.DoneTitle, Error: msg})
}

// outcome is what a page shows of a payment or payout, and where the payer
// goes when it is over. The ids added to return_url are prefixed: Paygate
// may pass its merchant's return_url on unchanged, and there payment_id
// means Paygate's payment (docs/design/decisions.md section 9), not the
// sandbox's.
type outcome struct {
	locale, currency, status string
	amount                   int64
	awaiting                 bool       // a 3DS challenge is waiting for the payer
	returnURL                string     // empty: show the result page
	query                    url.Values // added to returnURL
}

func (s *Server) outcomeLocked(id string) (outcome, bool) {
	if p := s.st.Payments[id]; p != nil {
		q := url.Values{"sandbox_payment_id": {p.ID}, "status": {p.Status}}
		if p.SessionID != "" {
			q.Set("sandbox_session_id", p.SessionID)
		}
		return outcome{locale: p.Locale, currency: p.Currency, status: p.Status, amount: p.AmountMinor,
			awaiting: p.Status == wire.StatusRequiresAction && p.Action == "three_ds", returnURL: p.ReturnURL, query: q}, true
	}
	if p := s.st.Payouts[id]; p != nil {
		return outcome{locale: p.Locale, currency: p.Currency, status: p.Status, amount: p.AmountMinor,
			awaiting: p.Status == wire.StatusRequiresAction, returnURL: p.ReturnURL,
			query: url.Values{"sandbox_payout_id": {p.ID}, "status": {p.Status}}}, true
	}
	return outcome{}, false
}

// finish sends the payer on (docs/design/decisions.md section 9): 303 to
// return_url with the outcome in its query, or a result page when there is
// none.
func finish(w http.ResponseWriter, r *http.Request, o outcome) {
	if o.returnURL != "" {
		if u, err := url.Parse(o.returnURL); err == nil {
			q := u.Query()
			for k, v := range o.query {
				q[k] = v
			}
			u.RawQuery = q.Encode()
			http.Redirect(w, r, u.String(), http.StatusSeeOther)
			return
		}
	}
	l := labelsFor(r, o.locale)
	render(w, http.StatusOK, "message", pageData{L: l, Title: l.DoneTitle, Status: l.status(o.status)})
}

func (s *Server) challengePage(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.sweepLocked()
	o, ok := s.outcomeLocked(r.PathValue("id"))
	s.saveLocked()
	s.mu.Unlock()
	l := labelsFor(r, o.locale)
	switch {
	case !ok:
		renderMessage(w, http.StatusNotFound, l, l.NotFound)
	case o.awaiting:
		render(w, http.StatusOK, "challenge", pageData{L: l, Title: l.ChallengeTitle, Amount: formatAmount(o.amount, o.currency)})
	default: // a finished challenge never shows the form again
		render(w, http.StatusOK, "message", pageData{L: l, Title: l.DoneTitle, Status: l.status(o.status)})
	}
}

// challengeSubmit completes a challenge as the payer's click does. A second
// submission changes nothing and sends the payer on again.
func (s *Server) challengeSubmit(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
	approve := r.PostFormValue("outcome") == "approve"
	if !approve && r.PostFormValue("outcome") != "deny" {
		l := labelsFor(r, "")
		renderMessage(w, http.StatusBadRequest, l, l.BadRequest)
		return
	}
	id := r.PathValue("id")
	s.mu.Lock()
	s.sweepLocked()
	if p := s.st.Payments[id]; p != nil && p.Status == wire.StatusRequiresAction && p.Action == "three_ds" {
		if approve {
			s.approvePaymentLocked(p, "")
		} else {
			s.denyPaymentLocked(p)
		}
	} else if p := s.st.Payouts[id]; p != nil && p.Status == wire.StatusRequiresAction {
		if approve {
			s.approvePayoutLocked(p, "")
		} else {
			s.denyPayoutLocked(p)
		}
	}
	o, ok := s.outcomeLocked(id)
	s.saveLocked()
	s.mu.Unlock()
	if !ok {
		l := labelsFor(r, "")
		renderMessage(w, http.StatusNotFound, l, l.NotFound)
		return
	}
	finish(w, r, o)
}

func (s *Server) checkoutPage(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	h := s.st.Sessions[r.PathValue("id")]
	var o outcome
	var open bool
	var sess hostedSession
	if h != nil {
		s.expireSessionLocked(h)
		sess, open = *h, h.Status == wire.StatusOpen
		o, _ = s.outcomeLocked(h.PaymentID)
	}
	s.saveLocked()
	s.mu.Unlock()
	l := labelsFor(r, sess.Locale)
	switch {
	case h == nil:
		renderMessage(w, http.StatusNotFound, l, l.NotFound)
	case open:
		render(w, http.StatusOK, "checkout", pageData{L: l, Title: l.CheckoutTitle,
			Amount: formatAmount(sess.AmountMinor, sess.Currency)})
	case sess.PaymentID != "": // a finished session never shows the form again
		render(w, http.StatusOK, "message", pageData{L: l, Title: l.DoneTitle, Status: l.status(o.status)})
	default:
		render(w, http.StatusGone, "message", pageData{L: l, Title: l.DoneTitle, Status: l.status(sess.Status)})
	}
}

// checkoutSubmit takes the card, pays once per session, and sends the payer
// to the 3DS challenge or back to the session's return_url.
func (s *Server) checkoutSubmit(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
	if err := r.ParseForm(); err != nil {
		l := labelsFor(r, "")
		renderMessage(w, http.StatusBadRequest, l, l.BadRequest)
		return
	}
	f := r.PostForm
	month, _ := strconv.Atoi(strings.TrimSpace(f.Get("expire_month")))
	year, _ := strconv.Atoi(strings.TrimSpace(f.Get("expire_year")))
	wc := wire.Card{Number: strings.NewReplacer(" ", "", "-", "").Replace(f.Get("number")),
		ExpMonth: month, ExpYear: year, CVV: strings.TrimSpace(f.Get("cvv")), Holder: f.Get("cardholder")}

	s.mu.Lock()
	h := s.st.Sessions[r.PathValue("id")]
	if h == nil {
		s.mu.Unlock()
		l := labelsFor(r, "")
		renderMessage(w, http.StatusNotFound, l, l.NotFound)
		return
	}
	s.expireSessionLocked(h)
	l := labelsFor(r, h.Locale)
	if h.Status != wire.StatusOpen {
		o, paid := s.outcomeLocked(h.PaymentID)
		st := h.Status
		s.saveLocked()
		s.mu.Unlock()
		if paid {
			finish(w, r, o)
			return
		}
		render(w, http.StatusGone, "message", pageData{L: l, Title: l.DoneTitle, Status: l.status(st)})
		return
	}
	in, bad := s.resolveCard(wc, "card")
	if bad != nil || wc.CVV == "" || !card.Luhn(wc.Number) { // a typo: let the payer fix it
		amount := formatAmount(h.AmountMinor, h.Currency)
		s.mu.Unlock()
		render(w, http.StatusUnprocessableEntity, "checkout", pageData{L: l, Title: l.CheckoutTitle,
			Amount: amount, Error: l.InvalidCard})
		return
	}
	p := &payment{Intent: h.Intent, AmountMinor: h.AmountMinor, Currency: h.Currency, OrderID: h.OrderID,
		Locale: h.Locale, ReturnURL: h.ReturnURL, SessionID: h.ID}
	p.OperationID = h.OperationID // the ledger counts the session's operation
	s.startPaymentLocked(p, in, s.base(r))
	h.Status, h.PaymentID, h.UpdatedAt = wire.StatusCompleted, p.ID, s.now()
	s.touch(ref{Kind: "session", ID: h.ID})
	o, _ := s.outcomeLocked(p.ID)
	next := p.ActionURL
	s.saveLocked()
	s.mu.Unlock()
	if o.awaiting {
		http.Redirect(w, r, next, http.StatusSeeOther)
		return
	}
	finish(w, r, o)
}
