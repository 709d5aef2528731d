package sandbox

import (
	"encoding/json"
	"time"
)

// The sandbox's JSON API (docs/sandbox.md), shared by the server and the
// adapter. Requests carry card data; answers have no field that could hold
// it (style.md: write-only is a property of the types).

// wireCard is a card in a request body, never in a URL.
type wireCard struct {
	Number   string `json:"number"`
	ExpMonth int    `json:"exp_month"`
	ExpYear  int    `json:"exp_year"`
	CVV      string `json:"cvv,omitempty"`
	Holder   string `json:"holder,omitempty"`
}

type wireWallet struct {
	Type    string          `json:"type"` // apple_pay, google_pay, samsung_pay
	Mode    string          `json:"mode"` // token or direct
	Payload json.RawMessage `json:"payload"`
}

// wireMethod is how the payer pays or is paid: Type is card, wallet,
// mobile or token, and the field of that name is set.
type wireMethod struct {
	Type   string      `json:"type"`
	Card   *wireCard   `json:"card,omitempty"`
	Wallet *wireWallet `json:"wallet,omitempty"`
	Phone  string      `json:"phone,omitempty"`
	Token  string      `json:"token,omitempty"`
}

type wireCustomer struct {
	FirstName  string `json:"first_name,omitempty"`
	LastName   string `json:"last_name,omitempty"`
	Email      string `json:"email,omitempty"`
	Phone      string `json:"phone,omitempty"`
	Country    string `json:"country,omitempty"` // ISO 3166-1 numeric
	PostalCode string `json:"postal_code,omitempty"`
	Region     string `json:"region,omitempty"`
	City       string `json:"city,omitempty"`
	Line1      string `json:"line1,omitempty"`
	Line2      string `json:"line2,omitempty"`
	Line3      string `json:"line3,omitempty"`
}

type wireBrowser struct {
	IP        string          `json:"ip,omitempty"`
	Accept    string          `json:"accept_header,omitempty"`
	UserAgent string          `json:"user_agent,omitempty"`
	Snapshot  json.RawMessage `json:"snapshot,omitempty"`
}

type paymentRequest struct {
	Intent      string        `json:"intent"` // charge or authorize
	AmountMinor int64         `json:"amount_minor"`
	Currency    string        `json:"currency"`
	OrderID     string        `json:"order_id,omitempty"`
	Description string        `json:"description,omitempty"`
	Method      wireMethod    `json:"payment_method"`
	Customer    *wireCustomer `json:"customer,omitempty"`
	Browser     *wireBrowser  `json:"browser,omitempty"`
	Locale      string        `json:"locale,omitempty"`
	ReturnURL   string        `json:"return_url,omitempty"`
	SaveCard    bool          `json:"save_card,omitempty"`
}

type amountRequest struct {
	AmountMinor int64 `json:"amount_minor,omitempty"`
}

type codeRequest struct {
	Code string `json:"code,omitempty"`
}

type verificationRequest struct {
	OrderID  string   `json:"order_id,omitempty"`
	Currency string   `json:"currency"`
	Card     wireCard `json:"card"`
}

type payoutRequest struct {
	OrderID     string        `json:"order_id,omitempty"`
	AmountMinor int64         `json:"amount_minor"`
	Currency    string        `json:"currency"`
	Account     string        `json:"account,omitempty"`
	Description string        `json:"description,omitempty"`
	Method      wireMethod    `json:"payout_method"`
	Customer    *wireCustomer `json:"customer,omitempty"`
	Browser     *wireBrowser  `json:"browser,omitempty"`
	Locale      string        `json:"locale,omitempty"`
	ReturnURL   string        `json:"return_url,omitempty"`
}

type sessionRequest struct {
	Intent      string `json:"intent"`
	AmountMinor int64  `json:"amount_minor"`
	Currency    string `json:"currency"`
	OrderID     string `json:"order_id,omitempty"`
	Description string `json:"description,omitempty"`
	Locale      string `json:"locale,omitempty"`
	ReturnURL   string `json:"return_url,omitempty"`
}

// cardView is all the sandbox ever keeps or shows of a card.
type cardView struct {
	Mask     string `json:"mask"`
	Last4    string `json:"last4"`
	Scheme   string `json:"scheme,omitempty"`
	ExpMonth int    `json:"exp_month"`
	ExpYear  int    `json:"exp_year"`
}

type nextActionView struct {
	Type string `json:"type"` // three_ds or otp
	URL  string `json:"url,omitempty"`
}

// declineView carries the sandbox's own message: an acquirer's text, which
// the adapter must never show a payer.
type declineView struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

type bankRefView struct {
	PaymentID string `json:"payment_id"`
	Name      string `json:"name"`
}

type refundView struct {
	ID          string    `json:"id"`
	OperationID string    `json:"operation_id"`
	AmountMinor int64     `json:"amount_minor"`
	CreatedAt   time.Time `json:"created_at"`
}

type paymentView struct {
	Object                 string          `json:"object"` // "payment"
	ID                     string          `json:"id"`
	OperationID            string          `json:"operation_id"`
	Intent                 string          `json:"intent"`
	Status                 string          `json:"status"`
	AmountMinor            int64           `json:"amount_minor"`
	CapturedAmountMinor    int64           `json:"captured_amount_minor"`
	RefundedAmountMinor    int64           `json:"refunded_amount_minor"`
	Currency               string          `json:"currency"`
	OrderID                string          `json:"order_id,omitempty"`
	Method                 string          `json:"method"`
	Card                   *cardView       `json:"card,omitempty"`
	NextAction             *nextActionView `json:"next_action,omitempty"`
	Decline                *declineView    `json:"decline,omitempty"`
	CardToken              string          `json:"card_token,omitempty"`
	AuthorizationExpiresAt *time.Time      `json:"authorization_expires_at,omitempty"`
	BankReference          *bankRefView    `json:"bank_reference,omitempty"`
	Refunds                []refundView    `json:"refunds,omitempty"`
	SessionID              string          `json:"session_id,omitempty"`
	CreatedAt              time.Time       `json:"created_at"`
	UpdatedAt              time.Time       `json:"updated_at"`
}

type verificationView struct {
	Object          string       `json:"object"` // "verification"
	ID              string       `json:"id"`
	OperationID     string       `json:"operation_id"`
	OrderID         string       `json:"order_id,omitempty"`
	Status          string       `json:"status"` // code_sent, verified, declined, failed
	Attempts        int          `json:"attempts"`
	Currency        string       `json:"currency"`
	HoldAmountMinor int64        `json:"hold_amount_minor"`
	Card            *cardView    `json:"card,omitempty"`
	Decline         *declineView `json:"decline,omitempty"`
	BankReference   *bankRefView `json:"bank_reference,omitempty"`
	CreatedAt       time.Time    `json:"created_at"`
	UpdatedAt       time.Time    `json:"updated_at"`
}

type payoutView struct {
	Object        string          `json:"object"` // "payout"
	ID            string          `json:"id"`
	OperationID   string          `json:"operation_id"`
	OrderID       string          `json:"order_id,omitempty"`
	Status        string          `json:"status"` // succeeded, requires_action, declined, failed
	AmountMinor   int64           `json:"amount_minor"`
	Currency      string          `json:"currency"`
	Account       string          `json:"account,omitempty"`
	Method        string          `json:"method"`
	Card          *cardView       `json:"card,omitempty"`
	NextAction    *nextActionView `json:"next_action,omitempty"`
	Decline       *declineView    `json:"decline,omitempty"`
	BankReference *bankRefView    `json:"bank_reference,omitempty"`
	CreatedAt     time.Time       `json:"created_at"`
	UpdatedAt     time.Time       `json:"updated_at"`
}

type sessionView struct {
	Object      string       `json:"object"` // "hosted_session"
	ID          string       `json:"id"`
	OperationID string       `json:"operation_id"`
	Status      string       `json:"status"` // open, completed, expired
	URL         string       `json:"url"`
	Intent      string       `json:"intent"`
	AmountMinor int64        `json:"amount_minor"`
	Currency    string       `json:"currency"`
	Locale      string       `json:"locale"`
	ExpiresAt   time.Time    `json:"expires_at"`
	Payment     *paymentView `json:"payment,omitempty"`
	CreatedAt   time.Time    `json:"created_at"`
}

type binView struct {
	Object        string `json:"object"` // "bin"
	BIN           string `json:"bin"`
	Scheme        string `json:"scheme,omitempty"`
	Type          string `json:"type,omitempty"`
	Level         string `json:"level,omitempty"`
	Issuer        string `json:"issuer,omitempty"`
	Country       string `json:"country,omitempty"`
	CountryCode   string `json:"country_code,omitempty"`
	IssuerWebsite string `json:"issuer_website,omitempty"`
	IssuerPhone   string `json:"issuer_phone,omitempty"`
}

type ledgerView struct {
	Entries []Entry `json:"entries"`
}

type errorView struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		Field   string `json:"field,omitempty"`
	} `json:"error"`
}
