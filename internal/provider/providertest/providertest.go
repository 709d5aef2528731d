// Package providertest is the conformance suite every acquirer adapter must
// pass, as River's riverdrivertest is for its database drivers
// (docs/design/style.md). Run checks the seam's contract (internal/provider,
// docs/providers.md) for the core interface and for whichever optional
// interfaces the adapter implements: an operation id sent twice is one
// operation with one result, Status of an unknown operation is NotFound, a
// decline is a result and not an error, a missing capability is Unsupported
// and sends nothing, and no result or error ever carries card data.
//
// The suite talks to whatever the adapter talks to: the bundled sandbox in
// Paygate's own tests, an acquirer's sandbox for a real adapter, which
// supplies its own test data in Config.
package providertest

import (
	"encoding/json"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/provider"
)

// Config is the acquirer's test data. A check whose data is missing (a nil
// instrument, an empty BIN) is skipped, not failed: an acquirer's sandbox
// may not offer, say, a card that always declines.
type Config struct {
	// Profile is the profile under test ("" is the adapter's default). Its
	// Capabilities decide which checks run.
	Profile string
	// Currency and AmountMinor are what test payments and payouts ask for.
	Currency    string
	AmountMinor int64

	// Succeeds is paid, authorized and paid out to successfully.
	Succeeds *provider.Instrument
	// Declines is declined by the issuer: a result with a decline code.
	Declines *provider.Instrument
	// Challenge asks for a 3DS step: requires_action with a three_ds URL.
	Challenge *provider.Instrument

	// VerifyCard and VerifyCode: a verification of VerifyCard sends a code,
	// and VerifyCode is the code the payer reads back.
	VerifyCard *provider.Card
	VerifyCode string

	// KnownBIN is a BIN the acquirer describes; UnknownBIN one it does not.
	KnownBIN, UnknownBIN string

	// Moves, when set, counts how many times the acquirer moved money
	// (charged, held, transferred) for an operation id, from the
	// acquirer's own records: the proof that an operation sent twice was
	// carried out once. Nil: only the results are compared.
	Moves func(t *testing.T, operationID string) int
}

// Run runs the suite against adapters made by newAdapter, once per subtest.
func Run(t *testing.T, newAdapter func(t *testing.T) provider.Provider, cfg Config) {
	t.Helper()
	if cfg.Currency == "" {
		cfg.Currency = "USD"
	}
	if cfg.AmountMinor == 0 {
		cfg.AmountMinor = 1999
	}
	s := &suite{cfg: cfg, newAdapter: newAdapter}
	t.Run("Core", s.core)
	t.Run("Unsupported", s.unsupported)
	s.optional(t, "Payments", func(p provider.Provider) bool { _, ok := p.(provider.Payments); return ok }, s.payments)
	s.optional(t, "Verifications", func(p provider.Provider) bool { _, ok := p.(provider.Verifications); return ok }, s.verifications)
	s.optional(t, "Payouts", func(p provider.Provider) bool { _, ok := p.(provider.Payouts); return ok }, s.payouts)
	s.optional(t, "BINSource", func(p provider.Provider) bool { _, ok := p.(provider.BINSource); return ok }, s.bins)
	s.optional(t, "HostedPages", func(p provider.Provider) bool { _, ok := p.(provider.HostedPages); return ok }, s.hosted)
}

type suite struct {
	cfg        Config
	newAdapter func(t *testing.T) provider.Provider
}

// optional runs f when the adapter implements the interface.
func (s *suite) optional(t *testing.T, name string, has func(provider.Provider) bool, f func(t *testing.T)) {
	t.Run(name, func(t *testing.T) {
		if !has(s.newAdapter(t)) {
			t.Skipf("the adapter does not implement provider.%s", name)
		}
		f(t)
	})
}

// env is one adapter and the profile's capabilities.
type env struct {
	t    *testing.T
	cfg  Config
	p    provider.Provider
	caps provider.Capabilities
}

func (s *suite) env(t *testing.T) *env {
	t.Helper()
	p := s.newAdapter(t)
	caps, err := p.Capabilities(s.cfg.Profile)
	require.NoError(t, err, "Capabilities of the profile under test")
	return &env{t: t, cfg: s.cfg, p: p, caps: caps}
}

// need skips the calling test unless the profile has every capability.
func (e *env) need(caps ...provider.Capability) {
	e.t.Helper()
	for _, c := range caps {
		if !e.caps.Has(c) {
			e.t.Skipf("profile %q lacks %s", e.cfg.Profile, c)
		}
	}
}

// NewOperationID returns a fresh operation id, as Paygate's would be.
func NewOperationID() string { return "op_" + uuid.NewString() }

// secrets is every piece of card data the config holds.
func (e *env) secrets() []string {
	var out []string
	for _, in := range []*provider.Instrument{e.cfg.Succeeds, e.cfg.Declines, e.cfg.Challenge} {
		if in != nil && in.Card != nil {
			out = append(out, in.Card.Number)
		}
	}
	if e.cfg.VerifyCard != nil {
		out = append(out, e.cfg.VerifyCard.Number)
	}
	return out
}

// clean asserts that neither a result nor an error carries a card number
// (provider.Error: "Message never holds card data"; preamble: card numbers
// never appear in answers or errors).
func (e *env) clean(res any, err error) {
	e.t.Helper()
	b, jerr := json.Marshal(res)
	require.NoError(e.t, jerr)
	for _, n := range e.secrets() {
		require.NotContains(e.t, string(b), n, "a result carries a card number")
		if err != nil {
			require.NotContains(e.t, err.Error(), n, "an error carries a card number")
		}
	}
}

// kind asserts err is of kind k.
func kind(t *testing.T, err error, k provider.ErrorKind) {
	t.Helper()
	require.Error(t, err)
	require.Equal(t, k, provider.KindOf(err), "error: %v", err)
}

func (e *env) payReq(in *provider.Instrument, authorize bool) provider.PayRequest {
	return provider.PayRequest{OperationID: NewOperationID(), Authorize: authorize, AmountMinor: e.cfg.AmountMinor,
		Currency: e.cfg.Currency, OrderID: "conformance", Instrument: *in, Locale: "en",
		ReturnURL: "https://merchant.example/return", Profile: e.cfg.Profile}
}

// moves asserts the acquirer moved money n times for id, when it can tell.
func (e *env) moves(id string, n int) {
	e.t.Helper()
	if e.cfg.Moves != nil {
		require.Equal(e.t, n, e.cfg.Moves(e.t, id), "money moved for operation %s", id)
	}
}

func (s *suite) core(t *testing.T) {
	e := s.env(t)
	require.NotEmpty(t, e.p.Name())
	caps, err := e.p.Capabilities(e.cfg.Profile)
	require.NoError(t, err)
	if len(caps) > 0 {
		caps[0] = "mutated"
		again, err := e.p.Capabilities(e.cfg.Profile)
		require.NoError(t, err)
		require.Equal(t, e.caps, again, "Capabilities must return a copy a caller may change")
	}
	_, err = e.p.Capabilities("no-such-profile-" + uuid.NewString())
	require.Error(t, err, "an unknown profile is an error")
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}
