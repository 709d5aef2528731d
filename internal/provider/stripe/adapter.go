// Package stripe is Paygate's adapter for Stripe (docs/providers/stripe.md;
// docs/design/decisions.md section 16), on Stripe's official Go SDK. It
// speaks the seam of package provider only: no domain package knows it
// exists. It declares what it can do (Capabilities), refuses everything
// else before anything is sent, and makes every POST idempotent with a key
// derived from Paygate's operation id, so that an operation sent twice is
// carried out once.
package stripe

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	sdk "github.com/stripe/stripe-go/v85"

	"github.com/paygate/paygate/internal/merchant"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/account"
)

// DefaultBaseURL is Stripe's API.
const DefaultBaseURL = "https://api.stripe.com"

// APIVersion is the Stripe API version every request names: the one the
// pinned SDK was generated for.
const APIVersion = sdk.APIVersion

// MetadataKey is the PaymentIntent's (and Refund's, and Checkout
// Session's) metadata key that holds Paygate's operation id: how an
// operation whose answer was lost is found again.
const MetadataKey = "paygate_operation_id"

// captureKey is the PaymentIntent's metadata key that holds the
// operation id of the capture that captured it.
const captureKey = "paygate_capture_operation_id"

// payerKey is a Customer's metadata key that holds the opaque payer id
// (provider.PayRequest.Payer).
const payerKey = "paygate_payer"

// capabilities are what every Stripe account can do through Paygate.
// Lookup (card verification by a code), debit (payouts), mobile payments,
// BINs and one-time codes are not declared: 422 capability_not_supported
// before anything is sent.
var capabilities = provider.Capabilities{
	provider.Charge, provider.Authorize, provider.Capture, provider.Cancel, provider.Refund,
	provider.ThreeDS, provider.SavedCards, provider.HostedPage, provider.WalletToken,
}

// Adapter is a provider.Provider for one Stripe account.
type Adapter struct {
	name          string
	api           *sdk.Client
	webhookSecret string
}

var (
	_ provider.Provider    = (*Adapter)(nil)
	_ provider.Payments    = (*Adapter)(nil)
	_ provider.HostedPages = (*Adapter)(nil)
)

// New returns the adapter of the account name at baseURL ("" is Stripe's
// own), with its secret key. The SDK never retries by itself: Paygate's
// operation engine does, under the same Idempotency-Key, and client's
// timeout decides when an answer counts as lost.
func New(name, baseURL, secretKey string, client *http.Client) *Adapter {
	if baseURL == "" {
		baseURL = DefaultBaseURL
	}
	hc := &http.Client{}
	if client != nil {
		*hc = *client
	}
	base := hc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	hc.Transport = transport{base}
	backend := sdk.GetBackendWithConfig(sdk.APIBackend, &sdk.BackendConfig{
		HTTPClient: hc, URL: sdk.String(strings.TrimRight(baseURL, "/")), MaxNetworkRetries: sdk.Int64(0),
		LeveledLogger: &sdk.LeveledLogger{Level: sdk.LevelNull}, EnableTelemetry: sdk.Bool(false),
	})
	api := sdk.NewClient(secretKey, sdk.WithBackends(&sdk.Backends{API: backend, Connect: backend, Uploads: backend, MeterEvents: backend}))
	return &Adapter{name: name, api: api}
}

// WithWebhookSecret sets the secret Stripe signs the account's
// notifications with (whsec_…).
func (a *Adapter) WithWebhookSecret(secret string) *Adapter {
	a.webhookSecret = secret
	return a
}

// Name implements provider.Provider: the account's name.
func (a *Adapter) Name() string { return a.name }

// Capabilities implements provider.Provider: one profile, "default".
func (a *Adapter) Capabilities(profile string) (provider.Capabilities, error) {
	if profile != "" && profile != "default" {
		return nil, provider.Errorf(provider.Invalid, "a Stripe account has one profile, default, not %q", profile)
	}
	return slices.Clone(capabilities), nil
}

func (a *Adapter) need(profile string, caps ...provider.Capability) error {
	have, err := a.Capabilities(profile)
	if err != nil {
		return err
	}
	for _, c := range caps {
		if c != "" && !have.Has(c) {
			return provider.Errorf(provider.Unsupported, "Stripe accounts lack %s", c)
		}
	}
	return nil
}

// Kind puts Stripe accounts behind provider accounts
// (docs/design/decisions.md section 16): production refuses test keys
// and a plain-http base URL (card data reaches Stripe only over HTTPS),
// the sandbox environment refuses live keys.
func Kind() account.Kind {
	return account.Kind{
		Name:  "stripe",
		Check: check,
		New: func(name, baseURL string, c account.Credentials, client *http.Client) (provider.Provider, error) {
			return New(name, baseURL, c.SecretKey, client).WithWebhookSecret(c.WebhookSecret), nil
		},
		Currency: Currency,
		Origins: func(baseURL string) []string {
			out := []string{"https://hooks.stripe.com", "https://checkout.stripe.com"}
			if baseURL != "" && baseURL != DefaultBaseURL {
				out = append(out, baseURL) // a stand-in for Stripe serves its pages itself
			}
			return out
		},
	}
}

func check(environment, baseURL string, c account.Credentials) error {
	key := c.SecretKey
	switch {
	case key == "":
		return errors.New("--secret-key-file is required: a file holding the account's secret key (sk_…) or restricted key (rk_…)")
	case !strings.HasPrefix(key, "sk_") && !strings.HasPrefix(key, "rk_"):
		return errors.New("--secret-key-file must hold a secret key (sk_…) or a restricted key (rk_…), not a publishable key")
	}
	live := strings.HasPrefix(key, "sk_live_") || strings.HasPrefix(key, "rk_live_")
	test := strings.HasPrefix(key, "sk_test_") || strings.HasPrefix(key, "rk_test_")
	if environment == merchant.Production && !live {
		return errors.New("the production environment refuses Stripe test keys: use a live key (sk_live_… or rk_live_…)")
	}
	if environment != merchant.Production && live {
		return errors.New("the sandbox environment refuses Stripe live keys: use a test key (sk_test_… or rk_test_…)")
	}
	if environment != merchant.Production && !test {
		return errors.New("--secret-key-file does not hold a Stripe test key (sk_test_… or rk_test_…)")
	}
	if c.WebhookSecret != "" && !strings.HasPrefix(c.WebhookSecret, "whsec_") {
		return errors.New("--webhook-secret-file must hold the webhook endpoint's signing secret (whsec_…)")
	}
	if baseURL != "" {
		u, err := url.Parse(baseURL)
		if err != nil {
			return errors.New("--base-url is not a URL")
		}
		if environment == merchant.Production && u.Scheme != "https" {
			return errors.New("--base-url must be https in production: card data reaches Stripe only over HTTPS")
		}
	}
	return nil
}

// unrepresentable are currencies whose Paygate amounts Stripe cannot take
// as they are: three-decimal currencies (Stripe wants their amounts in
// multiples of 10) and the zero-decimal ones Stripe counts in hundredths.
var unrepresentable = map[string]string{
	"BHD": "three-decimal", "JOD": "three-decimal", "KWD": "three-decimal", "OMR": "three-decimal",
	"TND": "three-decimal", "ISK": "counted in hundredths by Stripe", "UGX": "counted in hundredths by Stripe",
}

// Currency refuses a currency Paygate cannot send to Stripe exactly.
func Currency(code string) error {
	if why, ok := unrepresentable[strings.ToUpper(code)]; ok {
		return fmt.Errorf("Stripe cannot take %s amounts exactly as Paygate states them (%s)", strings.ToUpper(code), why)
	}
	return nil
}

// idem is the Idempotency-Key of an operation's POST: the operation id for
// the one that moves money, suffixed for the others (docs/design/decisions.md
// section 16).
func idem(opID, suffix string) *string {
	if suffix == "" {
		return sdk.String(opID)
	}
	return sdk.String(opID + "-" + suffix)
}

// ctxParams is the request context of a call.
func params(ctx context.Context, opID, suffix string) sdk.Params {
	p := sdk.Params{Context: ctx}
	if opID != "" {
		p.IdempotencyKey = idem(opID, suffix)
	}
	return p
}
