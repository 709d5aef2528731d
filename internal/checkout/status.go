package checkout

import (
	"fmt"
	"net/http"

	"github.com/paygate/paygate/internal/merchant"
	"github.com/paygate/paygate/internal/money"
	"github.com/paygate/paygate/internal/payment"
)

// The checkout's pages other than the payment form: one per state of the
// session (showCheckout picks).

func (pg *Pages) orderView(cs *checkoutSession) *orderView {
	p := cs.p
	o := &orderView{Label: "Amount due", Amount: money.Format(p.AmountMinor, p.Currency), Description: p.Description,
		OrderID: p.OrderID}
	switch p.Observe(pg.now()).Status {
	case payment.Succeeded, payment.PartiallyRefunded, payment.Refunded:
		o.Label = "Amount paid"
	case payment.Authorized:
		o.Label = "Amount reserved"
	case payment.Declined, payment.Failed, payment.Expired, payment.Canceled:
		o.Label = "Amount"
	}
	if p.Subscription != nil {
		o.Sub = subscriptionView(p)
	}
	return o
}

func subscriptionView(p *payment.Payment) *subView {
	t := p.Subscription
	unit := t.IntervalUnit
	every := "every " + unit
	if t.IntervalCount > 1 {
		every = fmt.Sprintf("every %d %ss", t.IntervalCount, unit)
	}
	amount := money.Format(p.AmountMinor, p.Currency)
	return &subView{Today: amount, Amount: amount, Every: every, First: t.FirstChargeAt.UTC().Format("2 January 2006"),
		Version: t.DisclosureVersion}
}

func (pg *Pages) waitingView(cs *checkoutSession) pageView {
	v := pageView{Page: "message", Icon: "wait", Refresh: "1", Order: pg.orderView(cs), Title: "Processing your payment",
		Lead: "This takes a few seconds. This page updates by itself: please keep it open."}
	if cs.p.Status == payment.ManualReview {
		v.Title, v.Refresh = "Confirming your payment", "3"
		v.Lead = "We are confirming the result with the payment provider. This page updates by itself; you will not be charged twice."
	}
	if cs.p.Status == payment.RequiresAction { // a step whose page Paygate cannot send the payer to
		v.Title = "Waiting for your bank"
	}
	return v
}

func (pg *Pages) closedView(cs *checkoutSession) pageView {
	p := cs.p.Observe(pg.now())
	v := pageView{Page: "message", Icon: "expired", Order: pg.orderView(cs), Title: "This payment link has expired",
		Lead: "Nothing was charged. Go back to the shop to start the payment again."}
	if p.Status == payment.Canceled {
		v.Title, v.Lead = "This payment was canceled", "Nothing was charged. Go back to the shop if you want to try again."
	}
	if to := returnTo(&p); to != "" {
		v.Link = &pageLink{Href: to, Text: "Back to the shop"}
	}
	return v
}

// resultView is the page of a finished session without a return_url.
func (pg *Pages) resultView(cs *checkoutSession) pageView {
	p := cs.p
	v := pageView{Page: "message", Order: pg.orderView(cs)}
	if p.MaskedCard != "" {
		v.Order.Card = orWord(schemeNames[p.CardScheme], "Card") + " •••• " + lastFour(p.MaskedCard)
	}
	switch p.Status {
	case payment.Succeeded, payment.PartiallyRefunded, payment.Refunded:
		v.Icon, v.Title = "success", "Payment successful"
		v.Lead = "Thank you. " + money.Format(p.AmountMinor, p.Currency) + " was paid. You can close this page."
	case payment.Authorized:
		v.Icon, v.Title = "success", "Payment authorized"
		v.Lead = "Thank you. The amount is reserved on your card and will be taken when your order is completed."
	default:
		v.Icon, v.Title = "error", "Payment not completed"
		v.Lead = orWord(p.DeclineMessage, "The payment could not be completed.") + " Nothing was charged."
	}
	return v
}

// codeView asks for the one-time code of a mobile payment.
func (pg *Pages) codeView(w http.ResponseWriter, r *http.Request, cs *checkoutSession, problem string) pageView {
	in := &inputView{Name: "value", Label: "Code", Type: "text", Autocomplete: "one-time-code", InputMode: "numeric",
		MaxLength: 32, Required: true, Error: problem}
	if pg.cfg.Environment == merchant.Sandbox {
		in.Hint = "Sandbox: the code is 123456."
	}
	v := pageView{Page: "code", Title: "Enter the code we sent you", Script: true, Order: pg.orderView(cs),
		Lead:   "Your mobile operator sent a one-time code by text message. Enter it to finish the payment.",
		Action: "/checkout/" + cs.p.SessionID + "/confirm", Token: pg.formToken(w, r, cs.p.SessionID),
		Form: &formView{fields: map[string]*inputView{"value": in}}, formTargets: []string{cs.p.ReturnURL}}
	if problem != "" {
		v.Errors = []fieldError{{Field: "value", Message: problem, Linked: true}}
	}
	return v
}

// retryView is a provider_redirect session back from a declined attempt.
func (pg *Pages) retryView(w http.ResponseWriter, r *http.Request, cs *checkoutSession) pageView {
	return pageView{Page: "retry", Icon: "error", Title: "Your payment did not go through", Order: pg.orderView(cs),
		Lead:   cs.p.DeclineMessage + " You can try again, with the same card or another one.",
		Action: "/checkout/" + cs.p.SessionID, Token: pg.formToken(w, r, cs.p.SessionID),
		formTargets: []string{cs.p.ReturnURL}}
}

func (pg *Pages) forgeryView(id string) pageView {
	return pageView{Page: "message", Icon: "error", Title: "Please try again",
		Lead: "For your security this form has expired. Nothing was charged.",
		Link: &pageLink{Href: "/checkout/" + id, Text: "Back to the payment page"}}
}

func (pg *Pages) messageView(cs *checkoutSession, icon, title, lead string) pageView {
	v := pageView{Page: "message", Icon: icon, Title: title, Lead: lead}
	if cs != nil {
		v.Order = pg.orderView(cs)
		v.Link = &pageLink{Href: "/checkout/" + cs.p.SessionID, Text: "Try again"}
	}
	return v
}
