package payment

import (
	"encoding/json"
	"time"

	"github.com/paygate/paygate/internal/provider"
)

// Operation kinds: one call to the provider each.
const (
	OpPay     = "pay"
	OpConfirm = "confirm"
	OpCapture = "capture"
	OpCancel  = "cancel"
	OpRefund  = "refund"
)

// Operation states.
const (
	// OpPending: to be sent. Sending again is safe: the provider dedups on
	// the operation id.
	OpPending = "pending"
	// OpInquiring: the answer was lost or unreadable. The outcome is asked
	// for (provider.Status), never sent again (decisions 4).
	OpInquiring = "inquiring"
	OpDone      = "done"
)

// Operation is one provider call for a payment. Its ID is the idempotency
// key the provider sees.
type Operation struct {
	ID          string
	PaymentID   string
	Kind        string
	State       string
	AmountMinor int64
	RefundID    string
	Result      string // a short outcome for the record: status or error kind, never provider text
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// Secret is what an operation must hand the provider and Paygate must not
// keep: it is sealed while the job waits and deleted once the provider has
// answered (decisions 8).
type Secret struct {
	Card   *provider.Card   `json:"card,omitempty"`
	Wallet *provider.Wallet `json:"wallet,omitempty"`
	Phone  string           `json:"phone,omitempty"`
	Code   string           `json:"code,omitempty"`
	// Customer travels here too so the provider call needs no other sealed read.
	Customer *provider.Customer `json:"customer,omitempty"`
}

// SavedCard is a provider's card token kept for a payer (decisions 5).
type SavedCard struct {
	ID                string
	AccessKeyID       string
	CustomerReference string
	Provider          string
	TokenSealed       []byte
	MaskedCard        string
	Scheme            string
	ExpMonth, ExpYear int
	CreatedAt         time.Time
}

// Refund is a refund of a payment.
type Refund struct {
	ID          string
	PaymentID   string
	AmountMinor int64
	Status      string // pending, succeeded, failed
	CreatedAt   time.Time
	CompletedAt *time.Time
}

// Refund statuses (the client API leaves them open).
const (
	RefundPending   = "pending"
	RefundSucceeded = "succeeded"
	RefundFailed    = "failed"
)

// OperationAAD binds an operation's sealed secret to the operation.
func OperationAAD(operationID string) []byte { return []byte("operation_secret:" + operationID) }

// seal seals an operation's secret.
func (s *Service) seal(opID string, sec Secret) ([]byte, error) {
	raw, err := json.Marshal(sec)
	if err != nil {
		return nil, err
	}
	return s.Sealer.Seal(raw, OperationAAD(opID))
}

// openSecret opens an operation's sealed secret.
func (s *Service) openSecret(opID string, sealed []byte) (Secret, error) {
	var sec Secret
	raw, err := s.Sealer.Open(sealed, OperationAAD(opID))
	if err != nil {
		return sec, err
	}
	return sec, json.Unmarshal(raw, &sec)
}
