package acquirer

import (
	"cmp"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/sandbox/wire"
)

// payment is a charge or an authorization at the sandbox.
type payment struct {
	base
	Intent        string            `json:"intent"` // charge or authorize
	Status        string            `json:"status"`
	AmountMinor   int64             `json:"amount_minor"`
	CapturedMinor int64             `json:"captured_minor"`
	RefundedMinor int64             `json:"refunded_minor"`
	Currency      string            `json:"currency"`
	OrderID       string            `json:"order_id,omitempty"`
	Locale        string            `json:"locale"`
	ReturnURL     string            `json:"return_url,omitempty"`
	Method        string            `json:"method"`
	Card          *wire.CardView    `json:"card,omitempty"`
	Behaviour     behaviour         `json:"behaviour"`
	SaveCard      bool              `json:"save_card,omitempty"`
	Action        string            `json:"action,omitempty"` // three_ds or otp, while requires_action
	ActionURL     string            `json:"action_url,omitempty"`
	DeclineCode   string            `json:"decline_code,omitempty"`
	CardToken     string            `json:"card_token,omitempty"`
	HoldExpiresAt *time.Time        `json:"hold_expires_at,omitempty"`
	SessionID     string            `json:"session_id,omitempty"`
	BankRef       string            `json:"bank_ref,omitempty"`
	Refunds       []wire.RefundView `json:"refunds,omitempty"`
}

func (s *Server) createPayment(r *http.Request, c *call) answer {
	var req wire.PaymentRequest
	if a := decode(c.body, &req, false); a != nil {
		return *a
	}
	if a := checkMoney(req.AmountMinor, req.Currency); a != nil {
		return *a
	}
	if a := checkReturnURL(req.ReturnURL); a != nil {
		return *a
	}
	need := provider.Charge
	switch req.Intent {
	case "charge":
	case "authorize":
		need = provider.Authorize
	default:
		return invalid("intent", "intent is charge or authorize")
	}
	if !c.caps.Has(need) {
		return unsupported(need)
	}
	in, a := s.resolve(req.Method, "payment_method")
	if a != nil {
		return *a
	}
	if need := methodCapability(req.Method); need != "" && !c.caps.Has(need) {
		return unsupported(need)
	}
	if in.method == "mobile" && req.Intent == "authorize" {
		// docs/sandbox.md, "Mobile payments": the operator settles at once
		// and offers no hold.
		return errAnswer(http.StatusUnprocessableEntity, "capability_not_supported", "a mobile payment cannot be authorized")
	}
	if req.SaveCard && !c.caps.Has(provider.SavedCards) {
		return unsupported(provider.SavedCards)
	}
	p := &payment{Intent: req.Intent, AmountMinor: req.AmountMinor, Currency: req.Currency,
		OrderID: req.OrderID, Locale: locale(req.Locale), ReturnURL: req.ReturnURL, SaveCard: req.SaveCard}
	p.OperationID = c.key
	s.startPaymentLocked(p, in, c.base)
	out := paymentAnswer(http.StatusCreated, p)
	out.late = in.behave.Late
	return out
}

// methodCapability is the capability a payment method needs beyond charge
// or authorize.
func methodCapability(m wire.Method) provider.Capability {
	switch {
	case m.Type == "wallet" && m.Wallet != nil && m.Wallet.Mode == "direct":
		return provider.WalletDirect
	case m.Type == "wallet":
		return provider.WalletToken
	case m.Type == "mobile":
		return provider.Mobile
	case m.Type == "token":
		return provider.SavedCards
	}
	return ""
}

// startPaymentLocked files a new payment and takes it as far as it goes
// without the payer.
func (s *Server) startPaymentLocked(p *payment, in instrument, base string) {
	now := s.now()
	p.ID = "pay_" + uuid.NewString()
	p.CreatedAt, p.UpdatedAt = now, now
	p.Method, p.Card, p.Behaviour = in.method, in.card, in.behave
	p.Unreadable = in.behave.Unreadable
	s.st.Payments[p.ID] = p
	s.touch(ref{Kind: "payment", ID: p.ID})
	b := in.behave
	switch {
	case b.Fail:
		p.Status, p.DeclineCode = wire.StatusFailed, wire.CodeProcessingError
	case b.Decline != "" && !b.Challenge:
		p.Status, p.DeclineCode = wire.StatusDeclined, b.Decline
	case b.Challenge && in.method != "token": // a saved card pays merchant-initiated: no 3DS
		p.Status, p.Action, p.ActionURL = wire.StatusRequiresAction, "three_ds", base+"/3ds/"+p.ID
	case b.OTP:
		p.Status, p.Action = wire.StatusRequiresAction, "otp"
	default:
		s.approvePaymentLocked(p, p.OperationID)
	}
}

// approvePaymentLocked is the issuer's yes (after any challenge or code):
// the money moves, unless the card declines even then.
func (s *Server) approvePaymentLocked(p *payment, causedBy string) {
	s.touch(ref{Kind: "payment", ID: p.ID})
	p.Action, p.ActionURL, p.UpdatedAt = "", "", s.now()
	if p.Behaviour.Decline != "" {
		p.Status, p.DeclineCode = wire.StatusDeclined, p.Behaviour.Decline
		return
	}
	e := Entry{OperationID: p.OperationID, CausedBy: causedBy, ResourceID: p.ID,
		AmountMinor: p.AmountMinor, Currency: p.Currency, CardMask: maskOf(p.Card)}
	if p.Intent == "authorize" {
		ttl := s.cfg.HoldTTL
		if p.Behaviour.ShortHold {
			ttl = s.cfg.ShortHoldTTL
		}
		exp := s.now().Add(ttl)
		p.Status, p.HoldExpiresAt, e.Kind = wire.StatusAuthorized, &exp, EntryHold
		s.holds[p.ID] = p
	} else {
		p.Status, p.CapturedMinor, e.Kind = wire.StatusSucceeded, p.AmountMinor, EntryCharge
	}
	s.recordLocked(e)
	p.BankRef = fmt.Sprintf("SBX%09d", len(s.st.Ledger))
	if p.SaveCard && p.Method == "card" && p.Card != nil {
		t := &savedCard{Token: "tok_" + uuid.NewString(), Card: *p.Card,
			Behaviour: behaviour{Challenge: p.Behaviour.Challenge, ShortHold: p.Behaviour.ShortHold,
				Decline: p.Behaviour.Later}}
		s.st.Tokens[t.Token] = t
		s.touch(ref{Kind: "token", ID: t.Token})
		p.CardToken = t.Token
	}
}

// denyPaymentLocked is a failed challenge or a wrong one-time code.
func (s *Server) denyPaymentLocked(p *payment) {
	s.touch(ref{Kind: "payment", ID: p.ID})
	p.Action, p.ActionURL, p.UpdatedAt = "", "", s.now()
	p.Status, p.DeclineCode = wire.StatusDeclined, wire.CodeAuthenticationFailed
}

func (s *Server) paymentByID(r *http.Request) (*payment, *answer) {
	p := s.st.Payments[r.PathValue("id")]
	if p == nil {
		a := notFound()
		return nil, &a
	}
	return p, nil
}

func (s *Server) getPayment(r *http.Request, _ *call) answer {
	p, a := s.paymentByID(r)
	if a != nil {
		return *a
	}
	return paymentAnswer(http.StatusOK, p)
}

// capturePayment takes all or part of a hold; the rest is released at once.
func (s *Server) capturePayment(r *http.Request, c *call) answer {
	if !c.caps.Has(provider.Capture) {
		return unsupported(provider.Capture)
	}
	p, a := s.paymentByID(r)
	if a != nil {
		return *a
	}
	var req wire.AmountRequest
	if a := decode(c.body, &req, true); a != nil {
		return *a
	}
	if p.Status != wire.StatusAuthorized {
		return invalidState()
	}
	amount := cmp.Or(req.AmountMinor, p.AmountMinor)
	if amount < 0 || amount > p.AmountMinor {
		return fieldError(http.StatusUnprocessableEntity, "amount_too_large", "more than the authorized amount", "amount_minor")
	}
	e := Entry{OperationID: p.OperationID, CausedBy: c.key, ResourceID: p.ID, Currency: p.Currency, CardMask: maskOf(p.Card)}
	e.Kind, e.AmountMinor = EntryCapture, amount
	s.recordLocked(e)
	if rest := p.AmountMinor - amount; rest > 0 {
		e.Kind, e.AmountMinor, e.Reason = EntryRelease, rest, "partial_capture"
		s.recordLocked(e)
	}
	delete(s.holds, p.ID)
	p.Status, p.CapturedMinor, p.UpdatedAt = wire.StatusSucceeded, amount, s.now()
	return paymentAnswer(http.StatusOK, p)
}

// cancelPayment releases a hold, or abandons a payment awaiting the payer.
func (s *Server) cancelPayment(r *http.Request, c *call) answer {
	if !c.caps.Has(provider.Cancel) {
		return unsupported(provider.Cancel)
	}
	p, a := s.paymentByID(r)
	if a != nil {
		return *a
	}
	switch p.Status {
	case wire.StatusAuthorized:
		s.recordLocked(Entry{Kind: EntryRelease, OperationID: p.OperationID, CausedBy: c.key, ResourceID: p.ID,
			AmountMinor: p.AmountMinor, Currency: p.Currency, CardMask: maskOf(p.Card), Reason: "canceled"})
		delete(s.holds, p.ID)
	case wire.StatusRequiresAction:
		p.Action, p.ActionURL = "", ""
	default:
		return invalidState()
	}
	p.Status, p.UpdatedAt = wire.StatusCanceled, s.now()
	return paymentAnswer(http.StatusOK, p)
}

// refundPayment gives back all or part of what was taken, on profiles with
// the refund capability only (docs/design/decisions.md section 7: the default
// profile has none).
func (s *Server) refundPayment(r *http.Request, c *call) answer {
	if !c.caps.Has(provider.Refund) {
		return unsupported(provider.Refund)
	}
	p, a := s.paymentByID(r)
	if a != nil {
		return *a
	}
	var req wire.AmountRequest
	if a := decode(c.body, &req, true); a != nil {
		return *a
	}
	left := p.CapturedMinor - p.RefundedMinor
	if p.Status != wire.StatusSucceeded || left <= 0 {
		return invalidState()
	}
	amount := cmp.Or(req.AmountMinor, left)
	if amount < 0 || amount > left {
		return fieldError(http.StatusUnprocessableEntity, "amount_too_large", "more than is left to refund", "amount_minor")
	}
	s.recordLocked(Entry{Kind: EntryRefund, OperationID: p.OperationID, CausedBy: c.key, ResourceID: p.ID,
		AmountMinor: amount, Currency: p.Currency, CardMask: maskOf(p.Card)})
	p.RefundedMinor += amount
	p.UpdatedAt = s.now()
	p.Refunds = append(p.Refunds, wire.RefundView{ID: "re_" + uuid.NewString(), OperationID: c.key, AmountMinor: amount, CreatedAt: p.UpdatedAt})
	return paymentAnswer(http.StatusOK, p)
}

// confirmPayment takes a one-time code (mobile, or 3DS by code), or, with
// no code, answers the payment as it stands: how Paygate asks for the
// outcome of a 3DS step.
func (s *Server) confirmPayment(r *http.Request, c *call) answer {
	p, a := s.paymentByID(r)
	if a != nil {
		return *a
	}
	var req wire.CodeRequest
	if a := decode(c.body, &req, true); a != nil {
		return *a
	}
	switch {
	case req.Code == "":
	case p.Status != wire.StatusRequiresAction:
		return invalidState()
	case req.Code == rightCode:
		s.approvePaymentLocked(p, c.key)
	default:
		s.denyPaymentLocked(p)
	}
	return paymentAnswer(http.StatusOK, p)
}

// sweepLocked expires the holds whose time has come, oldest first, so that
// the ledger reads the same whenever it is looked at.
func (s *Server) sweepLocked() {
	if len(s.holds) == 0 {
		return
	}
	now := s.now()
	var due []*payment
	for id, p := range s.holds {
		switch {
		case p.Status != wire.StatusAuthorized:
			delete(s.holds, id)
		case !now.Before(*p.HoldExpiresAt):
			due = append(due, p)
		}
	}
	slices.SortFunc(due, func(a, b *payment) int {
		return cmp.Or(a.HoldExpiresAt.Compare(*b.HoldExpiresAt), strings.Compare(a.ID, b.ID))
	})
	for _, p := range due {
		delete(s.holds, p.ID)
		s.touch(ref{Kind: "payment", ID: p.ID})
		s.recordLocked(Entry{Kind: EntryRelease, OperationID: p.OperationID, ResourceID: p.ID,
			AmountMinor: p.AmountMinor, Currency: p.Currency, CardMask: maskOf(p.Card), Reason: "expired"})
		p.Status, p.UpdatedAt = wire.StatusExpired, now
	}
}

func paymentAnswer(status int, p *payment) answer {
	return jsonAnswer(status, p.view(), ref{Kind: "payment", ID: p.ID})
}

func (p *payment) view() wire.PaymentView {
	v := wire.PaymentView{Object: "payment", ID: p.ID, OperationID: p.OperationID, Intent: p.Intent,
		Status: p.Status, AmountMinor: p.AmountMinor, CapturedAmountMinor: p.CapturedMinor,
		RefundedAmountMinor: p.RefundedMinor, Currency: p.Currency, OrderID: p.OrderID,
		Method: p.Method, Card: p.Card, CardToken: p.CardToken, AuthorizationExpiresAt: p.HoldExpiresAt,
		Refunds: p.Refunds, SessionID: p.SessionID, CreatedAt: p.CreatedAt, UpdatedAt: p.UpdatedAt,
		Decline: declineOf(p.DeclineCode), BankReference: bankRefOf(p.BankRef, p.Card)}
	if p.Action != "" {
		v.NextAction = &wire.NextActionView{Type: p.Action, URL: p.ActionURL}
	}
	return v
}

// declineOf carries the sandbox's own, acquirer-style text on purpose: a
// payer must never see it, and tests check that the adapter does not pass
// it on.
func declineOf(code string) *wire.DeclineView {
	if code == "" {
		return nil
	}
	return &wire.DeclineView{Code: code, Message: "SBX-ISSUER RC=" + strings.ToUpper(code) + " REFER TO ISSUER"}
}

func bankRefOf(id string, c *wire.CardView) *wire.BankRefView {
	if id == "" {
		return nil
	}
	return &wire.BankRefView{PaymentID: id, Name: issuerName(c)}
}

func maskOf(c *wire.CardView) string {
	if c == nil {
		return ""
	}
	return c.Mask
}
