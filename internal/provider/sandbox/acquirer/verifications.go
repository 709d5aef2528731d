package acquirer

import (
	"fmt"
	"net/http"

	"github.com/google/uuid"

	"github.com/paygate/paygate/internal/card"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/sandbox/wire"
)

// verification is a card verification (LookUp): a small sum is blocked and
// the payer reads a code back. In the sandbox the code is the card's last
// four digits (docs/design/decisions.md section 7), which is why the masked
// card is enough to keep.
type verification struct {
	base
	OrderID     string        `json:"order_id,omitempty"`
	Currency    string        `json:"currency"`
	Card        wire.CardView `json:"card"`
	Behaviour   behaviour     `json:"behaviour"`
	Status      string        `json:"status"`
	Attempts    int           `json:"attempts"`
	DeclineCode string        `json:"decline_code,omitempty"`
	HoldMinor   int64         `json:"hold_minor"`
	BankRef     string        `json:"bank_ref,omitempty"`
}

func (s *Server) createVerification(_ *http.Request, c *call) answer {
	if !c.caps.Has(provider.Lookup) {
		return unsupported(provider.Lookup)
	}
	var req wire.VerificationRequest
	if a := decode(c.body, &req, false); a != nil {
		return *a
	}
	if !currencyRe.MatchString(req.Currency) {
		return invalid("currency", "currency must be three capital letters")
	}
	in, a := s.resolveCard(req.Card, "card")
	if a != nil {
		return *a
	}
	now := s.now()
	v := &verification{OrderID: req.OrderID, Currency: req.Currency, Card: *in.card, Behaviour: in.behave}
	v.ID, v.OperationID, v.Unreadable = "ver_"+uuid.NewString(), c.key, in.behave.Unreadable
	v.CreatedAt, v.UpdatedAt = now, now
	s.st.Verifications[v.ID] = v
	switch b := in.behave; {
	case b.Fail:
		v.Status, v.DeclineCode = wire.StatusFailed, wire.CodeProcessingError
	case b.Decline != "":
		v.Status, v.DeclineCode = wire.StatusDeclined, b.Decline
	default:
		v.Status, v.HoldMinor = wire.StatusCodeSent, verificationHoldMinor
		s.recordLocked(Entry{Kind: EntryVerificationHold, OperationID: v.OperationID, CausedBy: c.key,
			ResourceID: v.ID, AmountMinor: v.HoldMinor, Currency: v.Currency, CardMask: v.Card.Mask})
		v.BankRef = fmt.Sprintf("SBX%09d", len(s.st.Ledger))
	}
	out := verificationAnswer(http.StatusCreated, v)
	out.late = in.behave.Late
	return out
}

// verify checks a code. The answer already counts this attempt
// (docs/design/decisions.md section 7); the third wrong code ends the
// verification as failed with authentication_failed, and any end releases
// the blocked sum.
func (s *Server) verify(r *http.Request, c *call) answer {
	v := s.st.Verifications[r.PathValue("id")]
	if v == nil {
		return notFound()
	}
	var req wire.CodeRequest
	if a := decode(c.body, &req, false); a != nil {
		return *a
	}
	if req.Code == "" || len(req.Code) > 32 || !card.Digits(req.Code) {
		return invalid("code", "code must be 1 to 32 digits")
	}
	if v.Status != wire.StatusCodeSent {
		return invalidState()
	}
	v.Attempts++
	v.UpdatedAt = s.now()
	switch {
	case req.Code == v.Card.Last4:
		v.Status = wire.StatusVerified
	case v.Attempts >= maxVerifyAttempts:
		v.Status, v.DeclineCode = wire.StatusFailed, wire.CodeAuthenticationFailed
	default:
		return verificationAnswer(http.StatusOK, v)
	}
	s.recordLocked(Entry{Kind: EntryRelease, OperationID: v.OperationID, CausedBy: c.key, ResourceID: v.ID,
		AmountMinor: v.HoldMinor, Currency: v.Currency, CardMask: v.Card.Mask, Reason: v.Status})
	return verificationAnswer(http.StatusOK, v)
}

// release ends a verification still waiting for its code, at Paygate's
// request when it expires (docs/design/decisions.md section 15): the
// blocked sum is let go and the verification fails with
// verification_expired. A verification that already ended is answered as
// it stands.
func (s *Server) release(r *http.Request, c *call) answer {
	v := s.st.Verifications[r.PathValue("id")]
	if v == nil {
		return notFound()
	}
	if v.Status != wire.StatusCodeSent {
		return verificationAnswer(http.StatusOK, v)
	}
	v.Status, v.DeclineCode, v.UpdatedAt = wire.StatusFailed, "verification_expired", s.now()
	s.recordLocked(Entry{Kind: EntryRelease, OperationID: v.OperationID, CausedBy: c.key, ResourceID: v.ID,
		AmountMinor: v.HoldMinor, Currency: v.Currency, CardMask: v.Card.Mask, Reason: "expired"})
	return verificationAnswer(http.StatusOK, v)
}

func (s *Server) getVerification(r *http.Request, _ *call) answer {
	return s.getVerificationByID(r.PathValue("id"))
}

// getVerificationByOperation is the status inquiry by the operation id that
// created the verification.
func (s *Server) getVerificationByOperation(r *http.Request, _ *call) answer {
	rec := s.st.Keys[r.PathValue("op")]
	if rec == nil || rec.Ref.Kind != "verification" {
		return errAnswer(http.StatusNotFound, "operation_not_found", "no verification operation with this id")
	}
	return s.getVerificationByID(rec.Ref.ID)
}

func (s *Server) getVerificationByID(id string) answer {
	v := s.st.Verifications[id]
	if v == nil {
		return notFound()
	}
	return verificationAnswer(http.StatusOK, v)
}

func verificationAnswer(status int, v *verification) answer {
	c := v.Card
	view := wire.VerificationView{Object: "verification", ID: v.ID, OperationID: v.OperationID, OrderID: v.OrderID,
		Status: v.Status, Attempts: v.Attempts, Currency: v.Currency, HoldAmountMinor: v.HoldMinor, Card: &c,
		Decline: declineOf(v.DeclineCode), BankReference: bankRefOf(v.BankRef, &c),
		CreatedAt: v.CreatedAt, UpdatedAt: v.UpdatedAt}
	return jsonAnswer(status, view, ref{Kind: "verification", ID: v.ID})
}
