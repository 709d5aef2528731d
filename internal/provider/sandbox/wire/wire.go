// Package wire is the sandbox acquirer's JSON API (docs/sandbox.md), the
// one thing the acquirer (package acquirer) and Paygate's adapter (package
// sandbox) share: request and answer bodies, the ledger's entries and the
// profile table. Requests carry card data; answers have no field that could
// hold it (docs/design/style.md: write-only is a property of the types).
package wire

import (
	"encoding/json"
	"slices"
	"time"

	"github.com/paygate/paygate/internal/provider"
)

// ProfileHeader names the profile a request acts under (the channel's
// provider profile); absent means ProfileDefault.
const ProfileHeader = "Sandbox-Profile"

// Payment and payout statuses in the sandbox's own vocabulary (the adapter
// maps them to provider.Status).
const (
	StatusSucceeded      = "succeeded"
	StatusAuthorized     = "authorized"
	StatusRequiresAction = "requires_action"
	StatusDeclined       = "declined"
	StatusFailed         = "failed"
	StatusCanceled       = "canceled"
	StatusExpired        = "expired"
)

// Hosted session statuses.
const (
	StatusOpen      = "open"
	StatusCompleted = "completed"
)

// Verification statuses (with StatusDeclined and StatusFailed).
const (
	StatusCodeSent = "code_sent"
	StatusVerified = "verified"
)

// Decline codes the sandbox uses. The adapter writes the payer's message.
const (
	CodeCardDeclined         = "card_declined"
	CodeInsufficientFunds    = "insufficient_funds"
	CodeExpiredCard          = "expired_card"
	CodeIncorrectCVC         = "incorrect_cvc"
	CodeInvalidNumber        = "invalid_card_number"
	CodeAuthenticationFailed = "authentication_failed"
	CodeProcessingError      = "processing_error"
	CodeDoNotHonor           = "do_not_honor"
	CodeAccountClosed        = "account_closed"
)

// The profiles DefaultProfiles defines.
const (
	ProfileDefault = "default" // docs/design/decisions.md section 7: everything but refund
	ProfileRefunds = "refunds" // the same plus refund, to exercise refunds
)

// DefaultProfiles returns the profile table used when the acquirer's
// Config.Profiles is nil and the adapter's default: "default" with the
// capabilities of docs/design/decisions.md section 7 plus the hosted page,
// and "refunds", the same with refund. A fresh map each time, so a caller may
// change its copy.
func DefaultProfiles() map[string]provider.Capabilities {
	base := provider.Capabilities{
		provider.Charge, provider.Authorize, provider.Capture, provider.Cancel,
		provider.Lookup, provider.Debit, provider.ThreeDS, provider.WalletToken,
		provider.WalletDirect, provider.Mobile, provider.SavedCards, provider.HostedPage,
	}
	return map[string]provider.Capabilities{
		ProfileDefault: slices.Clone(base),
		ProfileRefunds: append(slices.Clone(base), provider.Refund),
	}
}

// The kinds of ledger entries.
const (
	EntryCharge           = "charge"            // money taken at once
	EntryHold             = "hold"              // money held by an authorization
	EntryCapture          = "capture"           // held money taken
	EntryRelease          = "release"           // held money let go (cancel, partial capture, expiry, end of a verification)
	EntryRefund           = "refund"            // taken money given back
	EntryTransfer         = "transfer"          // money sent by a payout
	EntryVerificationHold = "verification_hold" // the small sum a card verification blocks
)

// Entry is one movement of money at the sandbox. It holds a masked card at
// most, never a card number.
type Entry struct {
	Seq  int64  `json:"seq"`
	Kind string `json:"kind"`
	// OperationID is the operation that created the resource (Paygate's
	// operation id of the payment, payout or verification).
	OperationID string `json:"operation_id"`
	// CausedBy is the operation whose request made this entry (a capture's
	// own operation id, say); empty when the payer (a page) or the clock
	// (an expiry) did.
	CausedBy    string    `json:"caused_by,omitempty"`
	ResourceID  string    `json:"resource_id"` // the sandbox's payment, payout or verification id
	AmountMinor int64     `json:"amount_minor"`
	Currency    string    `json:"currency"`
	CardMask    string    `json:"card_mask,omitempty"`
	Reason      string    `json:"reason,omitempty"` // why a release: canceled, partial_capture, expired, verified, failed
	At          time.Time `json:"at"`
}

// Matches reports whether e is of kind (any kind when empty) and concerns
// id: its OperationID, CausedBy or ResourceID.
func (e Entry) Matches(kind, id string) bool {
	if kind != "" && e.Kind != kind {
		return false
	}
	return id == "" || e.OperationID == id || e.CausedBy == id || e.ResourceID == id
}

// Count is how many entries match kind and id (see Entry.Matches), for a
// ledger read over HTTP (the adapter's Ledger) as for the acquirer's.
func Count(entries []Entry, kind, id string) int {
	n := 0
	for _, e := range entries {
		if e.Matches(kind, id) {
			n++
		}
	}
	return n
}

// Card is a card in a request body, never in a URL.
type Card struct {
	Number   string `json:"number"`
	ExpMonth int    `json:"exp_month"`
	ExpYear  int    `json:"exp_year"`
	CVV      string `json:"cvv,omitempty"`
	Holder   string `json:"holder,omitempty"`
}

type Wallet struct {
	Type    string          `json:"type"` // apple_pay, google_pay, samsung_pay
	Mode    string          `json:"mode"` // token or direct
	Payload json.RawMessage `json:"payload"`
}

// Method is how the payer pays or is paid: Type is card, wallet,
// mobile or token, and the field of that name is set.
type Method struct {
	Type   string  `json:"type"`
	Card   *Card   `json:"card,omitempty"`
	Wallet *Wallet `json:"wallet,omitempty"`
	Phone  string  `json:"phone,omitempty"`
	Token  string  `json:"token,omitempty"`
}

type Customer struct {
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

type Browser struct {
	IP        string          `json:"ip,omitempty"`
	Accept    string          `json:"accept_header,omitempty"`
	UserAgent string          `json:"user_agent,omitempty"`
	Snapshot  json.RawMessage `json:"snapshot,omitempty"`
}

type PaymentRequest struct {
	Intent      string    `json:"intent"` // charge or authorize
	AmountMinor int64     `json:"amount_minor"`
	Currency    string    `json:"currency"`
	OrderID     string    `json:"order_id,omitempty"`
	Description string    `json:"description,omitempty"`
	Method      Method    `json:"payment_method"`
	Customer    *Customer `json:"customer,omitempty"`
	Browser     *Browser  `json:"browser,omitempty"`
	Locale      string    `json:"locale,omitempty"`
	ReturnURL   string    `json:"return_url,omitempty"`
	SaveCard    bool      `json:"save_card,omitempty"`
}

type AmountRequest struct {
	AmountMinor int64 `json:"amount_minor,omitempty"`
}

type CodeRequest struct {
	Code string `json:"code,omitempty"`
}

type VerificationRequest struct {
	OrderID  string `json:"order_id,omitempty"`
	Currency string `json:"currency"`
	Card     Card   `json:"card"`
}

type PayoutRequest struct {
	OrderID     string    `json:"order_id,omitempty"`
	AmountMinor int64     `json:"amount_minor"`
	Currency    string    `json:"currency"`
	Account     string    `json:"account,omitempty"`
	Description string    `json:"description,omitempty"`
	Method      Method    `json:"payout_method"`
	Customer    *Customer `json:"customer,omitempty"`
	Browser     *Browser  `json:"browser,omitempty"`
	Locale      string    `json:"locale,omitempty"`
	ReturnURL   string    `json:"return_url,omitempty"`
}

type SessionRequest struct {
	Intent      string `json:"intent"`
	AmountMinor int64  `json:"amount_minor"`
	Currency    string `json:"currency"`
	OrderID     string `json:"order_id,omitempty"`
	Description string `json:"description,omitempty"`
	Locale      string `json:"locale,omitempty"`
	ReturnURL   string `json:"return_url,omitempty"`
}

// CardView is all the sandbox ever keeps or shows of a card.
type CardView struct {
	Mask     string `json:"mask"`
	Last4    string `json:"last4"`
	Scheme   string `json:"scheme,omitempty"`
	ExpMonth int    `json:"exp_month"`
	ExpYear  int    `json:"exp_year"`
}

type NextActionView struct {
	Type string `json:"type"` // three_ds or otp
	URL  string `json:"url,omitempty"`
}

// DeclineView carries the sandbox's own message: an acquirer's text, which
// the adapter must never show a payer.
type DeclineView struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

type BankRefView struct {
	PaymentID string `json:"payment_id"`
	Name      string `json:"name"`
}

type RefundView struct {
	ID          string    `json:"id"`
	OperationID string    `json:"operation_id"`
	AmountMinor int64     `json:"amount_minor"`
	CreatedAt   time.Time `json:"created_at"`
}

type PaymentView struct {
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
	Card                   *CardView       `json:"card,omitempty"`
	NextAction             *NextActionView `json:"next_action,omitempty"`
	Decline                *DeclineView    `json:"decline,omitempty"`
	CardToken              string          `json:"card_token,omitempty"`
	AuthorizationExpiresAt *time.Time      `json:"authorization_expires_at,omitempty"`
	BankReference          *BankRefView    `json:"bank_reference,omitempty"`
	Refunds                []RefundView    `json:"refunds,omitempty"`
	SessionID              string          `json:"session_id,omitempty"`
	CreatedAt              time.Time       `json:"created_at"`
	UpdatedAt              time.Time       `json:"updated_at"`
}

type VerificationView struct {
	Object          string       `json:"object"` // "verification"
	ID              string       `json:"id"`
	OperationID     string       `json:"operation_id"`
	OrderID         string       `json:"order_id,omitempty"`
	Status          string       `json:"status"` // code_sent, verified, declined, failed
	Attempts        int          `json:"attempts"`
	Currency        string       `json:"currency"`
	HoldAmountMinor int64        `json:"hold_amount_minor"`
	Card            *CardView    `json:"card,omitempty"`
	Decline         *DeclineView `json:"decline,omitempty"`
	BankReference   *BankRefView `json:"bank_reference,omitempty"`
	CreatedAt       time.Time    `json:"created_at"`
	UpdatedAt       time.Time    `json:"updated_at"`
}

type PayoutView struct {
	Object        string          `json:"object"` // "payout"
	ID            string          `json:"id"`
	OperationID   string          `json:"operation_id"`
	OrderID       string          `json:"order_id,omitempty"`
	Status        string          `json:"status"` // succeeded, requires_action, declined, failed
	AmountMinor   int64           `json:"amount_minor"`
	Currency      string          `json:"currency"`
	Account       string          `json:"account,omitempty"`
	Method        string          `json:"method"`
	Card          *CardView       `json:"card,omitempty"`
	NextAction    *NextActionView `json:"next_action,omitempty"`
	Decline       *DeclineView    `json:"decline,omitempty"`
	BankReference *BankRefView    `json:"bank_reference,omitempty"`
	CreatedAt     time.Time       `json:"created_at"`
	UpdatedAt     time.Time       `json:"updated_at"`
}

type SessionView struct {
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
	Payment     *PaymentView `json:"payment,omitempty"`
	CreatedAt   time.Time    `json:"created_at"`
}

type BINView struct {
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

type LedgerView struct {
	Entries []Entry `json:"entries"`
	// HasMore: a page (limit) left entries; the next starts after the
	// last one's seq.
	HasMore bool `json:"has_more,omitempty"`
}

// MaxLedgerPage is the most entries GET /v1/ledger answers at once.
const MaxLedgerPage = 10000

type ErrorView struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		Field   string `json:"field,omitempty"`
	} `json:"error"`
}
