package server

import (
	"encoding/json"
	"net/http"

	"github.com/paygate/paygate/internal/fault"
)

// statuses is the one code → HTTP status table (docs/design/decisions.md
// section 3).
var statuses = map[fault.Code]int{
	fault.InvalidJSON:                  http.StatusBadRequest,
	fault.ValidationError:              http.StatusBadRequest,
	fault.UnknownField:                 http.StatusBadRequest,
	fault.InvalidBIN:                   http.StatusBadRequest,
	fault.CustomerReferenceRequired:    http.StatusBadRequest,
	fault.CardAndSavedCardExclusive:    http.StatusBadRequest,
	fault.IdempotencyKeyRequired:       http.StatusBadRequest,
	fault.InvalidIdempotencyKey:        http.StatusBadRequest,
	fault.AuthenticationRequired:       http.StatusUnauthorized,
	fault.InvalidSignature:             http.StatusUnauthorized,
	fault.TimestampOutOfRange:          http.StatusUnauthorized,
	fault.NonceReused:                  http.StatusUnauthorized,
	fault.DirectCardDataNotAllowed:     http.StatusForbidden,
	fault.NotFound:                     http.StatusNotFound,
	fault.BINNotFound:                  http.StatusNotFound,
	fault.MethodNotAllowed:             http.StatusMethodNotAllowed,
	fault.InvalidPaymentState:          http.StatusConflict,
	fault.InvalidPayoutState:           http.StatusConflict,
	fault.InvalidSubscriptionState:     http.StatusConflict,
	fault.DuplicateOrderID:             http.StatusConflict,
	fault.IdempotencyRequestInProgress: http.StatusConflict,
	fault.IdempotencyKeyReused:         http.StatusUnprocessableEntity,
	fault.PayloadTooLarge:              http.StatusRequestEntityTooLarge,
	fault.UnsupportedMediaType:         http.StatusUnsupportedMediaType,
	fault.CapabilityNotSupported:       http.StatusUnprocessableEntity,
	fault.VerificationNotAwaitingCode:  http.StatusUnprocessableEntity,
	fault.SavedCardNotFound:            http.StatusUnprocessableEntity,
	fault.LimitExceeded:                http.StatusUnprocessableEntity,
	fault.ChannelNotAvailable:          http.StatusUnprocessableEntity,
	fault.MandateNotFound:              http.StatusUnprocessableEntity,
	fault.RateLimited:                  http.StatusTooManyRequests,
	fault.Internal:                     http.StatusInternalServerError,
	fault.Unavailable:                  http.StatusServiceUnavailable,
}

// retryable codes: the same request may succeed later.
var retryable = map[fault.Code]bool{
	fault.IdempotencyRequestInProgress: true,
	fault.RateLimited:                  true,
	fault.Internal:                     true,
	fault.Unavailable:                  true,
}

// statusOf returns the HTTP status of a code; an unknown code is a bug and
// answers 500.
func statusOf(c fault.Code) int {
	if s, ok := statuses[c]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// envelope is the OpenAPI schema ErrorEnvelope.
type envelope struct {
	Error envelopeError `json:"error"`
}

type envelopeError struct {
	Code      fault.Code     `json:"code"`
	Message   string         `json:"message"`
	Field     *string        `json:"field"`
	RequestID string         `json:"request_id"`
	Retryable bool           `json:"retryable"`
	Details   map[string]any `json:"details"`
}

// errorBody renders f as the envelope, for the request requestID.
func errorBody(f *fault.Error, requestID string) (int, []byte) {
	e := envelopeError{
		Code: f.Code, Message: f.Message, RequestID: requestID,
		Retryable: f.Retryable || retryable[f.Code], Details: f.Details,
	}
	if f.Field != "" {
		e.Field = &f.Field
	}
	if e.Details == nil {
		e.Details = map[string]any{}
	}
	return statusOf(f.Code), mustJSON(envelope{Error: e})
}

// mustJSON encodes a value built by Paygate itself; failure is a bug.
func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return append(b, '\n')
}

// writeJSON sends body (already encoded) with a status.
func writeJSON(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
