package openapi

import "encoding/json"

// CreatePayment is the body of POST /api/v1/payment-sessions (schema
// CreatePayment) and the base of DirectPayment.
type CreatePayment struct {
	OrderID           string                     `json:"order_id"`
	AmountMinor       int64                      `json:"amount_minor"`
	Currency          string                     `json:"currency"`
	Description       *string                    `json:"description,omitempty"`
	Customer          *Customer                  `json:"customer,omitempty"`
	CustomerReference *string                    `json:"customer_reference,omitempty"`
	ReturnURL         *string                    `json:"return_url,omitempty"`
	Locale            *string                    `json:"locale,omitempty"`
	ExpiresInSeconds  *int                       `json:"expires_in_seconds,omitempty"`
	SavePaymentMethod *bool                      `json:"save_payment_method,omitempty"`
	Subscription      *SubscriptionTerms         `json:"subscription,omitempty"` // null reads as absent
	Metadata          map[string]json.RawMessage `json:"metadata,omitempty"`
}

// DirectPayment is the body of POST /api/v1/payments/direct (schema
// DirectPayment): CreatePayment plus the payment method.
type DirectPayment struct {
	CreatePayment
	OperationMode *string         `json:"operation_mode,omitempty"` // charge (default) or authorize
	PaymentMethod PaymentMethod   `json:"payment_method"`
	Device        *DeviceSnapshot `json:"device,omitempty"`
}

// PaymentMethod is how a direct payment is paid (schema PaymentMethod).
// Wallet is the raw wallet payload, kept byte for byte for the provider.
type PaymentMethod struct {
	Type        string          `json:"type"`
	Card        *PaymentCard    `json:"card,omitempty"`
	Wallet      json.RawMessage `json:"wallet,omitempty"`
	PayloadMode *string         `json:"payload_mode,omitempty"` // token (default) or direct
	Mobile      *MobileAccount  `json:"mobile,omitempty"`
}

// PaymentCard is raw card data of a direct payment (schema PaymentCard);
// request only.
type PaymentCard struct {
	Number      string  `json:"number"`
	ExpireMonth int     `json:"expire_month"`
	ExpireYear  int     `json:"expire_year"`
	CVV         *string `json:"cvv,omitempty"`
	Cardholder  *string `json:"cardholder,omitempty"`
}

// MobileAccount is the payer's mobile account (schema MobileAccount);
// request only. Phone is as submitted: the domain strips spaces, dashes and
// brackets and then requires ^\+[1-9][0-9]{7,14}$.
type MobileAccount struct {
	Phone string `json:"phone"`
}

// SubscriptionTerms are the terms of a subscription a payment starts
// (schema SubscriptionTerms).
type SubscriptionTerms struct {
	IntervalUnit      string `json:"interval_unit"`
	IntervalCount     int    `json:"interval_count"`
	FirstChargeAt     Time   `json:"first_charge_at"`
	DisclosureVersion string `json:"disclosure_version"`
	Consent           *bool  `json:"consent,omitempty"`
}

// Amount is the optional body of capture and refund (schema Amount); a nil
// AmountMinor means the whole amount.
type Amount struct {
	AmountMinor *int64 `json:"amount_minor,omitempty"`
}

// ConfirmPayment is the optional body of a payment confirm (schema
// ConfirmPayment); request only.
type ConfirmPayment struct {
	Value *string `json:"value,omitempty"`
}

// Payment is a payment in an answer (schema Payment). The fields after
// UpdatedAt are Paygate's extensions to the client API. It has no field for
// any write-only data.
type Payment struct {
	PaymentID              string                     `json:"payment_id"`
	SessionID              string                     `json:"session_id,omitempty"`
	Status                 string                     `json:"status"`
	Final                  bool                       `json:"final"`
	CheckoutURL            string                     `json:"checkout_url,omitempty"`
	ExpiresAt              Time                       `json:"expires_at,omitzero"`
	AuthorizationExpiresAt Time                       `json:"authorization_expires_at,omitzero"`
	MaskedCard             string                     `json:"masked_card,omitempty"`
	Customer               *PaymentCustomer           `json:"customer,omitempty"`
	Device                 *DeviceSnapshot            `json:"device,omitempty"`
	PayerIP                string                     `json:"payer_ip,omitempty"`
	Location               map[string]json.RawMessage `json:"location,omitempty"`
	Decline                *Decline                   `json:"decline,omitempty"`
	NextAction             *NextAction                `json:"next_action,omitempty"`
	BankReference          *BankReference             `json:"bank_reference,omitempty"`
	CreatedAt              Time                       `json:"created_at"`
	UpdatedAt              Time                       `json:"updated_at"`

	OrderID             string                     `json:"order_id"`
	AmountMinor         int64                      `json:"amount_minor"`
	Currency            string                     `json:"currency"`
	Description         string                     `json:"description,omitempty"`
	CustomerReference   string                     `json:"customer_reference,omitempty"`
	Metadata            map[string]json.RawMessage `json:"metadata,omitempty"`
	Locale              string                     `json:"locale,omitempty"`
	OperationMode       string                     `json:"operation_mode,omitempty"`
	PaymentMethod       string                     `json:"payment_method,omitempty"`
	CapturedAmountMinor *int64                     `json:"captured_amount_minor,omitempty"`
	RefundedAmountMinor *int64                     `json:"refunded_amount_minor,omitempty"`
	SavedCardID         string                     `json:"saved_card_id,omitempty"`
	MandateID           string                     `json:"mandate_id,omitempty"`
	SubscriptionID      string                     `json:"subscription_id,omitempty"`
	SubscriptionPeriod  *int64                     `json:"subscription_period,omitempty"`
	SubscriptionAttempt *int                       `json:"subscription_attempt,omitempty"`
}

// PaymentCustomer is the part of the customer a Payment shows (schema
// PaymentCustomer).
type PaymentCustomer struct {
	FirstName string `json:"first_name,omitempty"`
	LastName  string `json:"last_name,omitempty"`
}

// Decline tells why a payment was declined or failed (schema Decline).
type Decline struct {
	Code    string `json:"code"`
	Message string `json:"message,omitempty"`
}

// Refund is one refund of a payment (schema Refund).
type Refund struct {
	ID          string `json:"id"`
	AmountMinor int64  `json:"amount_minor"`
	Status      string `json:"status"`
	CreatedAt   Time   `json:"created_at"`
	CompletedAt Time   `json:"completed_at,omitzero"`
}

// RefundList is the answer of GET /api/v1/payments/{id}/refunds (schema
// RefundList). Items is never null.
type RefundList struct {
	Items []Refund `json:"items"`
}

// PaymentAttempt is one try of a payment on one channel (schema
// PaymentAttempt; docs/design/decisions.md section 17).
type PaymentAttempt struct {
	Channel     string `json:"channel"`
	Status      string `json:"status"`
	DeclineCode string `json:"decline_code,omitempty"`
	Reason      string `json:"reason,omitempty"`
	CreatedAt   Time   `json:"created_at"`
}

// PaymentAttemptList is the answer of GET /api/v1/payments/{id}/attempts
// (schema PaymentAttemptList). Items is never null.
type PaymentAttemptList struct {
	Items []PaymentAttempt `json:"items"`
}

// PaymentList is a page of payments (extension: GET /api/v1/payments).
type PaymentList struct {
	Items      []Payment `json:"items"`
	NextCursor *string   `json:"next_cursor"`
}
