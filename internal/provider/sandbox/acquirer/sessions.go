package acquirer

import (
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/sandbox/wire"
)

// hostedSession is the sandbox's own checkout for one payment (channels in
// provider_redirect mode). The payer's card goes to the sandbox's page,
// never through Paygate.
type hostedSession struct {
	base
	Intent      string    `json:"intent"`
	AmountMinor int64     `json:"amount_minor"`
	Currency    string    `json:"currency"`
	OrderID     string    `json:"order_id,omitempty"`
	Description string    `json:"description,omitempty"`
	Locale      string    `json:"locale"`
	ReturnURL   string    `json:"return_url,omitempty"`
	URL         string    `json:"url"`
	Status      string    `json:"status"`
	PaymentID   string    `json:"payment_id,omitempty"`
	ExpiresAt   time.Time `json:"expires_at"`
}

func (s *Server) createSession(_ *http.Request, c *call) answer {
	if !c.caps.Has(provider.HostedPage) {
		return unsupported(provider.HostedPage)
	}
	var req wire.SessionRequest
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
	now := s.now()
	h := &hostedSession{Intent: req.Intent, AmountMinor: req.AmountMinor, Currency: req.Currency,
		OrderID: req.OrderID, Description: req.Description, Locale: locale(req.Locale),
		ReturnURL: req.ReturnURL, Status: wire.StatusOpen, ExpiresAt: now.Add(s.cfg.SessionTTL)}
	h.ID, h.OperationID, h.CreatedAt, h.UpdatedAt = "hs_"+uuid.NewString(), c.key, now, now
	h.URL = c.base + "/checkout/" + h.ID
	s.st.Sessions[h.ID] = h
	return s.sessionAnswer(http.StatusCreated, h)
}

func (s *Server) getSession(r *http.Request, _ *call) answer {
	h := s.st.Sessions[r.PathValue("id")]
	if h == nil {
		return notFound()
	}
	return s.sessionAnswer(http.StatusOK, h)
}

// sessionAnswer shows a session with its payment, once paid. An answer
// about a paid session is an answer about the payment, so the payment's
// unreadable count applies to it.
func (s *Server) sessionAnswer(status int, h *hostedSession) answer {
	s.expireSessionLocked(h)
	v := wire.SessionView{Object: "hosted_session", ID: h.ID, OperationID: h.OperationID, Status: h.Status,
		URL: h.URL, Intent: h.Intent, AmountMinor: h.AmountMinor, Currency: h.Currency,
		Locale: h.Locale, ExpiresAt: h.ExpiresAt, CreatedAt: h.CreatedAt}
	x := ref{Kind: "session", ID: h.ID}
	if p := s.st.Payments[h.PaymentID]; p != nil {
		pv := p.view()
		v.Payment = &pv
		x = ref{Kind: "payment", ID: p.ID}
	}
	return jsonAnswer(status, v, x)
}

func (s *Server) expireSessionLocked(h *hostedSession) {
	if h.Status == wire.StatusOpen && !s.now().Before(h.ExpiresAt) {
		h.Status, h.UpdatedAt = wire.StatusExpired, s.now()
		s.touch(ref{Kind: "session", ID: h.ID})
	}
}

// getOperation is the status inquiry by operation id: the resource the
// operation created or acted on, as it stands now. 404 means the sandbox
// never finished that operation, so it is safe to send it.
func (s *Server) getOperation(r *http.Request, _ *call) answer {
	rec := s.st.Keys[r.PathValue("op")]
	if rec == nil {
		return errAnswer(http.StatusNotFound, "operation_not_found", "no operation with this id")
	}
	switch rec.Ref.Kind {
	case "payment":
		if p := s.st.Payments[rec.Ref.ID]; p != nil {
			return paymentAnswer(http.StatusOK, p)
		}
	case "verification":
		return s.getVerificationByID(rec.Ref.ID)
	case "payout":
		return s.getPayoutByID(rec.Ref.ID)
	case "session":
		if h := s.st.Sessions[rec.Ref.ID]; h != nil {
			return s.sessionAnswer(http.StatusOK, h)
		}
	}
	return notFound()
}
