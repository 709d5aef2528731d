// Package fault is Paygate's one application error type. Every error a
// merchant can see is a *fault.Error carrying a machine-readable Code; the
// HTTP layer maps codes to statuses in one table (server/errors.go).
//
// Messages are written by Paygate, never copied from input or from a
// provider, so that submitted values (card numbers, codes) cannot leak.
package fault

import (
	"errors"
	"fmt"
	"time"
)

// Code is a machine-readable error code, as listed in
// docs/design/decisions.md section 3.
type Code string

// The codes of the client API and docs/design/decisions.md section 3.
const (
	InvalidJSON                  Code = "invalid_json"
	ValidationError              Code = "validation_error"
	UnknownField                 Code = "unknown_field"
	InvalidBIN                   Code = "invalid_bin"
	CustomerReferenceRequired    Code = "customer_reference_required"
	CardAndSavedCardExclusive    Code = "card_and_saved_card_are_exclusive"
	IdempotencyKeyRequired       Code = "idempotency_key_required"
	InvalidIdempotencyKey        Code = "invalid_idempotency_key"
	AuthenticationRequired       Code = "authentication_required"
	InvalidSignature             Code = "invalid_signature"
	TimestampOutOfRange          Code = "timestamp_out_of_range"
	NonceReused                  Code = "nonce_reused"
	DirectCardDataNotAllowed     Code = "direct_card_data_not_allowed"
	NotFound                     Code = "not_found"
	BINNotFound                  Code = "bin_not_found"
	MethodNotAllowed             Code = "method_not_allowed"
	InvalidPaymentState          Code = "invalid_payment_state"
	InvalidPayoutState           Code = "invalid_payout_state"
	InvalidSubscriptionState     Code = "invalid_subscription_state"
	DuplicateOrderID             Code = "duplicate_order_id"
	IdempotencyRequestInProgress Code = "idempotency_request_in_progress"
	IdempotencyKeyReused         Code = "idempotency_key_reused"
	PayloadTooLarge              Code = "payload_too_large"
	UnsupportedMediaType         Code = "unsupported_media_type"
	CapabilityNotSupported       Code = "capability_not_supported"
	VerificationNotAwaitingCode  Code = "verification_not_awaiting_code"
	SavedCardNotFound            Code = "saved_card_not_found"
	LimitExceeded                Code = "limit_exceeded"
	ChannelNotAvailable          Code = "channel_not_available"
	MandateNotFound              Code = "mandate_not_found"
	RateLimited                  Code = "rate_limited"
	Internal                     Code = "internal_error"
	Unavailable                  Code = "unavailable"
)

// Error is an error a merchant may see. Field is a dotted path into the
// request body ("customer.email"), or a header or query parameter name, or
// empty. Details never holds a submitted value.
type Error struct {
	Code      Code
	Message   string
	Field     string
	Retryable bool
	Details   map[string]any
	// RetryAfter, for rate_limited, is when a retry can succeed (the
	// Retry-After header); zero: one second.
	RetryAfter time.Duration
}

func (e *Error) Error() string {
	if e.Field != "" {
		return fmt.Sprintf("%s: %s (%s)", e.Code, e.Message, e.Field)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

// New returns an error with a code and a message.
func New(code Code, message string) *Error {
	return &Error{Code: code, Message: message}
}

// Newf is New with a formatted message. Never format submitted values into it.
func Newf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// OnField returns an error about one field of the request.
func OnField(code Code, field, message string) *Error {
	return &Error{Code: code, Field: field, Message: message}
}

// As reports whether err is (or wraps) a *Error and returns it.
func As(err error) (*Error, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e, true
	}
	return nil, false
}

// Missing is err, or not_found with message when err is (or wraps)
// notFound, a store's "no such row": a service finding a key's resource
// answers alike for another key's and for one that does not exist.
func Missing(err, notFound error, message string) error {
	if err != nil && errors.Is(err, notFound) {
		return New(NotFound, message)
	}
	return err
}

// CodeOf returns the code of err, or Internal when err is not a *Error.
func CodeOf(err error) Code {
	if e, ok := As(err); ok {
		return e.Code
	}
	return Internal
}

// ErrConflict is a lost compare-and-set: the resource changed between the
// read and the write (its version moved), so the transaction is rolled back
// and the same request may succeed when run again. Every resource's own
// conflict error is one (made by Conflict), so the HTTP layer answers them
// alike: 409, retryable, not stored (docs/api.md, "Idempotency").
var ErrConflict = errors.New("changed concurrently")

// Conflict returns a resource's conflict error: "<resource> changed
// concurrently", an ErrConflict, answered (ConflictAnswer) with the code
// the resource's 409s carry.
func Conflict(resource string, code Code) error { return &conflict{resource: resource, code: code} }

type conflict struct {
	resource string
	code     Code
}

func (c *conflict) Error() string { return c.resource + " changed concurrently" }

// ConflictAnswer is the answer to a request that lost a compare-and-set
// (an error made by Conflict, wrapped or not): 409 with the resource's
// code, retryable (docs/api.md, "Idempotency"); false for any other error.
func ConflictAnswer(err error) (*Error, bool) {
	var c *conflict
	if !errors.As(err, &c) {
		return nil, false
	}
	return &Error{Code: c.code, Retryable: true,
		Message: "the " + c.resource + " changed while this request ran; read it and retry"}, true
}

// Is makes every resource's conflict an ErrConflict.
func (c *conflict) Is(target error) bool { return target == ErrConflict }
