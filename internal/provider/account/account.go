// Package account is the acquirer accounts operators manage
// (docs/design/decisions.md section 16; docs/providers.md): a name, a kind
// (the adapter that talks to it), a base URL and credentials sealed with the
// master key. Registry turns the stored accounts into providers that every
// process sees within seconds of a change. The package knows no acquirer:
// each kind is a Kind value the composition root registers, so the next
// acquirer adds a Kind and changes nothing here.
package account

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/paygate/paygate/internal/fault"
	"github.com/paygate/paygate/internal/merchant"
	"github.com/paygate/paygate/internal/provider"
)

// Status of an account: a disabled account takes no new payment, but what
// it already holds (captures, refunds, saved cards) still goes to it.
const (
	Enabled  = "enabled"
	Disabled = "disabled"
)

// Builtin is the name of the built-in sandbox account (sandbox
// environment only); no stored account may take it.
const Builtin = "sandbox"

// Account is a stored acquirer account. CredentialsSealed is opened only
// by the Registry, on its way to the adapter.
type Account struct {
	Name              string
	Kind              string
	BaseURL           string
	Status            string
	CredentialsSealed []byte
	CreatedAt         time.Time
	UpdatedAt         time.Time
}

// Credentials are an account's secrets. They are sealed with the master
// key and never printed: String and LogValue hide them.
type Credentials struct {
	SecretKey     string `json:"secret_key,omitempty"`     // Stripe: sk_… or rk_…
	WebhookSecret string `json:"webhook_secret,omitempty"` // Stripe: whsec_…
	APIKey        string `json:"api_key,omitempty"`        // a standalone sandbox acquirer
}

func (Credentials) String() string                 { return "[credentials]" }
func (Credentials) GoString() string               { return "[credentials]" }
func (Credentials) LogValue() slog.Value           { return slog.StringValue("[credentials]") }
func (c Credentials) MarshalText() ([]byte, error) { return []byte("[credentials]"), nil }

// seal and open go through JSON of a plain copy: Credentials' own
// MarshalText hides them from every other encoder.
type sealed struct {
	SecretKey     string `json:"secret_key,omitempty"`
	WebhookSecret string `json:"webhook_secret,omitempty"`
	APIKey        string `json:"api_key,omitempty"`
}

// AAD binds an account's sealed credentials to its name.
func AAD(name string) []byte { return []byte("provider_account:" + name) }

// Sealer seals and opens with the master key.
type Sealer interface {
	Seal(plaintext, aad []byte) ([]byte, error)
	Open(sealed, aad []byte) ([]byte, error)
}

// Seal seals c for the account name.
func Seal(s Sealer, name string, c Credentials) ([]byte, error) {
	b, err := json.Marshal(sealed(c))
	if err != nil {
		return nil, err
	}
	return s.Seal(b, AAD(name))
}

// Open opens an account's credentials.
func Open(s Sealer, a Account) (Credentials, error) {
	b, err := s.Open(a.CredentialsSealed, AAD(a.Name))
	if err != nil {
		return Credentials{}, fmt.Errorf("provider account %s: open its credentials: %w", a.Name, err)
	}
	var c sealed
	if err := json.Unmarshal(b, &c); err != nil {
		return Credentials{}, fmt.Errorf("provider account %s: its credentials are unreadable", a.Name)
	}
	return Credentials(c), nil
}

// Kind is an adapter Paygate can put behind accounts: how to check an
// account's settings for an environment and how to build its provider.
type Kind struct {
	// Name is the kind's name (`--kind`).
	Name string
	// Check refuses what the environment does not allow (production:
	// no test keys, no plain http; sandbox: no live keys) and what the kind
	// needs but lacks. Its message names no secret.
	Check func(environment, baseURL string, c Credentials) error
	// New builds the account's provider; name is the account's name, the
	// name its channels use. client carries Paygate's call timeout.
	New func(name, baseURL string, c Credentials, client *http.Client) (provider.Provider, error)
	// Currency refuses a currency the acquirer cannot represent exactly
	// (checked at `channels create`); nil accepts every currency.
	Currency func(code string) error
	// Origins are the origins of the acquirer's payer pages (3DS, hosted
	// checkout) for an account at baseURL.
	Origins func(baseURL string) []string
}

// Kinds are the kinds a process knows, by name.
type Kinds map[string]Kind

// Names lists the kinds, sorted.
func (k Kinds) Names() []string {
	out := make([]string, 0, len(k))
	for n := range k {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// Store is what accounts need of the database.
type Store interface {
	CreateProviderAccount(ctx context.Context, a Account) error
	ListProviderAccounts(ctx context.Context) ([]Account, error)
	FindProviderAccount(ctx context.Context, name string) (Account, error)
	SetProviderAccountStatus(ctx context.Context, name, status string, at time.Time) error
}

// Service adds, lists and disables accounts.
type Service struct {
	store       Store
	sealer      Sealer
	kinds       Kinds
	environment string
	now         func() time.Time
	errNotFound error
	errDup      error
}

// NewService returns the accounts' service. errNotFound and errDuplicate
// are the store's "no such row" and "a row with this key exists".
func NewService(st Store, sealer Sealer, kinds Kinds, environment string, now func() time.Time, errNotFound, errDuplicate error) *Service {
	return &Service{store: st, sealer: sealer, kinds: kinds, environment: environment, now: now,
		errNotFound: errNotFound, errDup: errDuplicate}
}

// NewAccount is what `paygate providers add` asks for.
type NewAccount struct {
	Name, Kind, BaseURL string
	Credentials         Credentials
}

var nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,39}$`)

// Add checks and stores an account: every refusal is a fault.Error of
// validation_error whose message names the flag and no secret, and stores
// nothing.
func (s *Service) Add(ctx context.Context, in NewAccount) (Account, error) {
	if !nameRE.MatchString(in.Name) {
		return Account{}, invalid("--name must be 1 to 40 characters of a-z, 0-9 and -, starting with a letter or a digit")
	}
	if in.Name == Builtin {
		return Account{}, invalid("--name sandbox is the built-in sandbox account's; choose another name")
	}
	k, ok := s.kinds[in.Kind]
	if !ok {
		return Account{}, invalid(fmt.Sprintf("--kind must be one of %s", strings.Join(s.kinds.Names(), ", ")))
	}
	if in.BaseURL != "" {
		u, err := url.Parse(in.BaseURL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
			return Account{}, invalid("--base-url must be an http or https URL with a host and no query")
		}
		in.BaseURL = strings.TrimRight(in.BaseURL, "/")
	}
	if err := k.Check(s.environment, in.BaseURL, in.Credentials); err != nil {
		return Account{}, invalid(err.Error())
	}
	if _, err := k.New(in.Name, in.BaseURL, in.Credentials, http.DefaultClient); err != nil {
		return Account{}, invalid(err.Error())
	}
	sealedCreds, err := Seal(s.sealer, in.Name, in.Credentials)
	if err != nil {
		return Account{}, err
	}
	now := s.now().UTC()
	a := Account{Name: in.Name, Kind: in.Kind, BaseURL: in.BaseURL, Status: Enabled, CredentialsSealed: sealedCreds,
		CreatedAt: now, UpdatedAt: now}
	if err := s.store.CreateProviderAccount(ctx, a); err != nil {
		if errors.Is(err, s.errDup) {
			return Account{}, invalid(fmt.Sprintf("a provider account named %s exists already", in.Name))
		}
		return Account{}, err
	}
	return a, nil
}

// List lists the stored accounts by name.
func (s *Service) List(ctx context.Context) ([]Account, error) {
	return s.store.ListProviderAccounts(ctx)
}

// Find finds a stored account; the built-in sandbox is not stored.
func (s *Service) Find(ctx context.Context, name string) (Account, error) {
	a, err := s.store.FindProviderAccount(ctx, name)
	if errors.Is(err, s.errNotFound) {
		return Account{}, fault.New(fault.NotFound, fmt.Sprintf("no provider account named %s (paygate providers list)", name))
	}
	return a, err
}

// Enable routes new payments to an account again; enabling twice is
// fine.
func (s *Service) Enable(ctx context.Context, name string) error {
	if _, err := s.Find(ctx, name); err != nil {
		return err
	}
	return s.store.SetProviderAccountStatus(ctx, name, Enabled, s.now().UTC())
}

// Disable stops routing new payments to an account; disabling twice is
// fine.
func (s *Service) Disable(ctx context.Context, name string) error {
	if name == Builtin {
		return invalid("the built-in sandbox account cannot be disabled; unassign its channels instead")
	}
	if _, err := s.Find(ctx, name); err != nil {
		return err
	}
	return s.store.SetProviderAccountStatus(ctx, name, Disabled, s.now().UTC())
}

func invalid(msg string) error { return fault.New(fault.ValidationError, msg) }

// methodNeeds is the capability a channel's payment method needs of its
// profile.
var methodNeeds = map[string][]provider.Capability{
	"card":        {provider.Charge},
	"apple_pay":   {provider.WalletToken, provider.WalletDirect},
	"google_pay":  {provider.WalletToken, provider.WalletDirect},
	"samsung_pay": {provider.WalletToken, provider.WalletDirect},
	"mobile":      {provider.Mobile},
}

// CheckChannel implements merchant.ChannelChecker: the channel's account
// exists (the built-in sandbox only in the sandbox environment), can
// represent its currencies exactly, and its profile has what its methods
// (any one of a wallet's modes) and checkout mode need.
func (s *Service) CheckChannel(ctx context.Context, c merchant.Channel) error {
	var (
		k     Kind
		creds Credentials
		base  string
	)
	if c.Provider == Builtin {
		if s.environment != merchant.Sandbox {
			return invalid("the built-in sandbox account exists only in the sandbox environment")
		}
		var ok bool
		if k, ok = s.kinds[Builtin]; !ok {
			return invalid("this Paygate has no sandbox kind")
		}
	} else {
		a, err := s.Find(ctx, c.Provider)
		if err != nil {
			return err
		}
		if a.Status != Enabled {
			return invalid(fmt.Sprintf("provider account %s is disabled", a.Name))
		}
		var ok bool
		if k, ok = s.kinds[a.Kind]; !ok {
			return fmt.Errorf("provider account %s has kind %s, which this Paygate does not know", a.Name, a.Kind)
		}
		if creds, err = Open(s.sealer, a); err != nil {
			return err
		}
		base = a.BaseURL
	}
	for _, cur := range c.Currencies {
		if k.Currency == nil {
			break
		}
		if err := k.Currency(cur); err != nil {
			return invalid("--currencies: " + err.Error())
		}
	}
	p, err := k.New(c.Provider, base, creds, http.DefaultClient)
	if err != nil {
		return err
	}
	caps, err := p.Capabilities(c.Profile)
	if err != nil {
		return invalid(fmt.Sprintf("provider %s has no profile %q", c.Provider, c.Profile))
	}
	for _, m := range c.PaymentMethods {
		if need := methodNeeds[m]; !slices.ContainsFunc(need, caps.Has) {
			return invalid(fmt.Sprintf("--methods: provider %s cannot take %s payments (it needs %s)", c.Provider, m, need[0]))
		}
	}
	if c.CheckoutMode == merchant.CheckoutProviderRedirect && !caps.Has(provider.HostedPage) {
		return invalid(fmt.Sprintf("--checkout-mode provider_redirect: provider %s has no hosted payment page", c.Provider))
	}
	return nil
}
