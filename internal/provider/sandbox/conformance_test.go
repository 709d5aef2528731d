package sandbox

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/providertest"
	"github.com/paygate/paygate/internal/provider/sandbox/acquirer"
	"github.com/paygate/paygate/internal/provider/sandbox/wire"
)

// TestConformance runs the seam's conformance suite against the adapter
// over real HTTP, for each profile: "default" lacks refund
// (docs/design/decisions.md section 7), "refunds" has it.
func TestConformance(t *testing.T) {
	run, err := acquirer.Start(acquirer.Config{APIKey: "sk_test_conformance", MaxHang: 10 * time.Second})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, run.Close()) })
	newAdapter := func(*testing.T) provider.Provider {
		return NewAdapter(run.URL, run.APIKey, &http.Client{Timeout: 5 * time.Second})
	}
	for _, profile := range []string{wire.ProfileDefault, wire.ProfileRefunds} {
		t.Run(profile, func(t *testing.T) {
			providertest.Run(t, newAdapter, providertest.Config{
				Profile:    profile,
				Succeeds:   &provider.Instrument{Card: testCard("4242424242424242")},
				Declines:   &provider.Instrument{Card: testCard("4000000000000002")},
				Challenge:  &provider.Instrument{Card: testCard("4000000000003220")},
				VerifyCard: testCard("5555555555554444"),
				VerifyCode: "4444", // the card's last four (docs/sandbox.md)
				KnownBIN:   "42424242",
				UnknownBIN: "11111111",
				// Every entry of the ledger the operation made or caused.
				Moves: func(_ *testing.T, id string) int { return run.Server.Count("", id) },
			})
		})
	}
}
