package openapi

import "encoding/json"

// CreateSubscription is the body of POST /api/v1/subscriptions (schema
// CreateSubscription).
type CreateSubscription struct {
	MandateID     string `json:"mandate_id"`
	AmountMinor   int64  `json:"amount_minor"`
	Currency      string `json:"currency"`
	IntervalUnit  string `json:"interval_unit"`
	IntervalCount int    `json:"interval_count"`
	FirstRunAt    *Time  `json:"first_run_at,omitempty"`
}

// Subscription is a subscription in an answer (schema Subscription).
type Subscription struct {
	ID            string `json:"id"`
	MandateID     string `json:"mandate_id"`
	AmountMinor   int64  `json:"amount_minor"`
	Currency      string `json:"currency"`
	IntervalUnit  string `json:"interval_unit"`
	IntervalCount int    `json:"interval_count"`
	NextRunAt     Time   `json:"next_run_at,omitzero"`
	Status        string `json:"status"`
	CreatedAt     Time   `json:"created_at,omitzero"`
	UpdatedAt     Time   `json:"updated_at,omitzero"`
	// Extensions.
	NextPeriod      int64  `json:"next_period"`
	FailedAttempts  int    `json:"failed_attempts"`
	LastDeclineCode string `json:"last_decline_code,omitempty"`
}

// Mandate is a mandate in an answer (schema Mandate, an extension).
type Mandate struct {
	ID                string           `json:"id"`
	Status            string           `json:"status"`
	PaymentID         string           `json:"payment_id"`
	CustomerReference string           `json:"customer_reference"`
	DisclosureVersion string           `json:"disclosure_version"`
	SavedCardID       string           `json:"saved_card_id,omitempty"`
	CardMask          string           `json:"card_mask,omitempty"`
	CardExpireMonth   int              `json:"card_expire_month,omitempty"`
	CardExpireYear    int              `json:"card_expire_year,omitempty"`
	ConsentAt         Time             `json:"consent_at,omitzero"`
	Consent           *MandateEvidence `json:"consent,omitempty"`
	CreatedAt         Time             `json:"created_at"`
	UpdatedAt         Time             `json:"updated_at"`
}

// MandateEvidence is the evidence of consent (schema Mandate, consent).
type MandateEvidence struct {
	Channel    string `json:"channel"`
	ConsentBox bool   `json:"consent_box"`
	PayerIP    string `json:"payer_ip,omitempty"`
	UserAgent  string `json:"user_agent,omitempty"`
}

// SandboxClock is a sandbox key's clock (schema SandboxClock).
type SandboxClock struct {
	Now           Time  `json:"now"`
	OffsetSeconds int64 `json:"offset_seconds"`
}

// SandboxClockAdvance is the body of advanceSandboxClock (POST
// /api/v1/sandbox/clock/advance) (schema SandboxClockAdvance).
type SandboxClockAdvance struct {
	To      *Time  `json:"to,omitempty"`
	Seconds *int64 `json:"seconds,omitempty"`
}

// SandboxClockAdvanced is its answer (schema SandboxClockAdvanced).
type SandboxClockAdvanced struct {
	Now Time           `json:"now"`
	Ran map[string]int `json:"ran"`
}

// PaymentChannel is a channel assigned to the calling key (schema
// PaymentChannel).
type PaymentChannel struct {
	ID             string   `json:"id"`
	Alias          string   `json:"alias"`
	PaymentMethods []string `json:"payment_methods"`
	Currencies     []string `json:"currencies"`
	CheckoutMode   string   `json:"checkout_mode"` // platform or provider_redirect
}

// PaymentChannelList is the answer of GET /api/v1/payment-channels (schema
// PaymentChannelList). Items is never null.
type PaymentChannelList struct {
	Items []PaymentChannel `json:"items"`
}

// CardInformation is what is known of a BIN (schema CardInformation); only
// Bin and Source are guaranteed.
type CardInformation struct {
	Bin           string `json:"bin"`
	Scheme        string `json:"scheme,omitempty"`
	Type          string `json:"type,omitempty"`
	Level         string `json:"level,omitempty"`
	Issuer        string `json:"issuer,omitempty"`
	Country       string `json:"country,omitempty"`
	CountryCode   string `json:"country_code,omitempty"`
	IssuerWebsite string `json:"issuer_website,omitempty"`
	IssuerPhone   string `json:"issuer_phone,omitempty"`
	Source        string `json:"source"` // bin_base or provider
}

// CreateCardVerification is the body of POST /api/v1/card-verifications
// (schema CreateCardVerification).
type CreateCardVerification struct {
	OrderID     string                     `json:"order_id"`
	Currency    string                     `json:"currency"`
	Card        VerificationCard           `json:"card"`
	Description *string                    `json:"description,omitempty"`
	Metadata    map[string]json.RawMessage `json:"metadata,omitempty"`
}

// VerificationCard is the card to verify (schema VerificationCard); request
// only.
type VerificationCard struct {
	Number      string `json:"number"`
	ExpireMonth int    `json:"expire_month"`
	ExpireYear  int    `json:"expire_year"`
	CVV         string `json:"cvv"`
}

// VerifyCardVerification is the body of POST
// /api/v1/card-verifications/{id}/verify (schema VerifyCardVerification);
// request only.
type VerifyCardVerification struct {
	Code string `json:"code"`
}

// CardVerification is a verification in an answer (schema
// CardVerification).
type CardVerification struct {
	VerificationID    string                  `json:"verification_id"`
	OrderID           string                  `json:"order_id"`
	Status            string                  `json:"status"`
	Final             bool                    `json:"final"`
	CardMask          string                  `json:"card_mask,omitempty"`
	DeclineCode       string                  `json:"decline_code,omitempty"`
	ClientDescription string                  `json:"client_description,omitempty"`
	NextAction        *VerificationNextAction `json:"next_action,omitempty"`
	VerifyAttempts    int                     `json:"verify_attempts"`
	BankReference     *BankReference          `json:"bank_reference,omitempty"`
	CreatedAt         Time                    `json:"created_at"`
	UpdatedAt         Time                    `json:"updated_at"`
}

// VerificationNextAction is present while a verification is code_sent
// (schema VerificationNextAction); Type is always "lookup".
type VerificationNextAction struct {
	Type string `json:"type"`
}

// CreatePayout is the body of POST /api/v1/payouts (schema CreatePayout).
type CreatePayout struct {
	OrderID      string                     `json:"order_id"`
	AmountMinor  int64                      `json:"amount_minor"`
	Currency     string                     `json:"currency"`
	Account      string                     `json:"account"`
	PayoutMethod PayoutMethod               `json:"payout_method"`
	Description  *string                    `json:"description,omitempty"`
	ReturnURL    *string                    `json:"return_url,omitempty"`
	Customer     *Customer                  `json:"customer,omitempty"`
	Device       map[string]json.RawMessage `json:"device,omitempty"`
	Metadata     map[string]json.RawMessage `json:"metadata,omitempty"`
}

// PayoutMethod is where a payout goes (schema PayoutMethod). Exactly one of
// Card, SavedCardID and Wallet is expected; the domain checks it, so that
// the named error codes of the spec answer.
type PayoutMethod struct {
	Type        string          `json:"type"`
	Card        *PayoutCard     `json:"card,omitempty"`
	SavedCardID *string         `json:"saved_card_id,omitempty"`
	Wallet      json.RawMessage `json:"wallet,omitempty"`
	PayloadMode *string         `json:"payload_mode,omitempty"`
}

// PayoutCard is the destination card of a payout (schema PayoutCard);
// request only.
type PayoutCard struct {
	Number      string  `json:"number"`
	ExpireMonth int     `json:"expire_month"`
	ExpireYear  int     `json:"expire_year"`
	CVV         *string `json:"cvv,omitempty"`
	Cardholder  *string `json:"cardholder,omitempty"`
}

// ConfirmPayout is the optional body of POST /api/v1/payouts/{id}/confirm
// (schema ConfirmPayout); request only.
type ConfirmPayout struct {
	Value *string `json:"value,omitempty"`
}

// Payout is a payout in an answer (schema Payout). PayoutMethod is the
// plain type.
type Payout struct {
	PayoutID          string         `json:"payout_id"`
	OrderID           string         `json:"order_id"`
	Status            string         `json:"status"`
	Final             bool           `json:"final"`
	AmountMinor       int64          `json:"amount_minor"`
	Currency          string         `json:"currency"`
	Account           string         `json:"account"`
	PayoutMethod      string         `json:"payout_method"`
	CardMask          string         `json:"card_mask,omitempty"`
	DeclineCode       string         `json:"decline_code,omitempty"`
	ClientDescription string         `json:"client_description,omitempty"`
	NextAction        *NextAction    `json:"next_action,omitempty"`
	BankReference     *BankReference `json:"bank_reference,omitempty"`
	CreatedAt         Time           `json:"created_at"`
	UpdatedAt         Time           `json:"updated_at"`
}
