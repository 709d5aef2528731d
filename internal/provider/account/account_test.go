package account_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/fault"
	"github.com/paygate/paygate/internal/merchant"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/account"
	"github.com/paygate/paygate/internal/provider/sandbox"
	"github.com/paygate/paygate/internal/store"
	"github.com/paygate/paygate/internal/store/storetest"
	"github.com/paygate/paygate/internal/vault"
)

// fake is a kind whose provider declares caps, refuses "KWD" and counts
// how often it was built.
type fake struct {
	mu    sync.Mutex
	built int
	caps  provider.Capabilities
}

type fakeProvider struct {
	name string
	caps provider.Capabilities
}

func (p fakeProvider) Name() string { return p.name }
func (p fakeProvider) Capabilities(profile string) (provider.Capabilities, error) {
	if profile != "default" {
		return nil, provider.Errorf(provider.Invalid, "no profile")
	}
	return p.caps, nil
}

const secret = "sk_test_very_secret_4242"

func (f *fake) kind() account.Kind {
	return account.Kind{
		Name: "fake",
		Check: func(env, _ string, c account.Credentials) error {
			if c.SecretKey == "" {
				return errors.New("--secret-key-file is required")
			}
			if env == merchant.Production && c.SecretKey == secret {
				return errors.New("the production environment refuses test keys")
			}
			return nil
		},
		New: func(name, _ string, _ account.Credentials, _ *http.Client) (provider.Provider, error) {
			f.mu.Lock()
			f.built++
			f.mu.Unlock()
			return fakeProvider{name, f.caps}, nil
		},
		Currency: func(code string) error {
			if code == "KWD" {
				return errors.New("KWD cannot be represented exactly")
			}
			return nil
		},
	}
}

type rig struct {
	store *store.Store
	svc   *account.Service
	ms    *merchant.Service
	kr    *vault.Keyring
	fake  *fake
	kinds account.Kinds
	now   time.Time
}

func newRig(t *testing.T, db storetest.Database, env string) *rig {
	s := storetest.Open(t, db)
	r := &rig{store: s, kr: vault.New(), fake: &fake{caps: provider.Capabilities{provider.Charge, provider.Refund}},
		now: time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)}
	r.kinds = account.Kinds{"fake": r.fake.kind(), "sandbox": sandbox.Kind()}
	clock := func() time.Time { return r.now }
	r.svc = account.NewService(s, r.kr, r.kinds, env, clock, store.ErrNotFound, store.ErrDuplicate)
	r.ms = &merchant.Service{Store: s, Sealer: r.kr, Now: clock, NewID: uuid.NewString, Environment: env,
		ErrDuplicate: store.ErrDuplicate}
	return r
}

func validation(t *testing.T, err error, contains string) {
	t.Helper()
	var f *fault.Error
	require.ErrorAs(t, err, &f)
	require.Equal(t, fault.ValidationError, f.Code)
	require.Contains(t, f.Message, contains)
	require.NotContains(t, f.Message, secret)
}

func TestAccounts(t *testing.T) {
	t.Parallel()
	for _, db := range storetest.Databases(t) {
		t.Run(db.Name, func(t *testing.T) {
			t.Parallel()
			t.Run("refusals store nothing", func(t *testing.T) { testRefusals(t, newRig(t, db, merchant.Sandbox)) })
			t.Run("production", func(t *testing.T) { testProduction(t, newRig(t, db, merchant.Production)) })
			t.Run("add, list, disable", func(t *testing.T) { testLifecycle(t, newRig(t, db, merchant.Sandbox)) })
			t.Run("registry", func(t *testing.T) { testRegistry(t, newRig(t, db, merchant.Sandbox)) })
			t.Run("channels", func(t *testing.T) { testChannels(t, newRig(t, db, merchant.Sandbox)) })
			t.Run("routing order", func(t *testing.T) { testPlace(t, newRig(t, db, merchant.Sandbox)) })
		})
	}
}

func testRefusals(t *testing.T, r *rig) {
	ctx := context.Background()
	creds := account.Credentials{SecretKey: secret}
	for _, c := range []struct {
		name string
		in   account.NewAccount
		want string
	}{
		{"name with capitals", account.NewAccount{Name: "Stripe", Kind: "fake", Credentials: creds}, "--name"},
		{"name too long", account.NewAccount{Name: "a123456789012345678901234567890123456789x", Kind: "fake", Credentials: creds}, "--name"},
		{"the built-in name", account.NewAccount{Name: "sandbox", Kind: "fake", Credentials: creds}, "built-in"},
		{"unknown kind", account.NewAccount{Name: "acq", Kind: "adyen", Credentials: creds}, "--kind must be one of fake, sandbox"},
		{"no secret", account.NewAccount{Name: "acq", Kind: "fake"}, "--secret-key-file"},
		{"bad base URL", account.NewAccount{Name: "acq", Kind: "fake", BaseURL: "ftp://x", Credentials: creds}, "--base-url"},
		{"base URL with a query", account.NewAccount{Name: "acq", Kind: "fake", BaseURL: "https://x/?k=" + secret, Credentials: creds}, "--base-url"},
		{"sandbox without its URL", account.NewAccount{Name: "acq", Kind: "sandbox", Credentials: account.Credentials{APIKey: "k"}}, "--url"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := r.svc.Add(ctx, c.in)
			validation(t, err, c.want)
		})
	}
	list, err := r.svc.List(ctx)
	require.NoError(t, err)
	require.Empty(t, list)
}

func testProduction(t *testing.T, r *rig) {
	ctx := context.Background()
	_, err := r.svc.Add(ctx, account.NewAccount{Name: "acq", Kind: "fake", Credentials: account.Credentials{SecretKey: secret}})
	validation(t, err, "refuses test keys")
	_, err = r.svc.Add(ctx, account.NewAccount{Name: "sb", Kind: "sandbox", BaseURL: "http://127.0.0.1:1",
		Credentials: account.Credentials{APIKey: "k"}})
	validation(t, err, "refuses sandbox accounts")
	err = r.svc.CheckChannel(ctx, merchant.Channel{Alias: "x", Provider: account.Builtin, Profile: "default",
		PaymentMethods: []string{"card"}, Currencies: []string{"USD"}, CheckoutMode: merchant.CheckoutPlatform})
	validation(t, err, "only in the sandbox environment")
	list, err := r.svc.List(ctx)
	require.NoError(t, err)
	require.Empty(t, list)
}

func testLifecycle(t *testing.T, r *rig) {
	ctx := context.Background()
	a, err := r.svc.Add(ctx, account.NewAccount{Name: "acq-1", Kind: "fake", BaseURL: "https://api.example/",
		Credentials: account.Credentials{SecretKey: secret, WebhookSecret: "whsec_x"}})
	require.NoError(t, err)
	require.Equal(t, "https://api.example", a.BaseURL, "the trailing slash goes")
	_, err = r.svc.Add(ctx, account.NewAccount{Name: "acq-1", Kind: "fake", Credentials: account.Credentials{SecretKey: "other"}})
	validation(t, err, "exists already")

	list, err := r.svc.List(ctx)
	require.NoError(t, err)
	require.Len(t, list, 1)
	got := list[0]
	require.Equal(t, account.Enabled, got.Status)
	require.False(t, bytes.Contains(got.CredentialsSealed, []byte(secret)), "the secret is sealed")
	creds, err := account.Open(r.kr, got)
	require.NoError(t, err)
	require.Equal(t, secret, creds.SecretKey)
	require.Equal(t, "whsec_x", creds.WebhookSecret)
	require.NotContains(t, creds.String(), secret)
	// Sealed for its own name: moved to another row, it does not open.
	got.Name = "acq-2"
	_, err = account.Open(r.kr, got)
	require.Error(t, err)

	r.now = r.now.Add(time.Minute)
	require.NoError(t, r.svc.Disable(ctx, "acq-1"))
	require.NoError(t, r.svc.Disable(ctx, "acq-1"), "disabling twice is fine")
	list, err = r.svc.List(ctx)
	require.NoError(t, err)
	require.Equal(t, account.Disabled, list[0].Status)
	require.Equal(t, r.now, list[0].UpdatedAt)
	var f *fault.Error
	require.ErrorAs(t, r.svc.Disable(ctx, "nope"), &f)
	require.Equal(t, fault.NotFound, f.Code)
	validation(t, r.svc.Disable(ctx, account.Builtin), "built-in")
}

func testRegistry(t *testing.T, r *rig) {
	ctx := context.Background()
	builtin := sandbox.NewAdapter("http://127.0.0.1:1", "k", nil)
	reg := account.NewRegistry(provider.Registry{account.Builtin: builtin}, r.store, r.kr, r.kinds, http.DefaultClient,
		nil, slog.New(slog.DiscardHandler))
	p, err := reg.Provider(account.Builtin)
	require.NoError(t, err)
	require.Same(t, builtin, p)
	_, err = reg.Provider("acq")
	require.Error(t, err, "no account yet")

	_, err = r.svc.Add(ctx, account.NewAccount{Name: "acq", Kind: "fake", Credentials: account.Credentials{SecretKey: secret}})
	require.NoError(t, err)
	_, err = reg.Provider("acq")
	require.Error(t, err, "seen only once read again")
	require.NoError(t, reg.Reload(ctx))
	p, err = reg.Provider("acq")
	require.NoError(t, err)
	require.Equal(t, "acq", p.Name())
	require.NoError(t, reg.Reload(ctx))
	require.Equal(t, 2, r.fake.built, "one build to check it at add, one in the registry: an unchanged account keeps its adapter")

	// A disabled account still serves what it holds, but its channels
	// take no new payment.
	c, err := r.ms.CreateChannel(ctx, merchant.Channel{Alias: "acq-card", Provider: "acq", PaymentMethods: []string{"card"},
		Currencies: []string{"usd"}}, r.svc)
	require.NoError(t, err)
	require.Equal(t, []string{"USD"}, c.Currencies)
	k := merchant.Key{ID: uuid.NewString(), AccessKey: "ak_sandbox_x", Name: "x", Environment: "sandbox",
		SecretSealed: []byte{1}, CreatedAt: r.now}
	require.NoError(t, r.store.CreateKey(ctx, k))
	require.NoError(t, r.store.AssignChannel(ctx, k.ID, c.ID, r.now))
	routable, err := r.store.ChannelsForKey(ctx, k.ID)
	require.NoError(t, err)
	require.Len(t, routable, 1)

	r.now = r.now.Add(time.Second)
	require.NoError(t, r.svc.Disable(ctx, "acq"))
	require.NoError(t, reg.Reload(ctx))
	p, err = reg.Provider("acq")
	require.NoError(t, err, "what a disabled account holds still goes to it")
	require.Equal(t, "acq", p.Name())
	routable, err = r.store.ChannelsForKey(ctx, k.ID)
	require.NoError(t, err)
	require.Empty(t, routable, "a disabled account's channels take no new payment")
	assigned, err := r.store.AssignedChannels(ctx, k.ID)
	require.NoError(t, err)
	require.Len(t, assigned, 1)
	require.Equal(t, account.Disabled, assigned[0].AccountStatus)
}

func testChannels(t *testing.T, r *rig) {
	ctx := context.Background()
	_, err := r.svc.Add(ctx, account.NewAccount{Name: "acq", Kind: "fake", Credentials: account.Credentials{SecretKey: secret}})
	require.NoError(t, err)
	ok := merchant.Channel{Alias: "acq-card", Provider: "acq", PaymentMethods: []string{"card"}, Currencies: []string{"USD"}}
	for _, c := range []struct {
		name string
		edit func(c *merchant.Channel)
		want string
	}{
		{"bad alias", func(c *merchant.Channel) { c.Alias = "Card!" }, "--alias"},
		{"no account", func(c *merchant.Channel) { c.Provider = "nope" }, "no provider account named nope"},
		{"unknown method", func(c *merchant.Channel) { c.PaymentMethods = []string{"cash"} }, "--methods"},
		{"method the account lacks", func(c *merchant.Channel) { c.PaymentMethods = []string{"card", "mobile"} }, "cannot take mobile"},
		{"wallet without a wallet mode", func(c *merchant.Channel) { c.PaymentMethods = []string{"apple_pay"} }, "cannot take apple_pay"},
		{"unknown currency", func(c *merchant.Channel) { c.Currencies = []string{"ABC"} }, "ISO 4217"},
		{"currency the kind cannot represent", func(c *merchant.Channel) { c.Currencies = []string{"USD", "KWD"} }, "KWD cannot"},
		{"hosted page lacking", func(c *merchant.Channel) { c.CheckoutMode = merchant.CheckoutProviderRedirect }, "no hosted payment page"},
		{"bad mode", func(c *merchant.Channel) { c.CheckoutMode = "iframe" }, "--checkout-mode"},
		{"unknown profile", func(c *merchant.Channel) { c.Profile = "gold" }, "no profile"},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := ok
			in.PaymentMethods, in.Currencies = append([]string(nil), ok.PaymentMethods...), append([]string(nil), ok.Currencies...)
			c.edit(&in)
			_, err := r.ms.CreateChannel(ctx, in, r.svc)
			var f *fault.Error
			require.ErrorAs(t, err, &f)
			require.Contains(t, f.Message, c.want)
		})
	}
	all, err := r.store.ListChannels(ctx)
	require.NoError(t, err)
	require.Empty(t, all, "a refused channel is not stored")

	c, err := r.ms.CreateChannel(ctx, ok, r.svc)
	require.NoError(t, err)
	require.Equal(t, "default", c.Profile)
	require.Equal(t, merchant.CheckoutPlatform, c.CheckoutMode)
	_, err = r.ms.CreateChannel(ctx, ok, r.svc)
	validation(t, err, "exists already")

	// The built-in sandbox can take a channel in the sandbox environment.
	_, err = r.ms.CreateChannel(ctx, merchant.Channel{Alias: "sb-redirect", Provider: account.Builtin,
		PaymentMethods: []string{"card"}, Currencies: []string{"KWD"}, CheckoutMode: merchant.CheckoutProviderRedirect}, r.svc)
	require.NoError(t, err)
}

func testPlace(t *testing.T, r *rig) {
	ctx := context.Background()
	k := merchant.Key{ID: uuid.NewString(), AccessKey: "ak_sandbox_p", Name: "p", Environment: "sandbox",
		SecretSealed: []byte{1}, CreatedAt: r.now}
	require.NoError(t, r.store.CreateKey(ctx, k))
	for _, a := range []string{"a", "b", "c"} {
		_, err := r.ms.CreateChannel(ctx, merchant.Channel{Alias: a, Provider: account.Builtin, PaymentMethods: []string{"card"},
			Currencies: []string{"USD"}}, r.svc)
		require.NoError(t, err)
		require.NoError(t, r.ms.Assign(ctx, k.AccessKey, a))
	}
	order := func() []string {
		cs, err := r.store.ChannelsForKey(ctx, k.ID)
		require.NoError(t, err)
		var out []string
		for _, c := range cs {
			out = append(out, c.Alias)
		}
		return out
	}
	require.Equal(t, []string{"a", "b", "c"}, order(), "assigned last, one after the other")
	require.NoError(t, r.ms.Place(ctx, k.AccessKey, "c", merchant.Route{Position: 1}))
	require.Equal(t, []string{"a", "c", "b"}, order(), "c shares position 1 with a (a assigned first)")
	require.NoError(t, r.ms.Place(ctx, k.AccessKey, "a", merchant.Route{Position: 5}))
	require.Equal(t, []string{"c", "b", "a"}, order())
	require.NoError(t, r.ms.Assign(ctx, k.AccessKey, "b"), "assigning again keeps the place")
	require.Equal(t, []string{"c", "b", "a"}, order())
	var f *fault.Error
	require.ErrorAs(t, r.ms.Place(ctx, k.AccessKey, "a", merchant.Route{Position: -1}), &f)
	require.ErrorAs(t, r.ms.Place(ctx, k.AccessKey, "a", merchant.Route{Schemes: []string{"cash"}}), &f)

	// A route's conditions are stored with the assignment; position 0
	// keeps the place.
	lo, hi := int64(100), int64(5000)
	require.NoError(t, r.ms.Place(ctx, k.AccessKey, "a", merchant.Route{Weight: 3, Schemes: []string{"visa"},
		CardCountries: []string{"gb", "DE"}, MinAmount: &lo, MaxAmount: &hi}))
	require.Equal(t, []string{"c", "b", "a"}, order())
	cs, err := r.store.ChannelsForKey(ctx, k.ID)
	require.NoError(t, err)
	got := cs[2].Route
	require.Equal(t, 5, got.Position)
	require.Equal(t, 3, got.Weight)
	require.Equal(t, []string{"visa"}, got.Schemes)
	require.Equal(t, []string{"GB", "DE"}, got.CardCountries)
	require.Equal(t, lo, *got.MinAmount)
	require.Equal(t, hi, *got.MaxAmount)
	require.Equal(t, 1, cs[0].Route.Weight)
	require.Nil(t, cs[0].Route.MinAmount)
	require.Empty(t, cs[0].Route.Schemes)
}
