// Package provider is the seam between Paygate and acquirers: one request
// and one result type per operation, capabilities declared as data, and a
// small error vocabulary that drives retries (docs/design/style.md, after
// formancehq/payments). An acquirer is one folder beside sandbox/; nothing
// else changes to add one.
//
// Every request carries OperationID, Paygate's own id for the operation. An
// adapter must send it as the acquirer's idempotency key, so that sending the
// same operation twice (after a timeout, a crash, a retry) never charges
// twice, and Status can find the outcome of an operation whose answer was lost.
package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Capability is something a provider profile can do (docs/design/decisions.md
// section 7).
type Capability string

// The capabilities.
const (
	Charge       Capability = "charge"
	Authorize    Capability = "authorize"
	Capture      Capability = "capture"
	Cancel       Capability = "cancel"
	Refund       Capability = "refund"
	Lookup       Capability = "lookup" // card verification by a code the payer reads back
	Debit        Capability = "debit"  // payouts
	ThreeDS      Capability = "three_ds"
	WalletToken  Capability = "wallet_token"  // wallet payloads in token mode
	WalletDirect Capability = "wallet_direct" // wallet payloads in direct mode
	Mobile       Capability = "mobile"
	SavedCards   Capability = "saved_cards"
	HostedPage   Capability = "hosted_page" // the provider's own checkout (provider_redirect channels)
)

// Capabilities is a set of capabilities.
type Capabilities []Capability

// Has reports whether c includes x.
func (c Capabilities) Has(x Capability) bool { return slices.Contains(c, x) }

// Status is an operation's outcome as the provider reports it.
type Status string

// Outcomes.
const (
	StatusPending        Status = "pending"         // accepted, outcome later: ask Status
	StatusRequiresAction Status = "requires_action" // the payer must act: see NextAction
	StatusAuthorized     Status = "authorized"      // funds held
	StatusSucceeded      Status = "succeeded"       // money moved (charge, capture, payout, refund) or card verified
	StatusDeclined       Status = "declined"        // refused by the issuer; DeclineCode says why
	StatusFailed         Status = "failed"          // the provider could not do it
	StatusCanceled       Status = "canceled"        // a hold released
	StatusCodeSent       Status = "code_sent"       // verification: the payer has a code to read back
)

// NextAction is what the payer must do for a requires_action outcome.
type NextAction struct {
	Type string // "three_ds", "redirect" or "otp"
	URL  string // for three_ds and redirect
}

// Card is raw card data. It lives only in memory on its way to the provider.
type Card struct {
	Number   string
	ExpMonth int
	ExpYear  int
	CVV      string
	Holder   string
}

// Wallet is a wallet payment (Apple Pay, Google Pay, Samsung Pay).
type Wallet struct {
	Type    string          // apple_pay, google_pay, samsung_pay
	Mode    string          // token or direct
	Payload json.RawMessage // the wallet's payload, passed on untouched
}

// Instrument is how the payer pays (or is paid): exactly one field is set.
type Instrument struct {
	Card       *Card
	Wallet     *Wallet
	Phone      string // mobile account, E.164
	SavedToken string // the provider's token of a saved card
}

// Customer is card-holder data for the provider. Country is ISO 3166-1
// numeric (client API: converted by the backend).
type Customer struct {
	FirstName, LastName, Email, Phone string
	Country, PostalCode, Region, City string
	Line1, Line2, Line3               string
}

// Browser is what the provider and issuer learn of the payer's browser (3DS).
type Browser struct {
	IP           string
	AcceptHeader string
	UserAgent    string
	Snapshot     json.RawMessage // the DeviceSnapshot as sent, for the issuer
}

// PayRequest charges or authorizes (holds) an amount.
type PayRequest struct {
	OperationID string
	Authorize   bool // hold only; capture later
	AmountMinor int64
	Currency    string
	OrderID     string
	Description string
	Instrument  Instrument
	Customer    *Customer
	Browser     *Browser
	Locale      string // ru, en, ua: the language of the provider's pages
	ReturnURL   string // where the provider sends the payer after 3DS or a redirect
	SaveCard    bool   // ask for a reusable card token
	Profile     string // the channel's provider profile
	// OffSession: the payer is not present (a subscription's charge on a
	// saved card), so no step of theirs (3DS) can be asked for.
	OffSession bool
	// Payer is an opaque id, stable per merchant key and customer
	// reference, for acquirers that keep a customer record of their own
	// behind saved cards; empty when the payment has no customer
	// reference. It names nobody.
	Payer string
}

// PayResult is the outcome of a payment operation (and of Status and Confirm).
type PayResult struct {
	Status                 Status
	ProviderID             string // the provider's id of the payment
	NextAction             *NextAction
	DeclineCode            string // e.g. card_declined, insufficient_funds
	DeclineMessage         string // payer-safe, written by the adapter (never the provider's own text)
	CardToken              string // when SaveCard and the provider stored the card
	CardScheme             string
	CardExpMonth           int
	CardExpYear            int
	AuthorizationExpiresAt *time.Time
	CapturedAmountMinor    int64
	RefundedAmountMinor    int64
	BankReference          *BankReference
	// Reroutable marks a decline the acquirer gave before anything moved,
	// for a reason another acquirer may not share (its table's "reroute"
	// declines: docs/design/decisions.md section 17).
	Reroutable bool
}

// BankReference is the issuing bank's own reference for an operation.
type BankReference struct {
	PaymentID string
	Name      string
}

// CaptureRequest captures all or part of a hold.
type CaptureRequest struct {
	OperationID string
	ProviderID  string
	AmountMinor int64 // ≤ the authorized amount; the rest is released
	Profile     string
}

// CancelRequest releases a hold.
type CancelRequest struct {
	OperationID string
	ProviderID  string
	Profile     string
}

// RefundRequest returns all or part of a captured payment.
type RefundRequest struct {
	OperationID string
	ProviderID  string
	AmountMinor int64
	Profile     string
}

// ConfirmRequest completes a requires_action step: a one-time code, or
// (Code empty) a question for the outcome of a 3DS or redirect step.
type ConfirmRequest struct {
	OperationID string // the confirm operation's own id
	ProviderID  string
	Code        string
	Profile     string
}

// StatusRequest asks for the outcome of an earlier operation by its
// OperationID: the way an unknown outcome is resolved, never by resending.
type StatusRequest struct {
	OperationID string
	// ProviderID is the provider's id of the resource the operation acts
	// on when Paygate knows it (a capture's payment, a hosted page's
	// session); empty for an operation that creates one.
	ProviderID string
	Profile    string
}

// VerificationRequest starts a card verification (LookUp): a small sum is
// held and the payer reads a code back.
type VerificationRequest struct {
	OperationID string
	OrderID     string
	Currency    string
	Card        Card
	Profile     string
}

// VerifyRequest submits the code the payer read.
type VerifyRequest struct {
	OperationID string
	ProviderID  string
	Code        string
	Profile     string
}

// VerificationResult is a verification's state at the provider.
type VerificationResult struct {
	Status        Status // code_sent, succeeded (verified), declined/failed
	ProviderID    string
	Attempts      int // codes submitted so far
	DeclineCode   string
	BankReference *BankReference
}

// PayoutRequest sends money to a card or wallet.
type PayoutRequest struct {
	OperationID string
	OrderID     string
	AmountMinor int64
	Currency    string
	Account     string
	Description string
	Instrument  Instrument
	Customer    *Customer
	Browser     *Browser
	ReturnURL   string
	Profile     string
}

// PayoutResult is a payout's state at the provider.
type PayoutResult struct {
	Status        Status // pending, requires_action, succeeded, declined, failed
	ProviderID    string
	NextAction    *NextAction
	DeclineCode   string
	BankReference *BankReference
}

// BINInfo is what a provider knows of a BIN.
type BINInfo struct {
	BIN, Scheme, Type, Level, Issuer, Country, CountryCode, IssuerWebsite, IssuerPhone string
}

// HostedSessionRequest opens the provider's own checkout page for a payment
// (channels in provider_redirect mode).
type HostedSessionRequest struct {
	OperationID string
	AmountMinor int64
	Currency    string
	OrderID     string
	Description string
	Locale      string
	ReturnURL   string // where the provider sends the payer back
	Authorize   bool
	Profile     string
	// ExpiresAt is when the page must stop taking a payment: before
	// Paygate gives the payment up (zero: the provider's default).
	ExpiresAt time.Time
}

// HostedSessionResult is where to send the payer.
type HostedSessionResult struct {
	ProviderID string
	URL        string
}

// Provider is the core every acquirer adapter offers: its name and what
// each of its profiles can do. Everything else an acquirer may or may not
// offer is an optional interface below (Payments, Verifications, Payouts,
// BINSource, HostedPages), checked by type assertion, so an adapter
// implements only what its acquirer does (docs/providers.md, "The
// interfaces"). Reach an optional interface through PaymentsOf and its
// siblings.
//
// Every method of every interface returns a result for each answer the
// provider gave (a decline is a result, not an error) and an *Error when no
// outcome could be learned.
type Provider interface {
	// Name is the provider's name as channels refer to it.
	Name() string
	// Capabilities of a profile; an unknown profile is an error.
	Capabilities(profile string) (Capabilities, error)
}

// Payments is an acquirer that takes card, wallet and mobile payments
// (client API: payments; docs/design/decisions.md section 7: charge,
// authorize, capture, cancel, refund). Each request's OperationID is the
// acquirer's idempotency key, and Status finds an operation by it: an
// operation whose answer was lost is asked about, never sent as new.
type Payments interface {
	// Pay charges or authorizes (PayRequest.Authorize).
	Pay(ctx context.Context, r PayRequest) (PayResult, error)
	// Capture takes all or part of a hold.
	Capture(ctx context.Context, r CaptureRequest) (PayResult, error)
	// Cancel releases a hold.
	Cancel(ctx context.Context, r CancelRequest) (PayResult, error)
	// Refund returns all or part of a captured payment.
	Refund(ctx context.Context, r RefundRequest) (PayResult, error)
	// Confirm submits a one-time code, or (no code) asks for the outcome of
	// a 3DS or redirect step.
	Confirm(ctx context.Context, r ConfirmRequest) (PayResult, error)
	// Status is the outcome of an earlier payment operation (pay, capture,
	// cancel, refund, confirm, hosted session) by its OperationID; NotFound
	// when the acquirer never carried it out, so sending it is safe.
	Status(ctx context.Context, r StatusRequest) (PayResult, error)
}

// Verifications is an acquirer that verifies cards by a code the payer reads
// back (capability Lookup; docs/design/decisions.md section 15).
type Verifications interface {
	// CreateVerification holds a small sum and sends the payer a code.
	CreateVerification(ctx context.Context, r VerificationRequest) (VerificationResult, error)
	// Verify submits the code; the answer already counts the attempt.
	Verify(ctx context.Context, r VerifyRequest) (VerificationResult, error)
	// VerificationStatus finds a verification by the operation id that
	// created it; NotFound when the acquirer never saw it.
	VerificationStatus(ctx context.Context, r StatusRequest) (VerificationResult, error)
}

// VerificationReleases is an acquirer whose verification holds Paygate can
// release early, when a verification expires unverified
// (docs/design/decisions.md section 15). An acquirer that lets such holds
// go by itself need not offer it.
type VerificationReleases interface {
	ReleaseVerification(ctx context.Context, r ReleaseRequest) (VerificationResult, error)
}

// ReleaseRequest lets a verification's hold go.
type ReleaseRequest struct {
	OperationID string
	ProviderID  string
	Profile     string
}

// Payouts is an acquirer that sends money to cards and wallets (capability
// Debit; docs/design/decisions.md section 15).
type Payouts interface {
	// CreatePayout sends money.
	CreatePayout(ctx context.Context, r PayoutRequest) (PayoutResult, error)
	// ConfirmPayout submits a one-time code, or (no code) reads the outcome
	// of a 3DS step.
	ConfirmPayout(ctx context.Context, r ConfirmRequest) (PayoutResult, error)
	// PayoutStatus finds a payout by the operation id that created it;
	// NotFound when the acquirer never saw it.
	PayoutStatus(ctx context.Context, r StatusRequest) (PayoutResult, error)
}

// BINSource is an acquirer that describes BINs: the fallback of the card
// information lookup for BINs Paygate's own base does not cover
// (docs/bins.md). Only a 6- or 8-digit BIN is ever passed on.
type BINSource interface {
	// BIN describes a 6- or 8-digit BIN; NotFound when unknown.
	BIN(ctx context.Context, bin string) (BINInfo, error)
}

// HostedPages is an acquirer with its own checkout page (capability
// HostedPage; channels in provider_redirect mode, docs/checkout.md). The
// payment made on the page is reported by Payments.Status of the session's
// OperationID.
type HostedPages interface {
	// HostedSession opens a checkout page and says where to send the payer.
	HostedSession(ctx context.Context, r HostedSessionRequest) (HostedSessionResult, error)
}

// Records is an acquirer whose own records of the money it moved Paygate
// can read: reconciliation (docs/design/decisions.md section 18). An
// acquirer without it is not reconciled, and says so.
type Records interface {
	// Movements calls fn with every movement of money the acquirer
	// recorded at a time in [from, to), in no particular order.
	Movements(ctx context.Context, from, to time.Time, fn func(Movement) error) error
}

// RecordKinds is a Records acquirer whose records carry only some kinds
// of movement (Stripe's balance transactions have no hold and no
// release): Paygate's movements of the other kinds are not compared.
// An acquirer without it records every kind.
type RecordKinds interface {
	RecordKinds() []string
}

// The kinds of Movement.
const (
	MoveCharge   = "charge"   // money taken at once
	MoveHold     = "hold"     // money held by an authorization
	MoveCapture  = "capture"  // held money taken
	MoveRelease  = "release"  // a hold let go by a cancel
	MoveRefund   = "refund"   // taken money given back
	MoveTransfer = "transfer" // money sent by a payout
)

// Movement is one movement of money at an acquirer. It carries no card
// data.
type Movement struct {
	Kind string
	// OperationID is Paygate's operation id the movement answers: the
	// pay or payout operation for a charge, hold or transfer, the capture,
	// cancel or refund operation for those; empty when unknown.
	OperationID string
	// Ref is the acquirer's own id of the movement.
	Ref string
	// PaymentRef is the acquirer's id of the payment or payout the
	// movement belongs to (what Paygate keeps as the provider's payment
	// id): a movement without OperationID is matched by it.
	PaymentRef  string
	AmountMinor int64
	Currency    string
	FeeMinor    int64
	At          time.Time
}

// Notifications is an acquirer that tells Paygate of changes
// (POST /providers/{name}/webhooks; docs/design/decisions.md section 16).
// A notification is only a hint: Paygate reads the payment back (Status)
// and applies what it reads, so a forged or replayed one moves nothing.
type Notifications interface {
	// VerifyNotification checks a notification's signature and freshness
	// and says which payment it concerns; one that cannot be trusted is an
	// *Error of kind Invalid, and nothing is done.
	// header is the request's (an http.Header).
	VerifyNotification(header map[string][]string, body []byte) (Notice, error)
}

// Notice is what a verified notification concerns.
type Notice struct {
	// Event is the acquirer's name of what happened, for the log.
	Event string
	// ProviderID is the acquirer's id of the payment (empty: unknown).
	ProviderID string
	// OperationID is Paygate's operation id, when the acquirer carries it
	// (empty: unknown).
	OperationID string
}

// ErrorKind is the small vocabulary that decides what Paygate does next.
type ErrorKind string

// The kinds.
const (
	// Transient: the provider refused before doing anything (5xx before
	// processing, connection refused): the same operation may be sent again.
	Transient ErrorKind = "transient"
	// OutcomeUnknown: the request may or may not have been carried out
	// (timeout, connection cut): ask Status, never resend as new.
	OutcomeUnknown ErrorKind = "outcome_unknown"
	// Unreadable: an answer came but could not be understood: the payment
	// goes to manual_review and Status is asked until it can be read.
	Unreadable ErrorKind = "unreadable"
	// Invalid: the provider rejected the request as malformed: a bug or a
	// missing capability; retrying will not help.
	Invalid ErrorKind = "invalid"
	// RateLimited: slow down and retry after RetryAfter.
	RateLimited ErrorKind = "rate_limited"
	// NotFound: the provider knows no such operation (Status of an
	// operation that never reached it; safe to send the operation).
	NotFound ErrorKind = "not_found"
	// Unsupported: the profile lacks the capability.
	Unsupported ErrorKind = "unsupported"
)

// Error is a provider failure with its kind. Message never holds card data
// or the provider's raw answer.
type Error struct {
	Kind       ErrorKind
	Message    string
	RetryAfter time.Duration
	Err        error
	// Unsent: the acquirer surely did nothing with the request: it never
	// reached it (a refused connection, an unknown name, a TLS handshake,
	// an open circuit) or it answered that nothing happened. Another
	// acquirer may be tried (docs/design/decisions.md section 17).
	Unsent bool
}

// IsUnsent reports whether err is an *Error marked Unsent.
func IsUnsent(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Unsent
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("provider %s: %s: %v", e.Kind, e.Message, e.Err)
	}
	return fmt.Sprintf("provider %s: %s", e.Kind, e.Message)
}

func (e *Error) Unwrap() error { return e.Err }

// KindOf returns the kind of a provider error; any other error is
// OutcomeUnknown, the safe assumption.
func KindOf(err error) ErrorKind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return OutcomeUnknown
}

// Errorf builds an *Error.
func Errorf(kind ErrorKind, format string, args ...any) *Error {
	return &Error{Kind: kind, Message: fmt.Sprintf(format, args...)}
}
