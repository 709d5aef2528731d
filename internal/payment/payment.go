package payment

import (
	"encoding/json"
	"time"
)

// Kinds of payment.
const (
	KindHosted = "hosted"
	KindDirect = "direct"
	// KindRecurring is a subscription's charge: merchant-initiated, on the
	// mandate's saved card (docs/design/decisions.md section 11).
	KindRecurring = "recurring"
)

// Operation modes (OpenAPI schema DirectPayment).
const (
	ModeCharge    = "charge"
	ModeAuthorize = "authorize"
)

// Payment is one payment, hosted or direct. Customer data beyond the names
// is kept only sealed (CustomerSealed); card data is never kept here.
type Payment struct {
	ID                     string
	SessionID              string // hosted sessions only
	AccessKeyID            string
	ChannelID              string
	Kind                   string
	Status                 Status
	OrderID                string
	AmountMinor            int64
	Currency               string
	Description            string
	FirstName, LastName    string
	CustomerSealed         []byte
	CustomerReference      string
	ReturnURL              string
	Locale                 string
	OperationMode          string
	Method                 string
	SavePaymentMethod      bool
	Subscription           *SubscriptionTerms
	Metadata               json.RawMessage
	ExpiresAt              *time.Time
	AuthorizationExpiresAt *time.Time
	MaskedCard             string
	Device                 json.RawMessage
	PayerIP                string
	DeclineCode            string
	DeclineMessage         string
	NextActionType         string
	NextActionURL          string
	BankReference          *BankReference
	CapturedAmountMinor    int64
	RefundedAmountMinor    int64
	SavedCardID            string
	MandateID              string
	SubscriptionID         string
	// SubscriptionPeriod is the period n a subscription's charge pays (nil
	// on every other payment, the one that carried the terms included);
	// SubscriptionAttempt is which attempt at it (0, then retries 1 to 3).
	// The database holds one payment per (subscription, period, attempt).
	SubscriptionPeriod  *int64
	SubscriptionAttempt int
	ProviderPaymentID   string // the provider's id, once it has one
	CardScheme          string
	ConsentAt           *time.Time // when the payer ticked the subscription consent box
	// Version counts stored changes: updates compare and set it, so two
	// workers can never both move the same payment (SQLite has no FOR UPDATE).
	Version int64
	// StoredStatus is the status as last read or written: a change of
	// Status against it is a status change, and makes an event
	// (docs/design/decisions.md section 6).
	StoredStatus Status
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// BankReference is the issuing bank's own reference, when a provider reports one.
type BankReference struct {
	PaymentID string `json:"payment_id,omitempty"`
	Name      string `json:"name,omitempty"`
}

// SubscriptionTerms are the recurring terms a payer agrees to (OpenAPI schema
// SubscriptionTerms).
type SubscriptionTerms struct {
	IntervalUnit      string    `json:"interval_unit"`
	IntervalCount     int       `json:"interval_count"`
	FirstChargeAt     time.Time `json:"first_charge_at"`
	DisclosureVersion string    `json:"disclosure_version"`
	Consent           *bool     `json:"consent,omitempty"`
}

// SavesCard reports whether a successful payment keeps the card: asked for
// with save_payment_method, or needed by the mandate of subscription
// terms (docs/design/decisions.md section 5).
func (p *Payment) SavesCard() bool {
	return p.SavePaymentMethod || (p.Subscription != nil && p.SubscriptionPeriod == nil)
}

// Observe returns the payment as seen at now: a session whose expires_at has
// passed is expired even if the expiry job has not run yet, so an answer
// never shows a session as payable after its deadline.
func (p Payment) Observe(now time.Time) Payment {
	if (p.Status == Created || p.Status == AwaitingPaymentData) && p.ExpiresAt != nil && !now.Before(*p.ExpiresAt) {
		p.Status = Expired
		p.UpdatedAt = *p.ExpiresAt
	}
	return p
}
