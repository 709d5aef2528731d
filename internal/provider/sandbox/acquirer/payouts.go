package acquirer

import (
	"fmt"
	"net/http"

	"github.com/google/uuid"

	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/sandbox/wire"
)

// payout is money sent to a card or wallet.
type payout struct {
	base
	OrderID     string         `json:"order_id,omitempty"`
	AmountMinor int64          `json:"amount_minor"`
	Currency    string         `json:"currency"`
	Account     string         `json:"account,omitempty"`
	Locale      string         `json:"locale"`
	ReturnURL   string         `json:"return_url,omitempty"`
	Method      string         `json:"method"`
	Card        *wire.CardView `json:"card,omitempty"`
	Behaviour   behaviour      `json:"behaviour"`
	Status      string         `json:"status"`
	ActionURL   string         `json:"action_url,omitempty"`
	DeclineCode string         `json:"decline_code,omitempty"`
	BankRef     string         `json:"bank_ref,omitempty"`
}

func (s *Server) createPayout(_ *http.Request, c *call) answer {
	if !c.caps.Has(provider.Debit) {
		return unsupported(provider.Debit)
	}
	var req wire.PayoutRequest
	if a := decode(c.body, &req, false); a != nil {
		return *a
	}
	if a := checkMoney(req.AmountMinor, req.Currency); a != nil {
		return *a
	}
	if a := checkReturnURL(req.ReturnURL); a != nil {
		return *a
	}
	if req.Method.Type == "mobile" {
		return errAnswer(http.StatusUnprocessableEntity, "capability_not_supported", "payouts go to cards and wallets")
	}
	in, a := s.resolve(req.Method, "payout_method")
	if a != nil {
		return *a
	}
	if need := methodCapability(req.Method); need != "" && !c.caps.Has(need) {
		return unsupported(need)
	}
	now := s.now()
	p := &payout{OrderID: req.OrderID, AmountMinor: req.AmountMinor, Currency: req.Currency,
		Account: req.Account, Locale: locale(req.Locale), ReturnURL: req.ReturnURL,
		Method: in.method, Card: in.card, Behaviour: in.behave}
	p.ID, p.OperationID, p.Unreadable = "po_"+uuid.NewString(), c.key, in.behave.Unreadable
	p.CreatedAt, p.UpdatedAt = now, now
	s.st.Payouts[p.ID] = p
	switch b := in.behave; {
	case b.Fail:
		p.Status, p.DeclineCode = wire.StatusFailed, wire.CodeProcessingError
	case b.Decline != "" && !b.Challenge:
		p.Status, p.DeclineCode = wire.StatusDeclined, b.Decline
	case b.Challenge: // docs/design/decisions.md section 7: a payout to 4000000000003220 is challenged, saved or not
		p.Status, p.ActionURL = wire.StatusRequiresAction, c.base+"/3ds/"+p.ID
	default:
		s.approvePayoutLocked(p, c.key)
	}
	out := payoutAnswer(http.StatusCreated, p)
	out.late = in.behave.Late
	return out
}

// approvePayoutLocked sends the money, unless the card declines even after
// the challenge.
func (s *Server) approvePayoutLocked(p *payout, causedBy string) {
	s.touch(ref{Kind: "payout", ID: p.ID})
	p.ActionURL, p.UpdatedAt = "", s.now()
	if p.Behaviour.Decline != "" {
		p.Status, p.DeclineCode = wire.StatusDeclined, p.Behaviour.Decline
		return
	}
	s.recordLocked(Entry{Kind: EntryTransfer, OperationID: p.OperationID, CausedBy: causedBy, ResourceID: p.ID,
		AmountMinor: p.AmountMinor, Currency: p.Currency, CardMask: maskOf(p.Card)})
	p.Status, p.BankRef = wire.StatusSucceeded, fmt.Sprintf("SBX%09d", len(s.st.Ledger))
}

func (s *Server) denyPayoutLocked(p *payout) {
	s.touch(ref{Kind: "payout", ID: p.ID})
	p.ActionURL, p.UpdatedAt = "", s.now()
	p.Status, p.DeclineCode = wire.StatusDeclined, wire.CodeAuthenticationFailed
}

// confirmPayout takes the one-time code of a challenged payout (123456
// passes, anything else declines), or with no code answers the payout as
// it stands.
func (s *Server) confirmPayout(r *http.Request, c *call) answer {
	p := s.st.Payouts[r.PathValue("id")]
	if p == nil {
		return notFound()
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
		s.approvePayoutLocked(p, c.key)
	default:
		s.denyPayoutLocked(p)
	}
	return payoutAnswer(http.StatusOK, p)
}

func (s *Server) getPayout(r *http.Request, _ *call) answer {
	return s.getPayoutByID(r.PathValue("id"))
}

// getPayoutByOperation is the status inquiry by the operation id that
// created the payout.
func (s *Server) getPayoutByOperation(r *http.Request, _ *call) answer {
	rec := s.st.Keys[r.PathValue("op")]
	if rec == nil || rec.Ref.Kind != "payout" {
		return errAnswer(http.StatusNotFound, "operation_not_found", "no payout operation with this id")
	}
	return s.getPayoutByID(rec.Ref.ID)
}

func (s *Server) getPayoutByID(id string) answer {
	p := s.st.Payouts[id]
	if p == nil {
		return notFound()
	}
	return payoutAnswer(http.StatusOK, p)
}

func payoutAnswer(status int, p *payout) answer {
	v := wire.PayoutView{Object: "payout", ID: p.ID, OperationID: p.OperationID, OrderID: p.OrderID,
		Status: p.Status, AmountMinor: p.AmountMinor, Currency: p.Currency, Account: p.Account,
		Method: p.Method, Card: p.Card, Decline: declineOf(p.DeclineCode),
		BankReference: bankRefOf(p.BankRef, p.Card), CreatedAt: p.CreatedAt, UpdatedAt: p.UpdatedAt}
	if p.ActionURL != "" {
		v.NextAction = &wire.NextActionView{Type: "three_ds", URL: p.ActionURL}
	}
	return jsonAnswer(status, v, ref{Kind: "payout", ID: p.ID})
}
