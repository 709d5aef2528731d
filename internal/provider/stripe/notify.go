package stripe

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/stripe/stripe-go/v85/webhook"

	"github.com/paygate/paygate/internal/provider"
)

// Tolerance is how old a notification's signature may be: older is stale,
// refused (docs/design/decisions.md section 16).
const Tolerance = 5 * time.Minute

var _ provider.Notifications = (*Adapter)(nil)

// VerifyNotification implements provider.Notifications: Stripe-Signature
// checked with the account's webhook secret, at most Tolerance old. The
// event's object names the PaymentIntent (a PaymentIntent's own id; a
// Charge's, a Refund's or a Checkout Session's payment_intent) and, where
// it carries one, Paygate's operation id.
func (a *Adapter) VerifyNotification(header map[string][]string, body []byte) (provider.Notice, error) {
	if a.webhookSecret == "" {
		return provider.Notice{}, provider.Errorf(provider.Invalid,
			"provider account %s has no webhook secret (paygate providers add --webhook-secret-file)", a.name)
	}
	ev, err := webhook.ConstructEventWithOptions(body, http.Header(header).Get("Stripe-Signature"), a.webhookSecret,
		webhook.ConstructEventOptions{Tolerance: Tolerance, IgnoreAPIVersionMismatch: true})
	if err != nil {
		return provider.Notice{}, provider.Errorf(provider.Invalid, "the notification's Stripe-Signature is missing, wrong or stale")
	}
	var obj struct {
		ID            string            `json:"id"`
		Object        string            `json:"object"`
		PaymentIntent json.RawMessage   `json:"payment_intent"`
		Metadata      map[string]string `json:"metadata"`
	}
	if ev.Data == nil || json.Unmarshal(ev.Data.Raw, &obj) != nil {
		return provider.Notice{}, provider.Errorf(provider.Invalid, "the notification names no object")
	}
	n := provider.Notice{Event: string(ev.Type), OperationID: obj.Metadata[MetadataKey]}
	if obj.Object == "payment_intent" {
		n.ProviderID = obj.ID
	} else {
		n.ProviderID = idOf(obj.PaymentIntent)
	}
	return n, nil
}

// idOf reads an expandable field: an id, or an object with one.
func idOf(raw json.RawMessage) string {
	var id string
	if json.Unmarshal(raw, &id) == nil {
		return id
	}
	var o struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(raw, &o)
	return o.ID
}
