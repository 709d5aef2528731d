package openapi

// Wire types: the JSON of the API, one Go type per schema of openapi.yaml,
// kept apart from the domain types. Request types use pointers for optional
// values so that an absent field differs from a zero one. Response types
// have no field for write-only data (card number, CVV, cardholder, wallet,
// phone, codes): they cannot return it. A test keeps the JSON names of every
// type equal to its schema's properties.

import (
	"bytes"
	"encoding/json"
	"errors"
	"time"

	"github.com/paygate/paygate/internal/fault"
)

// Time is a date-time of the API. It is written in UTC as RFC 3339 with
// whole seconds ("2026-07-01T10:00:00Z") and read from any RFC 3339 value.
// Use the omitzero option for an optional Time.
type Time time.Time

// Std returns t as a time.Time.
func (t Time) Std() time.Time { return time.Time(t) }

// IsZero reports whether t is the zero time; omitzero uses it.
func (t Time) IsZero() bool { return time.Time(t).IsZero() }

// MarshalJSON writes t in UTC, RFC 3339 with whole seconds.
func (t Time) MarshalJSON() ([]byte, error) {
	s := time.Time(t).UTC().Truncate(time.Second).Format(time.RFC3339)
	return json.Marshal(s)
}

// UnmarshalJSON reads an RFC 3339 date-time, fractional seconds allowed.
func (t *Time) UnmarshalJSON(b []byte) error {
	if bytes.Equal(b, []byte("null")) {
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return errors.New("a date-time must be a string")
	}
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return errors.New("not an RFC 3339 date-time")
	}
	*t = Time(v)
	return nil
}

// Customer is card-holder data in a request (schema Customer).
type Customer struct {
	FirstName      *string         `json:"first_name,omitempty"`
	LastName       *string         `json:"last_name,omitempty"`
	Email          *string         `json:"email,omitempty"`
	Phone          *string         `json:"phone,omitempty"`
	BillingAddress *BillingAddress `json:"billing_address,omitempty"`
}

// BillingAddress is the card holder's address (schema BillingAddress).
// Line2 and Line3 may be sent as null, which reads as absent.
type BillingAddress struct {
	Country    *string `json:"country,omitempty"`
	PostalCode *string `json:"postal_code,omitempty"`
	Region     *string `json:"region,omitempty"`
	City       *string `json:"city,omitempty"`
	Line1      *string `json:"line1,omitempty"`
	Line2      *string `json:"line2,omitempty"`
	Line3      *string `json:"line3,omitempty"`
}

// DeviceSnapshot is the payer's browser snapshot (schema DeviceSnapshot),
// in a direct payment request and in the Payment answer.
type DeviceSnapshot struct {
	AcceptHeader      *string  `json:"accept_header,omitempty"`
	ColorDepth        *float64 `json:"color_depth,omitempty"`
	ScreenWidth       *float64 `json:"screen_width,omitempty"`
	ScreenHeight      *float64 `json:"screen_height,omitempty"`
	ViewportWidth     *float64 `json:"viewport_width,omitempty"`
	ViewportHeight    *float64 `json:"viewport_height,omitempty"`
	DevicePixelRatio  *float64 `json:"device_pixel_ratio,omitempty"`
	UTCOffset         *float64 `json:"utc_offset,omitempty"`
	MaxTouchPoints    *float64 `json:"max_touch_points,omitempty"`
	Language          *string  `json:"language,omitempty"`
	Languages         []string `json:"languages,omitempty"`
	Timezone          *string  `json:"timezone,omitempty"`
	UserAgent         *string  `json:"user_agent,omitempty"`
	Platform          *string  `json:"platform,omitempty"`
	JavaScriptEnabled *bool    `json:"javascript_enabled,omitempty"`
	TouchEnabled      *bool    `json:"touch_enabled,omitempty"`
	CookieEnabled     *bool    `json:"cookie_enabled,omitempty"`
	Online            *bool    `json:"online,omitempty"`
	ReferrerOrigin    *string  `json:"referrer_origin,omitempty"`
	SessionStartedAt  *string  `json:"session_started_at,omitempty"`
	ClientTimestamp   *string  `json:"client_timestamp,omitempty"`
}

// NextAction tells what the payer must do next (schema NextAction): Type is
// redirect, three_ds, otp, wait or none; URL is set for redirect and
// three_ds.
type NextAction struct {
	Type string `json:"type"`
	URL  string `json:"url,omitempty"`
}

// BankReference is the bank's own reference of an operation (schema
// BankReference). It may never appear; nothing may depend on it.
type BankReference struct {
	PaymentID string `json:"payment_id,omitempty"`
	Name      string `json:"name,omitempty"`
}

// Health is the answer of GET /api/v1/health (schema Health).
type Health struct {
	Status  string `json:"status"` // always "ok"
	Service string `json:"service"`
	// Version is the interface version: the document's info.version
	// (openapi.Version), not the build's.
	Version string `json:"version"`
	// ServiceVersion is the running build's version (extension).
	ServiceVersion string `json:"service_version"`
	Environment    string `json:"environment"` // sandbox or production
}

// ErrorEnvelope is the body of every error answer (schema ErrorEnvelope).
type ErrorEnvelope struct {
	Error ErrorBody `json:"error"`
}

// ErrorBody is the error object inside an ErrorEnvelope. Field is nil when
// no field is at fault; Details is never nil.
type ErrorBody struct {
	Code      string         `json:"code"`
	Message   string         `json:"message"`
	Field     *string        `json:"field"`
	RequestID string         `json:"request_id"`
	Retryable bool           `json:"retryable"`
	Details   map[string]any `json:"details"`
}

// NewErrorEnvelope renders a fault as the wire envelope: an empty Field
// becomes null, nil Details an empty object.
func NewErrorEnvelope(e *fault.Error, requestID string) ErrorEnvelope {
	body := ErrorBody{
		Code:      string(e.Code),
		Message:   e.Message,
		RequestID: requestID,
		Retryable: e.Retryable,
		Details:   e.Details,
	}
	if e.Field != "" {
		f := e.Field
		body.Field = &f
	}
	if body.Details == nil {
		body.Details = map[string]any{}
	}
	return ErrorEnvelope{Error: body}
}
