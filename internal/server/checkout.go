package server

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

// The hosted checkout (issue 4, decisions 4 and 9): the payer's pages at
// checkout_url. Every page is drawn from the session as it is now, so a
// reload, a back button or a second tab shows the truth; every POST answers
// 303 to the page (post/redirect/get), so a reload never submits twice.
// docs/checkout.md describes the flow for merchants.

// checkoutPage is GET /checkout/{id}: opening it moves a created session to
// awaiting_payment_data; then the page shows whatever the session needs.
func (s *Server) checkoutPage() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, ok := checkoutID(r)
		if !ok {
			s.notFoundPage(w, r)
			return
		}
		var cs *checkoutSession
		err := s.checkoutTx(r.Context(), func(tx *store.Tx) error {
			p, err := s.payments.OpenCheckout(r.Context(), tx, id)
			if err != nil {
				return err
			}
			cs, err = s.loadCheckout(r.Context(), tx, p)
			return err
		})
		if err != nil {
			s.checkoutFailed(w, r, err)
			return
		}
		s.showCheckout(w, r, cs)
	})
}

// showCheckout draws the page of a session's status.
func (s *Server) showCheckout(w http.ResponseWriter, r *http.Request, cs *checkoutSession) {
	p := cs.p.Observe(s.now())
	switch p.Status {
	case payment.Created, payment.AwaitingPaymentData:
		if cs.channel.CheckoutMode != merchant.CheckoutProviderRedirect {
			s.renderForm(w, r, cs, http.StatusOK, nil)
		} else if p.DeclineCode != "" {
			s.renderPage(w, r, http.StatusOK, s.retryView(w, r, cs))
		} else {
			s.redirectToProvider(w, r, cs)
		}
	case payment.Processing, payment.ManualReview:
		s.renderPage(w, r, http.StatusOK, s.waitingView(cs))
	case payment.RequiresAction:
		if p.NextActionType == "otp" {
			s.renderPage(w, r, http.StatusOK, s.codeView(w, r, cs, ""))
			return
		}
		if origin(p.NextActionURL) != "" {
			s.sendPayer(w, r, cs, p.NextActionURL)
			return
		}
		s.renderPage(w, r, http.StatusOK, s.waitingView(cs))
	case payment.Expired, payment.Canceled:
		s.renderPage(w, r, http.StatusGone, s.closedView(cs))
	default: // finished: decisions 9
		if to := returnTo(&p); to != "" {
			http.Redirect(w, r, to, http.StatusSeeOther)
			return
		}
		s.renderPage(w, r, http.StatusOK, s.resultView(cs))
	}
}

// checkoutSubmit is POST /checkout/{id}: the payer's payment data. A
// session that is no longer open (a double submit, a second tab) is simply
// shown as it is: its payment was taken once.
func (s *Server) checkoutSubmit() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, ok := s.checkoutPost(w, r)
		if !ok {
			return
		}
		var cs *checkoutSession
		err := s.checkoutTx(r.Context(), func(tx *store.Tx) error {
			p, err := tx.FindSessionByID(r.Context(), id)
			if err != nil {
				return err
			}
			cs, err = s.loadCheckout(r.Context(), tx, p)
			return err
		})
		if err != nil {
			s.checkoutFailed(w, r, err)
			return
		}
		open := cs.p.Observe(s.now()).Status
		if open != payment.Created && open != payment.AwaitingPaymentData {
			s.seeCheckout(w, r, id)
			return
		}
		if cs.channel.CheckoutMode == merchant.CheckoutProviderRedirect {
			s.redirectToProvider(w, r, cs) // "try again" after a decline
			return
		}
		form, errs := s.readCheckoutForm(r, cs)
		if len(errs) > 0 {
			s.renderForm(w, r, cs, http.StatusUnprocessableEntity, errs)
			return
		}
		err = s.checkoutTx(r.Context(), func(tx *store.Tx) error {
			p, err := tx.FindSessionByID(r.Context(), id)
			if err != nil {
				return err
			}
			return s.payments.SubmitCheckout(r.Context(), tx, p, form)
		})
		if f, ok := fault.As(err); ok && f.Code != fault.InvalidPaymentState && statusOf(f.Code) < 500 {
			s.renderForm(w, r, cs, http.StatusUnprocessableEntity, []fieldError{pageError(f)})
			return
		}
		if err != nil && !stale(err) {
			s.checkoutFailed(w, r, err)
			return
		}
		s.awaitOutcome(r.Context(), id)
		s.seeCheckout(w, r, id)
	})
}

// checkoutConfirm is POST /checkout/{id}/confirm: the one-time code of a
// mobile payment (field value), passed to payments.Confirm.
func (s *Server) checkoutConfirm() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, ok := s.checkoutPost(w, r)
		if !ok {
			return
		}
		code := r.PostFormValue("value")
		var cs *checkoutSession
		err := s.checkoutTx(r.Context(), func(tx *store.Tx) error {
			p, err := tx.FindSessionByID(r.Context(), id)
			if err != nil {
				return err
			}
			if p.Status != payment.RequiresAction || p.NextActionType != "otp" {
				return nil // answered already: show the session as it is
			}
			if !validCode(code) {
				cs, err = s.loadCheckout(r.Context(), tx, p)
				if err == nil {
					err = fault.OnField(fault.ValidationError, "value", "enter the code from the message, digits only")
				}
				return err
			}
			_, err = s.payments.Confirm(r.Context(), tx, p, code)
			return err
		})
		if f, ok := fault.As(err); ok && f.Field == "value" && cs != nil {
			s.renderPage(w, r, http.StatusUnprocessableEntity, s.codeView(w, r, cs, pageMessage("value", f.Message)))
			return
		}
		if err != nil && !stale(err) {
			s.checkoutFailed(w, r, err)
			return
		}
		s.awaitOutcome(r.Context(), id)
		s.seeCheckout(w, r, id)
	})
}

// checkoutReturn is GET /checkout/{id}/return, where a provider sends the
// payer back after a 3DS or redirect step: Paygate asks the provider for
// the outcome at once (confirm without a code) rather than wait for its
// next poll, then shows the session.
func (s *Server) checkoutReturn() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, ok := checkoutID(r)
		if !ok {
			s.notFoundPage(w, r)
			return
		}
		err := s.checkoutTx(r.Context(), func(tx *store.Tx) error {
			p, err := tx.FindSessionByID(r.Context(), id)
			if err != nil || p.Status != payment.RequiresAction || p.NextActionType == "otp" {
				return err
			}
			_, err = s.payments.Confirm(r.Context(), tx, p, "")
			return err
		})
		if err != nil && !stale(err) {
			s.checkoutFailed(w, r, err)
			return
		}
		s.awaitOutcome(r.Context(), id)
		s.seeCheckout(w, r, id)
	})
}

// redirectToProvider sends the payer of a provider_redirect session to the
// provider's own page (payment.Engine.StartRedirect).
func (s *Server) redirectToProvider(w http.ResponseWriter, r *http.Request, cs *checkoutSession) {
	if s.engine == nil {
		s.checkoutFailed(w, r, errors.New("no engine: provider_redirect checkout is not wired"))
		return
	}
	to, err := s.engine.StartRedirect(r.Context(), func(ctx context.Context, fn func(payment.RedirectTx) error) error {
		return s.store.InTx(ctx, func(tx *store.Tx) error { return fn(tx) })
	}, cs.p.SessionID)
	switch {
	case errors.Is(err, payment.ErrSessionNotOpen) || stale(err):
		s.seeCheckout(w, r, cs.p.SessionID)
	case err != nil:
		s.log.Warn("checkout: the provider's page could not be opened", "request_id", requestID(r.Context()),
			"session_id", cs.p.SessionID, "error", err)
		s.renderPage(w, r, http.StatusBadGateway, s.messageView(cs, "unavailable", "The payment provider is not answering",
			"Nothing was charged. Please try again in a moment."))
	default:
		s.sendPayer(w, r, cs, to)
	}
}

// sendPayer sends the payer to a provider's page (3DS, the provider's
// checkout). A redirect that follows a form submission must lead to an
// origin the form's Content-Security-Policy allows (form-action), so it is
// a 303 when the origin is one of Config.ProviderOrigins; any other goes
// through a page that moves on by itself (meta refresh, a new navigation
// that form-action does not govern) with a link to click.
func (s *Server) sendPayer(w http.ResponseWriter, r *http.Request, cs *checkoutSession, to string) {
	o := origin(to)
	if o == origin(cs.p.ReturnURL) || slices.ContainsFunc(s.cfg.ProviderOrigins, func(p string) bool { return origin(p) == o }) {
		http.Redirect(w, r, to, http.StatusSeeOther)
		return
	}
	s.renderPage(w, r, http.StatusOK, pageView{Page: "message", Icon: "wait", Refresh: "0; url=" + to,
		Title: "Taking you to your bank", Lead: "If nothing happens, use the button below.", Order: s.orderView(cs),
		Link: &pageLink{Href: to, Text: "Continue"}})
}

// checkoutPost reads a POST's form and checks its anti-forgery token.
func (s *Server) checkoutPost(w http.ResponseWriter, r *http.Request) (string, bool) {
	id, ok := checkoutID(r)
	if !ok {
		s.notFoundPage(w, r)
		return "", false
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBody)
	if err := r.ParseForm(); err != nil {
		s.renderPage(w, r, http.StatusBadRequest, s.messageView(nil, "error", "The form could not be read",
			"Go back to the payment page and try again."))
		return "", false
	}
	if !s.validFormToken(r, id) {
		s.renderPage(w, r, http.StatusForbidden, s.forgeryView(id))
		return "", false
	}
	return id, true
}

// seeCheckout is the post/redirect/get step: 303 to the session's page.
func (s *Server) seeCheckout(w http.ResponseWriter, r *http.Request, id string) {
	http.Redirect(w, r, "/checkout/"+id, http.StatusSeeOther)
}

// outcomeWait bounds how long a submission waits for the provider's answer
// before the payer is shown the waiting page: most answers come within it,
// so the payer goes straight to the result (or the 3DS page).
const outcomeWait = 3 * time.Second

// awaitOutcome waits, up to outcomeWait, for the session to leave
// processing. It only reads; the payer then sees the session as it is.
func (s *Server) awaitOutcome(ctx context.Context, id string) {
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
		p, err := s.store.FindSessionByID(ctx, id)
		if err != nil || (p.Status != payment.Processing && p.Status != payment.ManualReview) {
			return
		}
	}
}

// checkoutTx runs fn in a transaction, again when a concurrent request
// changed the payment first (compare-and-set lost), so that two tabs never
// see an error page for a race.
func (s *Server) checkoutTx(ctx context.Context, fn func(tx *store.Tx) error) error {
	var err error
	for range 3 {
		if err = s.store.InTx(ctx, fn); !errors.Is(err, payment.ErrConflict) {
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
func (s *Server) checkoutFailed(w http.ResponseWriter, r *http.Request, err error) {
	switch {
	case errors.Is(err, store.ErrNotFound) || errors.Is(err, payment.ErrNoSession):
		s.notFoundPage(w, r)
	case errors.Is(err, context.Canceled) && r.Context().Err() != nil:
	case store.Unreachable(err):
		s.log.Warn("checkout: database unavailable", "request_id", requestID(r.Context()), "error", err)
		s.renderPage(w, r, http.StatusServiceUnavailable, s.messageView(nil, "error", "We could not load this page",
			"Nothing was charged. Please try again in a moment."))
	default:
		s.log.Error("checkout failed", "request_id", requestID(r.Context()), "route", r.Pattern, "error", err)
		s.renderPage(w, r, http.StatusInternalServerError, s.messageView(nil, "error", "Something went wrong",
			"Please try again in a moment. If it keeps happening, go back to the shop."))
	}
}

func (s *Server) notFoundPage(w http.ResponseWriter, r *http.Request) {
	s.renderPage(w, r, http.StatusNotFound, s.messageView(nil, "notfound", "Payment page not found",
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
// its query (decisions 9); its own query and fragment are kept as they are.
// Empty when the session has none.
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
