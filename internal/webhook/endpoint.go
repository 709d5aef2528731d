package webhook

import (
	"crypto/rand"
	"encoding/base64"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Endpoint is a URL of a merchant that receives the events of one access
// key, signed with its secret (docs/design/decisions.md section 6).
type Endpoint struct {
	ID          string
	AccessKeyID string
	URL         string
	// EventTypes filters what the endpoint receives; empty means every type.
	EventTypes   []string
	SecretSealed []byte
	// PreviousSecretSealed keeps signing beside the new secret until
	// PreviousSecretUntil, after a rotation; nil when there is none.
	PreviousSecretSealed []byte
	PreviousSecretUntil  *time.Time
	DisabledAt           *time.Time // set by a 410 answer; nothing is sent any more
	DisabledReason       string
	DeletedAt            *time.Time // removed by the merchant
	CreatedAt            time.Time
}

// Enabled reports whether the endpoint still receives events.
func (e *Endpoint) Enabled() bool { return e.DisabledAt == nil && e.DeletedAt == nil }

// Wants reports whether the endpoint's filter takes an event type.
func (e *Endpoint) Wants(eventType string) bool {
	return len(e.EventTypes) == 0 || slices.Contains(e.EventTypes, eventType)
}

// Rotating reports whether the previous secret still signs at now.
func (e *Endpoint) Rotating(now time.Time) bool {
	return e.PreviousSecretSealed != nil && e.PreviousSecretUntil != nil && now.Before(*e.PreviousSecretUntil)
}

// SecretAAD binds a sealed endpoint secret to its endpoint, so a sealed
// blob copied onto another row does not open.
func SecretAAD(endpointID string) []byte { return []byte("webhook_endpoint_secret:" + endpointID) }

// NewSecret returns a new signing secret: "whsec_" and the standard base64
// of 32 random bytes, the form Standard Webhooks libraries take.
func NewSecret() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return "whsec_" + base64.StdEncoding.EncodeToString(b)
}

// ValidSecret reports whether s is a secret NewSecret could have made
// (whsec_ and base64 of 24 to 64 bytes), for `paygate listen --secret`.
func ValidSecret(s string) bool {
	raw, ok := strings.CutPrefix(s, "whsec_")
	if !ok {
		return false
	}
	b, err := base64.StdEncoding.DecodeString(raw)
	return err == nil && len(b) >= 24 && len(b) <= 64
}

// typePattern is the form of an event type: "<resource>.<status>"
// (docs/design/decisions.md section 6).
var typePattern = regexp.MustCompile(`^(payment|payout|card_verification|subscription|mandate)\.[a-z_]{1,40}$`)

// ValidType reports whether t has the form of an event type.
func ValidType(t string) bool { return typePattern.MatchString(t) }

// Delivery statuses.
const (
	Pending   = "pending"
	Succeeded = "succeeded"
	Failed    = "failed" // abandoned: Reason says why
)

// Reasons a delivery was abandoned.
const (
	ReasonExpired         = "retries_exhausted" // no success within 3 days of the first attempt
	ReasonEndpointGone    = "endpoint_disabled" // the endpoint answered 410 (or was disabled before)
	ReasonEndpointRemoved = "endpoint_removed"
)

// Delivery is one event on its way to one endpoint.
type Delivery struct {
	ID, EventID, EndpointID string
	Status                  string
	Reason                  string
	// Attempts and FirstAttemptAt count the current round; a resend starts
	// a new one.
	Attempts       int
	FirstAttemptAt *time.Time
	NextAttemptAt  *time.Time // while pending
	// Generation names the deliver job allowed to work the delivery; a job
	// of an older generation has been superseded and does nothing.
	Generation int
	CreatedAt  time.Time
	UpdatedAt  time.Time
	// RescueAt, when set, is when the lease of the first attempt that the
	// process creating the delivery has in hand lapses (internal/handoff):
	// the delivery is written with it and no River job. Only written;
	// recording an attempt (or a resend) clears it.
	RescueAt time.Time
}

// Attempt is one HTTP request to an endpoint and what came of it.
type Attempt struct {
	ID, DeliveryID string
	At             time.Time
	StatusCode     int // 0: no HTTP answer
	Latency        time.Duration
	Response       string // the first bytes of the answer's body
	Error          string // an ErrorKind, or "" when an answer came
}

// Message is one signed POST to an endpoint.
type Message struct {
	URL    string
	Header map[string]string // the Standard Webhooks headers
	Body   []byte
}

// Answer is what came of sending a Message.
type Answer struct {
	StatusCode int // 0 when no HTTP answer came; Error says why
	Latency    time.Duration
	Body       string        // the first bytes (at most 500) of the answer's body, valid UTF-8
	RetryAfter time.Duration // the answer's Retry-After, 0 when absent
	Error      string        // one of the Err kinds, or ""
}

// Success reports whether the endpoint took the message: any 2xx
// (docs/design/decisions.md section 6). A redirect is not followed and is a
// failure.
func (a Answer) Success() bool { return a.StatusCode >= 200 && a.StatusCode < 300 }

// The kinds of failure where no HTTP answer came.
const (
	ErrTimeout            = "timeout"             // no answer within the timeout (15 s)
	ErrDNS                = "dns_error"           // the host does not resolve
	ErrConnection         = "connection_error"    // refused, reset, unreachable
	ErrTLS                = "tls_error"           // handshake or certificate
	ErrRefusedDestination = "refused_destination" // a forbidden address, in production
	ErrInvalidURL         = "invalid_url"         // the stored URL cannot be requested
)
