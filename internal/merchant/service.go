package merchant

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/paygate/paygate/internal/fault"
	"github.com/paygate/paygate/internal/money"
)

// Sealer encrypts secrets at rest (the vault).
type Sealer interface {
	Seal(plaintext, aad []byte) ([]byte, error)
	Open(sealed, aad []byte) ([]byte, error)
}

// Store is what the merchant service needs from storage.
type Store interface {
	CreateKey(ctx context.Context, k Key) error
	FindKeyByAccessKey(ctx context.Context, accessKey string) (Key, error)
	ListKeys(ctx context.Context) ([]Key, error)
	RevokeKey(ctx context.Context, accessKey string, at time.Time) error
	ListChannels(ctx context.Context) ([]Channel, error)
	FindChannelByAlias(ctx context.Context, alias string) (Channel, error)
	ChannelsForKey(ctx context.Context, keyID string) ([]Channel, error)
	AssignChannel(ctx context.Context, keyID, channelID string, at time.Time) error
	UnassignChannel(ctx context.Context, keyID, channelID string) error
	CreateChannel(ctx context.Context, c Channel) error
	PlaceChannel(ctx context.Context, keyID, channelID string, r Route, at time.Time) error
}

// Service issues and revokes keys and assigns channels.
type Service struct {
	Store       Store
	Sealer      Sealer
	Now         func() time.Time
	NewID       func() string
	Environment string
	// ErrDuplicate is the store's "a row with this key exists".
	ErrDuplicate error
}

// NewKey describes a key to issue.
type NewKey struct {
	Name string
	// DirectCardData grants the raw card data permission
	// (docs/design/decisions.md section 10).
	DirectCardData bool
}

// IssuedKey is a new key with its secret, shown once.
type IssuedKey struct {
	Key    Key
	Secret string
}

// SecretAAD binds a sealed secret to its access key, so a sealed blob
// copied onto another key's row does not open.
func SecretAAD(accessKey string) []byte { return []byte("access_key_secret:" + accessKey) }

// Create issues a key: a public access key and a secret of 32 random bytes
// (docs/design/decisions.md section 1). In the sandbox the key gets every
// channel created with auto-assign (the sandbox's own "sandbox" channel,
// and those of `paygate channels create --auto-assign`).
func (s *Service) Create(ctx context.Context, in NewKey) (IssuedKey, error) {
	name := strings.TrimSpace(in.Name)
	if name == "" {
		return IssuedKey{}, errors.New("a key needs a name")
	}
	prefix := "ak_live_"
	if s.Environment == Sandbox {
		prefix = "ak_sandbox_"
	}
	access := prefix + randomToken(18)
	secret := "sk_" + randomToken(32)
	sealed, err := s.Sealer.Seal([]byte(secret), SecretAAD(access))
	if err != nil {
		return IssuedKey{}, fmt.Errorf("seal secret: %w", err)
	}
	k := Key{
		ID: s.NewID(), AccessKey: access, Name: name, Environment: s.Environment,
		SecretSealed: sealed, DirectCardData: in.DirectCardData, CreatedAt: s.Now().UTC(),
	}
	if err := s.Store.CreateKey(ctx, k); err != nil {
		return IssuedKey{}, err
	}
	chans, err := s.Store.ListChannels(ctx)
	if err != nil {
		return IssuedKey{}, err
	}
	for _, c := range chans {
		if c.AutoAssign {
			if err := s.Store.AssignChannel(ctx, k.ID, c.ID, s.Now()); err != nil {
				return IssuedKey{}, err
			}
		}
	}
	return IssuedKey{Key: k, Secret: secret}, nil
}

// Secret opens a key's signing secret.
func (s *Service) Secret(k Key) (string, error) {
	b, err := s.Sealer.Open(k.SecretSealed, SecretAAD(k.AccessKey))
	if err != nil {
		return "", fmt.Errorf("open secret of %s: %w", k.AccessKey, err)
	}
	return string(b), nil
}

// Revoke stops a key from signing; its resources stay.
func (s *Service) Revoke(ctx context.Context, accessKey string) error {
	return s.Store.RevokeKey(ctx, accessKey, s.Now().UTC())
}

// Channels are the key's channels, in assignment order
// (listPaymentChannels (GET /payment-channels)).
func (s *Service) Channels(ctx context.Context, keyID string) ([]Channel, error) {
	return s.Store.ChannelsForKey(ctx, keyID)
}

// Assign gives a key a channel; channels are tried in assignment order.
func (s *Service) Assign(ctx context.Context, accessKey, alias string) error {
	k, c, err := s.keyAndChannel(ctx, accessKey, alias)
	if err != nil {
		return err
	}
	return s.Store.AssignChannel(ctx, k.ID, c.ID, s.Now().UTC())
}

// Place assigns a channel to a key with a route, or changes its route
// (`paygate channels assign` with --position, --weight or conditions;
// docs/design/decisions.md section 17): at r.Position of the key's
// routing order (lower is tried first; channels of one position share it,
// split by weight), or, with 0, where it is (last if new).
func (s *Service) Place(ctx context.Context, accessKey, alias string, r Route) error {
	if r.Position < 0 || r.Position > 1000 {
		return fault.New(fault.ValidationError, "--position must be between 1 and 1000")
	}
	if err := r.Check(); err != nil {
		return err
	}
	k, c, err := s.keyAndChannel(ctx, accessKey, alias)
	if err != nil {
		return err
	}
	return s.Store.PlaceChannel(ctx, k.ID, c.ID, r, s.Now().UTC())
}

// Unassign takes a channel away from a key.
func (s *Service) Unassign(ctx context.Context, accessKey, alias string) error {
	k, c, err := s.keyAndChannel(ctx, accessKey, alias)
	if err != nil {
		return err
	}
	return s.Store.UnassignChannel(ctx, k.ID, c.ID)
}

func (s *Service) keyAndChannel(ctx context.Context, accessKey, alias string) (Key, Channel, error) {
	k, err := s.Store.FindKeyByAccessKey(ctx, accessKey)
	if err != nil {
		return Key{}, Channel{}, fmt.Errorf("key %s: %w", accessKey, err)
	}
	c, err := s.Store.FindChannelByAlias(ctx, alias)
	if err != nil {
		return Key{}, Channel{}, fmt.Errorf("channel %s: %w", alias, err)
	}
	return k, c, nil
}

// randomToken returns n random bytes as unpadded URL-safe base64.
func randomToken(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// ChannelChecker checks a new channel against its provider account: the
// account exists, can represent its currencies exactly and has the
// capabilities its methods and checkout mode need
// (docs/design/decisions.md section 16).
type ChannelChecker interface {
	CheckChannel(ctx context.Context, c Channel) error
}

var aliasRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,39}$`)

// CreateChannel checks and stores a channel (`paygate channels create`).
// Every refusal is a validation_error naming the flag, and stores nothing.
func (s *Service) CreateChannel(ctx context.Context, c Channel, check ChannelChecker) (Channel, error) {
	bad := func(msg string) (Channel, error) { return Channel{}, fault.New(fault.ValidationError, msg) }
	if !aliasRE.MatchString(c.Alias) {
		return bad("--alias must be 1 to 40 characters of a-z, 0-9 and -, starting with a letter or a digit")
	}
	if c.Provider == "" {
		return bad("--provider is required (paygate providers list)")
	}
	if len(c.PaymentMethods) == 0 {
		return bad("--methods is required: one or more of " + strings.Join(Methods, ","))
	}
	for _, m := range c.PaymentMethods {
		if !slices.Contains(Methods, m) {
			return bad(fmt.Sprintf("--methods: %q is not one of %s", m, strings.Join(Methods, ",")))
		}
	}
	if len(c.Currencies) == 0 {
		return bad("--currencies is required, e.g. USD,EUR")
	}
	for i, cur := range c.Currencies {
		c.Currencies[i] = strings.ToUpper(cur)
		if !money.Known(c.Currencies[i]) {
			return bad(fmt.Sprintf("--currencies: %q is not an ISO 4217 currency code", cur))
		}
	}
	c.PaymentMethods, c.Currencies = dedupe(c.PaymentMethods), dedupe(c.Currencies)
	if c.CheckoutMode == "" {
		c.CheckoutMode = CheckoutPlatform
	}
	if c.CheckoutMode != CheckoutPlatform && c.CheckoutMode != CheckoutProviderRedirect {
		return bad("--checkout-mode must be platform or provider_redirect")
	}
	if c.Profile == "" {
		c.Profile = "default"
	}
	if err := check.CheckChannel(ctx, c); err != nil {
		return Channel{}, err
	}
	c.ID, c.CreatedAt = s.NewID(), s.Now().UTC()
	if err := s.Store.CreateChannel(ctx, c); err != nil {
		if errors.Is(err, s.ErrDuplicate) {
			return bad(fmt.Sprintf("a channel with alias %s exists already (paygate channels list)", c.Alias))
		}
		return Channel{}, err
	}
	return c, nil
}

func dedupe(in []string) []string {
	out := make([]string, 0, len(in))
	for _, v := range in {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}
