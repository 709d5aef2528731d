// Package merchant holds what identifies a merchant to Paygate: access keys
// (with their HMAC secrets and permissions) and the payment channels
// assigned to them. docs/design/decisions.md sections 1 and 10.
package merchant

import (
	"slices"
	"time"
)

// Environments a key (and a running Paygate) belongs to.
const (
	Sandbox    = "sandbox"
	Production = "production"
)

// Key is an access key. The secret itself is never held here: the store
// keeps it sealed and Service.Secret opens it when a request is verified.
type Key struct {
	ID             string // internal uuid, owner of every resource the key creates
	AccessKey      string // public id sent as X-Access-Key: ak_sandbox_… / ak_live_…
	Name           string
	Environment    string
	SecretSealed   []byte
	DirectCardData bool // may send raw card numbers (own PCI DSS certification)
	CreatedAt      time.Time
	RevokedAt      *time.Time
	// ClockOffset is how far the key's sandbox clock runs ahead of real
	// time (docs/design/decisions.md section 14); always zero in
	// production.
	ClockOffset time.Duration
}

// Active reports whether the key may still sign requests.
func (k Key) Active() bool { return k.RevokedAt == nil }

// Checkout modes of a channel (OpenAPI schema PaymentChannel).
const (
	CheckoutPlatform         = "platform"
	CheckoutProviderRedirect = "provider_redirect"
)

// Payment methods a channel can serve.
var Methods = []string{"card", "apple_pay", "google_pay", "samsung_pay", "mobile"}

// Channel is a route to one provider with a profile of capabilities, the
// methods and currencies it serves and how its hosted checkout works.
type Channel struct {
	ID             string
	Alias          string
	Provider       string // provider name, e.g. "sandbox"
	Profile        string // the provider profile (capability set) this channel uses
	PaymentMethods []string
	Currencies     []string
	CheckoutMode   string
	// AutoAssign: every new sandbox key gets this channel
	// (docs/design/decisions.md section 10).
	AutoAssign bool
	CreatedAt  time.Time
	// Route is the channel's place in a key's routing, as the key's
	// channels (ChannelsForKey) read it; zero elsewhere.
	Route Route
}

// ServesCurrency reports whether the channel takes payments in currency.
func (c Channel) ServesCurrency(currency string) bool {
	return slices.Contains(c.Currencies, currency)
}

// Serves reports whether the channel takes method in currency.
func (c Channel) Serves(method, currency string) bool {
	return c.ServesCurrency(currency) && slices.Contains(c.PaymentMethods, method)
}

// SandboxChannels are the channels a sandbox Paygate creates on start. Only
// "sandbox" is given to new keys; the others are assigned by hand
// (`paygate channels assign`) to try the provider-hosted checkout and the
// refund-capable provider profile.
func SandboxChannels() []Channel {
	currencies := []string{"EUR", "GBP", "JPY", "KWD", "KZT", "RUB", "UAH", "USD"}
	return []Channel{
		{Alias: "sandbox", Provider: "sandbox", Profile: "default", PaymentMethods: Methods,
			Currencies: currencies, CheckoutMode: CheckoutPlatform, AutoAssign: true},
		{Alias: "sandbox-redirect", Provider: "sandbox", Profile: "default", PaymentMethods: []string{"card"},
			Currencies: currencies, CheckoutMode: CheckoutProviderRedirect},
		{Alias: "sandbox-refunds", Provider: "sandbox", Profile: "refunds", PaymentMethods: []string{"card"},
			Currencies: currencies, CheckoutMode: CheckoutPlatform},
	}
}
