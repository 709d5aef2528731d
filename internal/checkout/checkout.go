package checkout

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/paygate/paygate/internal/fault"
	"github.com/paygate/paygate/internal/merchant"
	"github.com/paygate/paygate/internal/payment"
	"github.com/paygate/paygate/internal/store"
)

// Every page is drawn from the session as it is now, so a reload, a back
// button or a second tab shows the truth; every POST answers 303 to the page
// (post/redirect/get), so a reload never submits twice.

// Page is GET /checkout/{id}: opening it moves a created session to
// awaiting_payment_data; then the page shows whatever the session needs.
func (pg *Pages) Page() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, ok := checkoutID(r)
		if !ok {
			pg.notFoundPage(w, r)
			return
		}
		var cs *checkoutSession
		err := pg.checkoutTx(r.Context(), func(tx *store.Tx) error {
			p, err := pg.payments.OpenCheckout(r.Context(), tx, id)
			if err != nil {
				return err
			}
			cs, err = pg.loadCheckout(r.Context(), tx, p)
			return err
		})
		if err != nil {
			pg.checkoutFailed(w, r, err)
			return
		}
		pg.showCheckout(w, r, cs)
	})
}

// showCheckout draws the page of a session's status.
func (pg *Pages) showCheckout(w http.ResponseWriter, r *http.Request, cs *checkoutSession) {
	p := cs.p.Observe(pg.now())
	switch p.Status {
	case payment.Created, payment.AwaitingPaymentData:
		if cs.channel.CheckoutMode != merchant.CheckoutProviderRedirect {
			pg.renderForm(w, r, cs, http.StatusOK, nil)
		} else if p.DeclineCode != "" {
			pg.renderPage(w, r, http.StatusOK, pg.retryView(w, r, cs))
		} else {
			pg.redirectToProvider(w, r, cs)
		}
	case payment.Processing, payment.ManualReview:
		pg.renderPage(w, r, http.StatusOK, pg.waitingView(cs))
	case payment.RequiresAction:
		if p.NextActionType == "otp" {
			pg.renderPage(w, r, http.StatusOK, pg.codeView(w, r, cs, ""))
			return
		}
		if origin(p.NextActionURL) != "" {
			pg.sendPayer(w, r, cs, p.NextActionURL)
			return
		}
		pg.renderPage(w, r, http.StatusOK, pg.waitingView(cs))
	case payment.Expired, payment.Canceled:
		pg.renderPage(w, r, http.StatusGone, pg.closedView(cs))
	default: // finished: docs/design/decisions.md section 9
		if to := returnTo(&p); to != "" {
			http.Redirect(w, r, to, http.StatusSeeOther)
			return
		}
		pg.renderPage(w, r, http.StatusOK, pg.resultView(cs))
	}
}

// Submit is POST /checkout/{id}: the payer's payment data. A
// session that is no longer open (a double submit, a second tab) is simply
// shown as it is: its payment was taken once.
func (pg *Pages) Submit() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, ok := pg.checkoutPost(w, r)
		if !ok {
			return
		}
		var cs *checkoutSession
		err := pg.checkoutTx(r.Context(), func(tx *store.Tx) error {
			p, err := pg.payments.CheckoutSession(r.Context(), tx, id)
			if err != nil {
				return err
			}
			cs, err = pg.loadCheckout(r.Context(), tx, p)
			return err
		})
		if err != nil {
			pg.checkoutFailed(w, r, err)
			return
		}
		open := cs.p.Observe(pg.now()).Status
		if open != payment.Created && open != payment.AwaitingPaymentData {
			pg.seeCheckout(w, r, id)
			return
		}
		if cs.channel.CheckoutMode == merchant.CheckoutProviderRedirect {
			pg.redirectToProvider(w, r, cs) // "try again" after a decline
			return
		}
		form, errs := pg.readCheckoutForm(r, cs)
		if len(errs) > 0 {
			pg.renderForm(w, r, cs, http.StatusUnprocessableEntity, errs)
			return
		}
		err = pg.checkoutTx(r.Context(), func(tx *store.Tx) error {
			p, err := pg.payments.CheckoutSession(r.Context(), tx, id)
			if err != nil {
				return err
			}
			return pg.payments.SubmitCheckout(r.Context(), tx, p, form)
		})
		if f, ok := fault.As(err); ok && f.Code != fault.InvalidPaymentState && pg.statusOf(f.Code) < 500 {
			pg.renderForm(w, r, cs, http.StatusUnprocessableEntity, []fieldError{pageError(f)})
			return
		}
		if err != nil && !stale(err) {
			pg.checkoutFailed(w, r, err)
			return
		}
		pg.awaitOutcome(r.Context(), id)
		pg.seeCheckout(w, r, id)
	})
}

// Confirm is POST /checkout/{id}/confirm: the one-time code of a
// mobile payment (field value), passed to payments.Confirm.
func (pg *Pages) Confirm() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, ok := pg.checkoutPost(w, r)
		if !ok {
			return
		}
		code := r.PostFormValue("value")
		var cs *checkoutSession
		err := pg.checkoutTx(r.Context(), func(tx *store.Tx) error {
			p, err := pg.payments.CheckoutSession(r.Context(), tx, id)
			if err != nil {
				return err
			}
			if p.Status != payment.RequiresAction || p.NextActionType != "otp" {
				return nil // answered already: show the session as it is
			}
			if !validCode(code) {
				cs, err = pg.loadCheckout(r.Context(), tx, p)
				if err == nil {
					err = fault.OnField(fault.ValidationError, "value", "enter the code from the message, digits only")
				}
				return err
			}
			_, err = pg.payments.Confirm(r.Context(), tx, p, code)
			return err
		})
		if f, ok := fault.As(err); ok && f.Field == "value" && cs != nil {
			pg.renderPage(w, r, http.StatusUnprocessableEntity, pg.codeView(w, r, cs, pageMessage("value", f.Message)))
			return
		}
		if err != nil && !stale(err) {
			pg.checkoutFailed(w, r, err)
			return
		}
		pg.awaitOutcome(r.Context(), id)
		pg.seeCheckout(w, r, id)
	})
}

// Return is GET /checkout/{id}/return, where a provider sends the
// payer back after a 3DS or redirect step: Paygate asks the provider for
// the outcome at once (confirm without a code) rather than wait for its
// next poll, then shows the session.
func (pg *Pages) Return() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, ok := checkoutID(r)
		if !ok {
			pg.notFoundPage(w, r)
			return
		}
		err := pg.checkoutTx(r.Context(), func(tx *store.Tx) error {
			p, err := pg.payments.CheckoutSession(r.Context(), tx, id)
			if err != nil || p.Status != payment.RequiresAction || p.NextActionType == "otp" {
				return err
			}
			_, err = pg.payments.Confirm(r.Context(), tx, p, "")
			return err
		})
		if err != nil && !stale(err) {
			pg.checkoutFailed(w, r, err)
			return
		}
		pg.awaitOutcome(r.Context(), id)
		pg.seeCheckout(w, r, id)
	})
}

// redirectToProvider sends the payer of a provider_redirect session to the
// provider's own page (payment.Engine.StartRedirect).
func (pg *Pages) redirectToProvider(w http.ResponseWriter, r *http.Request, cs *checkoutSession) {
	if pg.engine == nil {
		pg.checkoutFailed(w, r, errors.New("no engine: provider_redirect checkout is not wired"))
		return
	}
	to, err := pg.engine.StartRedirect(r.Context(), func(ctx context.Context, fn func(payment.RedirectTx) error) error {
		return pg.store.InTx(ctx, func(tx *store.Tx) error { return fn(tx) })
	}, cs.p.SessionID)
	switch {
	case errors.Is(err, payment.ErrSessionNotOpen) || stale(err):
		pg.seeCheckout(w, r, cs.p.SessionID)
	case err != nil:
		pg.log.Warn("checkout: the provider's page could not be opened", "request_id", pg.requestID(r.Context()),
			"session_id", cs.p.SessionID, "error", err)
		pg.renderPage(w, r, http.StatusBadGateway, pg.messageView(cs, "unavailable", "The payment provider is not answering",
			"Nothing was charged. Please try again in a moment."))
	default:
		pg.sendPayer(w, r, cs, to)
	}
}

// sendPayer sends the payer to a provider's page (3DS, the provider's
// checkout). A redirect that follows a form submission must lead to an
// origin the form's Content-Security-Policy allows (form-action), so it is
// a 303 when the origin is one of Config.ProviderOrigins; any other goes
// through a page that moves on by itself (meta refresh, a new navigation
// that form-action does not govern) with a link to click.
func (pg *Pages) sendPayer(w http.ResponseWriter, r *http.Request, cs *checkoutSession, to string) {
	o := origin(to)
	if o == origin(cs.p.ReturnURL) || slices.ContainsFunc(pg.origins(), func(p string) bool { return origin(p) == o }) {
		http.Redirect(w, r, to, http.StatusSeeOther)
		return
	}
	pg.renderPage(w, r, http.StatusOK, pageView{Page: "message", Icon: "wait", Refresh: "0; url=" + to,
		Title: "Taking you to your bank", Lead: "If nothing happens, use the button below.", Order: pg.orderView(cs),
		Link: &pageLink{Href: to, Text: "Continue"}})
}

// checkoutPost reads a POST's form and checks its anti-forgery token.
func (pg *Pages) checkoutPost(w http.ResponseWriter, r *http.Request) (string, bool) {
	id, ok := checkoutID(r)
	if !ok {
		pg.notFoundPage(w, r)
		return "", false
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBody)
	if err := r.ParseForm(); err != nil {
		pg.renderPage(w, r, http.StatusBadRequest, pg.messageView(nil, "error", "The form could not be read",
			"Go back to the payment page and try again."))
		return "", false
	}
	if !pg.validFormToken(r, id) {
		pg.renderPage(w, r, http.StatusForbidden, pg.forgeryView(id))
		return "", false
	}
	return id, true
}

// seeCheckout is the post/redirect/get step: 303 to the session's page.
func (pg *Pages) seeCheckout(w http.ResponseWriter, r *http.Request, id string) {
	http.Redirect(w, r, "/checkout/"+id, http.StatusSeeOther)
}

// outcomeWait bounds how long a submission waits for the provider's answer
// before the payer is shown the waiting page: most answers come within it,
// so the payer goes straight to the result (or the 3DS page).
const outcomeWait = 3 * time.Second

// awaitOutcome waits, up to outcomeWait, for the session to leave
// processing. It only reads; the payer then sees the session as it is.
func (pg *Pages) awaitOutcome(ctx context.Context, id string) {
	ctx, cancel := context.WithTimeout(ctx, outcomeWait)
	defer cancel()
	tick := time.NewTicker(40 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		p, err := pg.payments.FindSession(ctx, id)
		if err != nil || (p.Status != payment.Processing && p.Status != payment.ManualReview) {
			return
		}
	}
}

// checkoutTx runs fn in a transaction, again when a concurrent request
// changed the payment first (compare-and-set lost), so that two tabs never
// see an error page for a race.
func (pg *Pages) checkoutTx(ctx context.Context, fn func(tx *store.Tx) error) error {
	var err error
	for range 3 {
		if err = pg.store.InTx(ctx, fn); !errors.Is(err, payment.ErrConflict) {
			return err
		}
	}
	return err
}

// stale reports an error that only means the session moved on meanwhile:
// showing it as it now is answers the payer.
func stale(err error) bool {
	f, ok := fault.As(err)
	return errors.Is(err, payment.ErrConflict) || (ok && f.Code == fault.InvalidPaymentState)
}

// checkoutFailed shows an error page: 404 for an unknown session, else 503
// or 500 with the cause only in the log.
func (pg *Pages) checkoutFailed(w http.ResponseWriter, r *http.Request, err error) {
	switch {
	case errors.Is(err, store.ErrNotFound) || errors.Is(err, payment.ErrNoSession):
		pg.notFoundPage(w, r)
	case errors.Is(err, context.Canceled) && r.Context().Err() != nil:
	case store.Unreachable(err):
		pg.log.Warn("checkout: database unavailable", "request_id", pg.requestID(r.Context()), "error", err)
		pg.renderPage(w, r, http.StatusServiceUnavailable, pg.messageView(nil, "error", "We could not load this page",
			"Nothing was charged. Please try again in a moment."))
	default:
		pg.log.Error("checkout failed", "request_id", pg.requestID(r.Context()), "route", r.Pattern, "error", err)
		pg.renderPage(w, r, http.StatusInternalServerError, pg.messageView(nil, "error", "Something went wrong",
			"Please try again in a moment. If it keeps happening, go back to the shop."))
	}
}

func (pg *Pages) notFoundPage(w http.ResponseWriter, r *http.Request) {
	pg.renderPage(w, r, http.StatusNotFound, pg.messageView(nil, "notfound", "Payment page not found",
		"This link is not valid. Go back to the shop and start the payment again."))
}

// checkoutID reads the session id of the path: a uuid.
func checkoutID(r *http.Request) (string, bool) {
	raw := r.PathValue("id")
	id, err := uuid.Parse(raw)
	if err != nil || len(raw) != 36 {
		return "", false
	}
	return id.String(), true
}

// returnTo is the merchant's return_url with payment_id and status added to
// its query (docs/design/decisions.md section 9); its own query and fragment
// are kept as they are. Empty when the session has none.
func returnTo(p *payment.Payment) string {
	if p.ReturnURL == "" {
		return ""
	}
	u, err := url.Parse(p.ReturnURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") {
		return ""
	}
	add := url.Values{"payment_id": {p.ID}, "status": {string(p.Status)}}.Encode()
	if u.RawQuery != "" {
		u.RawQuery += "&" + add
	} else {
		u.RawQuery = add
	}
	return u.String()
}

// validCode: a one-time code is digits, at most 32 of them.
func validCode(s string) bool {
	if s == "" || len(s) > 32 {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
