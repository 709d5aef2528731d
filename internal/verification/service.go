package verification

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"time"

	"github.com/riverqueue/river"

	"github.com/paygate/paygate/internal/card"
	"github.com/paygate/paygate/internal/clock"
	"github.com/paygate/paygate/internal/fault"
	"github.com/paygate/paygate/internal/lifecycle"
	"github.com/paygate/paygate/internal/merchant"
	"github.com/paygate/paygate/internal/operation"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/webhook"
)

// CardLimit is how many verifications of one card number may start in
// CardWindow, across all keys (docs/design/decisions.md section 15).
const (
	CardLimit  = 3
	CardWindow = 24 * time.Hour
)

// DefaultMaxAttempts is the provider's code limit when Service.MaxAttempts
// is unset: the bundled sandbox's (docs/design/decisions.md section 7).
const DefaultMaxAttempts = 3

// hashLabel derives the key of the card hash from the master keys.
const hashLabel = "paygate card verification card hash v1"

// Providers finds a provider by name.
type Providers interface {
	Provider(name string) (provider.Provider, error)
}

// KeyDeriver derives keys from the master keyring (vault.Keyring.DeriveKeys).
type KeyDeriver interface {
	DeriveKeys(label string) [][]byte
}

// Service is card verifications' domain: creation, verify, and the one
// save every status change goes through.
type Service struct {
	Sealer    operation.Sealer
	Now       func() time.Time
	NewID     func() string
	Providers Providers
	// Keys are the master keys: the card hash of the per-card limit is an
	// HMAC under a key derived from them, never the number itself.
	Keys KeyDeriver
	// MaxAttempts is the provider's code limit; 0: DefaultMaxAttempts.
	MaxAttempts int
	// Render is the verification as GET shows it: the object of its events
	// (docs/design/decisions.md section 6). Set by the wiring.
	Render func(v *Verification) ([]byte, error)
	// Store is what the service reads outside a transaction; ErrNotFound
	// is its "no such row", which the service answers with 404.
	Store       Store
	ErrNotFound error
}

// NewService builds card verifications' domain; every dependency is an
// argument, so that a wiring that forgets the renderer of its events, or
// the store it reads, does not compile. errNotFound is the store's "no
// such row".
func NewService(sealer operation.Sealer, now func() time.Time, newID func() string, providers Providers,
	keys KeyDeriver, st Store, errNotFound error, render func(v *Verification) ([]byte, error)) *Service {
	return &Service{Sealer: sealer, Now: now, NewID: newID, Providers: providers, Keys: keys, Store: st,
		ErrNotFound: errNotFound, Render: render}
}

// EventTx records an event in the transaction of the change it reports,
// and fans it out to webhook deliveries there (webhook.Record).
type EventTx = webhook.RecordTx

// WriteTx is what writing a verification needs.
type WriteTx interface {
	UpdateVerification(ctx context.Context, v *Verification) error
	EventTx
}

// CreateTx is what accepting a verification needs, in the request's transaction.
type CreateTx interface {
	ChannelsForKey(ctx context.Context, keyID string) ([]merchant.Channel, error)
	// LockCardChecks holds the card hashes until the transaction ends (so
	// that concurrent requests for one card count one after another) and
	// counts their checks made since.
	LockCardChecks(ctx context.Context, hashes []string, since time.Time) (n int, oldest time.Time, err error)
	RecordCardCheck(ctx context.Context, hash string, at time.Time) error
	CreateVerification(ctx context.Context, v *Verification) error
	EventTx
	operation.QueueTx
}

// VerifyTx is what accepting a code needs, in the request's transaction.
type VerifyTx interface {
	WriteTx
	operation.QueueTx
}

// Card is raw card data, in memory and sealed in an operation's secret only.
type Card struct {
	Number   string `json:"number"`
	ExpMonth int    `json:"exp_month"`
	ExpYear  int    `json:"exp_year"`
	CVV      string `json:"cvv"`
}

// New is a verification request (OpenAPI schema CreateCardVerification),
// its schema already checked.
type New struct {
	OrderID     string
	Currency    string
	Description string
	Metadata    json.RawMessage
	Card        Card
}

// now is the time by the clock of the key whose request or job ctx
// carries (docs/design/decisions.md section 14): a verification's times
// and its expiry read it.
func (s *Service) now(ctx context.Context) time.Time { return clock.Now(ctx, s.Now) }

// realNow is the process's time: the per-card limit counts checks of one
// card across all keys, so no key's clock may move its window.
func (s *Service) realNow() time.Time { return s.Now().UTC().Truncate(time.Microsecond) }

func (s *Service) maxAttempts() int {
	if s.MaxAttempts > 0 {
		return s.MaxAttempts
	}
	return DefaultMaxAttempts
}

// cardHashes are the card number's keyed hashes, one per master key, the
// first under the active key: a check hashed before a key rotation still
// counts after it.
func (s *Service) cardHashes(number string) []string {
	var out []string
	for _, k := range s.Keys.DeriveKeys(hashLabel) {
		m := hmac.New(sha256.New, k)
		m.Write([]byte(number))
		out = append(out, hex.EncodeToString(m.Sum(nil)))
	}
	return out
}

// check applies the card rules the schema cannot express.
func (n *New) check(now time.Time) *fault.Error {
	c := &n.Card
	if !card.Digits(c.Number) || !card.Luhn(c.Number) {
		return fault.OnField(fault.ValidationError, "card.number", "is not a valid card number")
	}
	if !card.Digits(c.CVV) {
		return fault.OnField(fault.ValidationError, "card.cvv", "must be 3 or 4 digits")
	}
	c.ExpYear = card.FullYear(c.ExpYear)
	y, m := now.Year(), int(now.Month())
	switch {
	case c.ExpYear < 2000:
		return fault.OnField(fault.ValidationError, "card.expire_year", "must be four digits, or two meaning 20YY")
	case c.ExpYear < y || (c.ExpYear == y && c.ExpMonth < m):
		return fault.OnField(fault.ValidationError, "card.expire_year", "the card has expired")
	case c.ExpYear > y+50:
		return fault.OnField(fault.ValidationError, "card.expire_year", "is too far in the future")
	}
	return nil
}

// Create accepts a verification (createCardVerification (POST
// /card-verifications)): pending, with its LookUp queued as an operation
// and its expiry scheduled, in the request's transaction. The fourth
// verification of a card in 24 hours is 429 rate_limited before any
// provider call (docs/design/decisions.md section 15). The limit's window
// is real time, whatever the key's sandbox clock: it is a fraud rule over
// all keys, not one key's resource (docs/sandbox.md, "The sandbox clock").
func (s *Service) Create(ctx context.Context, tx CreateTx, key merchant.Key, in New) (*Verification, error) {
	now, wall := s.now(ctx), s.realNow()
	if !key.DirectCardData {
		return nil, fault.OnField(fault.DirectCardDataNotAllowed, "card", "this key may not send raw card data")
	}
	if f := in.check(now); f != nil {
		return nil, f
	}
	ch, err := s.channel(ctx, tx, key, in.Currency)
	if err != nil {
		return nil, err
	}
	hashes := s.cardHashes(in.Card.Number)
	n, oldest, err := tx.LockCardChecks(ctx, hashes, wall.Add(-CardWindow))
	if err != nil {
		return nil, err
	}
	if n >= CardLimit {
		// Retryable: not stored as the Idempotency-Key's answer, so the
		// same request succeeds once the oldest check leaves the window,
		// which Retry-After names.
		f := fault.New(fault.RateLimited, "this card was verified too often in the last 24 hours; retry later")
		f.Retryable, f.RetryAfter = true, max(oldest.Add(CardWindow).Sub(wall), time.Second)
		return nil, f
	}
	v := &Verification{ID: s.NewID(), AccessKeyID: key.ID, ChannelID: ch.ID, OrderID: in.OrderID, Currency: in.Currency,
		Description: in.Description, Metadata: in.Metadata, Status: Pending, CardMask: card.Mask(in.Card.Number),
		ExpiresAt: now.Add(Lifetime), CreatedAt: now, UpdatedAt: now}
	if err := tx.CreateVerification(ctx, v); err != nil {
		if errors.Is(err, ErrDuplicateOrderID) {
			return nil, fault.OnField(fault.DuplicateOrderID, "order_id", "this key already has a verification with this order_id")
		}
		return nil, err
	}
	if err := tx.RecordCardCheck(ctx, hashes[0], wall); err != nil {
		return nil, err
	}
	if err := s.changed(ctx, tx, v); err != nil {
		return nil, err
	}
	c := in.Card
	if err := s.queue(ctx, tx, v, OpCreate, &Secret{Version: SecretVersion, Card: &c}); err != nil {
		return nil, err
	}
	at := clock.Process(ctx, v.ExpiresAt) // River schedules by the process's clock
	if err := tx.Enqueue(ctx, ExpireArgs{VerificationID: v.ID}, &river.InsertOpts{ScheduledAt: at}); err != nil {
		return nil, err
	}
	return v, nil
}

// channel is the key's first channel that takes cards in currency and
// whose profile has the lookup capability.
func (s *Service) channel(ctx context.Context, tx CreateTx, key merchant.Key, currency string) (*merchant.Channel, error) {
	channels, err := tx.ChannelsForKey(ctx, key.ID)
	if err != nil {
		return nil, err
	}
	served := false
	for i := range channels {
		ch := &channels[i]
		if !ch.Serves("card", currency) {
			continue
		}
		served = true
		prov, err := s.Providers.Provider(ch.Provider)
		if err != nil {
			return nil, err
		}
		caps, err := prov.Capabilities(ch.Profile)
		if err != nil {
			return nil, err
		}
		if caps.Has(provider.Lookup) {
			return ch, nil
		}
	}
	if !served {
		return nil, fault.OnField(fault.ChannelNotAvailable, "currency", "no payment channel of this key takes cards in this currency")
	}
	return nil, fault.Newf(fault.CapabilityNotSupported, "the payment channel does not support %s", provider.Lookup)
}

// Verify accepts a code for checking (verifyCardVerification (POST
// /card-verifications/{id}/verify)). v must be locked in tx (the store's
// LockVerificationForKey), so that concurrent codes are counted one after
// another: at most MaxAttempts are ever sent, and the attempt is counted
// at once, right or wrong alike (docs/design/decisions.md section 15).
func (s *Service) Verify(ctx context.Context, tx VerifyTx, v *Verification, code string) (*Verification, error) {
	if v.Status != CodeSent || v.VerifyAttempts >= s.maxAttempts() {
		return nil, fault.New(fault.VerificationNotAwaitingCode, "the verification is not waiting for a code")
	}
	v.VerifyAttempts++
	v.UpdatedAt = s.now(ctx)
	if err := s.save(ctx, tx, v); err != nil {
		return nil, err
	}
	if err := s.queue(ctx, tx, v, OpVerify, &Secret{Version: SecretVersion, Code: code}); err != nil {
		return nil, err
	}
	return v, nil
}

// queue stores an operation with its sealed secret and its job.
func (s *Service) queue(ctx context.Context, tx operation.QueueTx, v *Verification, kind string, sec *Secret) error {
	now := s.now(ctx)
	op := &operation.Operation{ID: s.NewID(), Resource: Resource, ResourceID: v.ID, Kind: kind, CreatedAt: now, UpdatedAt: now}
	return operation.Queue(ctx, tx, s.Sealer, op, sec)
}

// save is the one way a verification is written after its creation: a
// change of status must be in the life cycle (CanMove) and records its
// card_verification.<status> event, carrying the verification as GET shows
// it, in the same transaction (docs/design/decisions.md section 6). The row
// is written by compare-and-set: ErrConflict when it changed since read.
func (s *Service) save(ctx context.Context, tx WriteTx, v *Verification) error {
	return s.lifecycle().Save(ctx, tx, v, func() error { return tx.UpdateVerification(ctx, v) })
}

// lifecycle is the verification as it moves (internal/lifecycle).
func (s *Service) lifecycle() lifecycle.Kind[*Verification, Status] {
	return lifecycle.Kind[*Verification, Status]{Name: Resource, Table: moves, Render: s.Render, NewID: s.NewID,
		State: func(v *Verification) lifecycle.State[Status] {
			return lifecycle.State[Status]{ID: v.ID, KeyID: v.AccessKeyID, Status: v.Status, Stored: &v.StoredStatus, At: v.UpdatedAt}
		}}
}

// changed records the event of a status change, once.
func (s *Service) changed(ctx context.Context, tx EventTx, v *Verification) error {
	return s.lifecycle().Record(ctx, tx, v)
}
