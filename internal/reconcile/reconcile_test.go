package reconcile_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/reconcile"
)

var day = time.Date(2026, 1, 15, 0, 0, 0, 0, time.UTC)

func ours(key, kind string, amount int64, currency string, at time.Time) reconcile.Movement {
	return reconcile.Movement{Key: key, PaymentID: "pay-" + key, AccessKeyID: "key-1",
		Side: reconcile.Side{Kind: kind, AmountMinor: amount, Currency: currency, At: at}}
}

func theirs(key, kind string, amount int64, currency string, at time.Time) provider.Movement {
	return provider.Movement{Kind: kind, OperationID: key, Ref: "ref-" + key, AmountMinor: amount, Currency: currency, At: at, FeeMinor: 3}
}

// TestCompare plants every kind of break, a clean match of each movement
// kind, and the edges of the day (docs/design/decisions.md section 18).
func TestCompare(t *testing.T) {
	noon := day.Add(12 * time.Hour)
	paygate := []reconcile.Movement{
		ours("op-charge", provider.MoveCharge, 1000, "USD", noon),
		ours("op-hold", provider.MoveHold, 500, "USD", noon),
		ours("op-capture", provider.MoveCapture, 300, "USD", noon),
		ours("op-refund", provider.MoveRefund, 100, "USD", noon),
		ours("op-release", provider.MoveRelease, 500, "USD", noon),
		ours("op-transfer", provider.MoveTransfer, 700, "EUR", noon),
		ours("op-missing", provider.MoveCharge, 900, "USD", noon),                              // missing_at_provider
		ours("op-amount", provider.MoveCharge, 900, "USD", noon),                               // amount_mismatch
		ours("op-currency", provider.MoveCharge, 900, "USD", noon),                             // currency_mismatch
		ours("op-status", provider.MoveCapture, 900, "USD", noon),                              // status_mismatch: only held there
		ours("op-dup", provider.MoveCharge, 900, "USD", noon),                                  // duplicate_at_provider
		ours("op-late", provider.MoveCharge, 800, "USD", day.Add(23*time.Hour+30*time.Minute)), // pending: there tomorrow
		ours("op-yesterday", provider.MoveCharge, 800, "USD", day.Add(-time.Hour)),             // not this day's
		ours("op-far", provider.MoveCharge, 800, "USD", noon),                                  // missing: there, but far from the edge
	}
	atProvider := []provider.Movement{
		theirs("op-charge", provider.MoveCharge, 1000, "USD", noon.Add(time.Second)),
		theirs("op-hold", provider.MoveHold, 500, "USD", noon),
		theirs("op-capture", provider.MoveCapture, 300, "USD", noon),
		theirs("op-refund", provider.MoveRefund, 100, "USD", noon),
		theirs("op-release", provider.MoveRelease, 500, "USD", noon),
		theirs("op-transfer", provider.MoveTransfer, 700, "EUR", noon),
		theirs("op-amount", provider.MoveCharge, 901, "USD", noon),
		theirs("op-currency", provider.MoveCharge, 900, "EUR", noon),
		theirs("op-status", provider.MoveHold, 900, "USD", noon),
		theirs("op-dup", provider.MoveCharge, 900, "USD", noon),
		theirs("op-dup", provider.MoveCharge, 900, "USD", noon.Add(time.Minute)),
		theirs("op-late", provider.MoveCharge, 800, "USD", day.Add(24*time.Hour+10*time.Minute)),
		theirs("op-yesterday", provider.MoveCharge, 800, "USD", day.Add(time.Hour)), // pending: ours yesterday, near the edge
		theirs("op-unknown", provider.MoveCharge, 4200, "USD", noon),                // missing_in_paygate
		theirs("", provider.MoveCharge, 4300, "USD", noon),                          // missing_in_paygate, no operation id
		theirs("op-far", provider.MoveCharge, 800, "USD", day.Add(-10*time.Hour)),   // yesterday, far from the edge
	}
	res, breaks := reconcile.Compare("acq", day.Add(5*time.Hour), paygate, atProvider)
	require.Equal(t, day, res.Day)
	require.Equal(t, 13, res.Paygate, "op-yesterday is not this day's")
	require.Equal(t, 14, res.AtProvider)
	require.Equal(t, 6, res.Matched)
	require.Equal(t, 2, res.Pending, "op-late here, op-yesterday there")
	require.Equal(t, int64(3*14), res.FeesMinor)
	require.Equal(t, map[string]int{
		reconcile.MissingAtProvider: 2, reconcile.MissingInPaygate: 2, reconcile.AmountMismatch: 1,
		reconcile.CurrencyMismatch: 1, reconcile.StatusMismatch: 1, reconcile.DuplicateAtProvider: 1,
	}, res.ByKind)
	require.Len(t, breaks, res.Breaks())
	for i, b := range breaks {
		if i > 0 {
			require.False(t, b.Paygate != nil && breaks[i-1].Paygate != nil && b.Paygate.At.Before(breaks[i-1].Paygate.At), "in time order")
		}
		switch b.Kind {
		case reconcile.MissingAtProvider:
			require.NotNil(t, b.Paygate)
			require.Nil(t, b.Provider)
		case reconcile.MissingInPaygate:
			require.Nil(t, b.Paygate)
			require.NotNil(t, b.Provider)
		default:
			require.NotNil(t, b.Paygate, b.Kind)
			require.NotNil(t, b.Provider, b.Kind)
		}
		if b.Kind == reconcile.AmountMismatch {
			require.Equal(t, int64(900), b.Paygate.AmountMinor)
			require.Equal(t, int64(901), b.Provider.AmountMinor)
			require.Equal(t, "pay-op-amount", b.PaymentID)
		}
	}

	clean, none := reconcile.Compare("acq", day, paygate[:6], atProvider[:6])
	require.Empty(t, none)
	require.Zero(t, clean.Breaks())
	require.Equal(t, 6, clean.Matched)
}

// TestCompareByPaymentRef: a movement of the acquirer's with no operation
// id is matched by the acquirer's payment id and its kind.
func TestCompareByPaymentRef(t *testing.T) {
	noon := day.Add(12 * time.Hour)
	mine := ours("op-charge", provider.MoveCharge, 1000, "USD", noon)
	mine.PaymentRef = "pi_1"
	refund := ours("op-refund", provider.MoveRefund, 400, "USD", noon)
	refund.PaymentRef = "pi_1"
	res, breaks := reconcile.Compare("acq", day, []reconcile.Movement{mine, refund}, []provider.Movement{
		{Kind: provider.MoveCharge, PaymentRef: "pi_1", AmountMinor: 1000, Currency: "USD", At: noon},
		{Kind: provider.MoveRefund, PaymentRef: "pi_1", AmountMinor: 300, Currency: "USD", At: noon},
		{Kind: provider.MoveCharge, PaymentRef: "pi_2", AmountMinor: 50, Currency: "USD", At: noon},
	})
	require.Equal(t, 1, res.Matched)
	require.Equal(t, 1, res.ByKind[reconcile.AmountMismatch])
	require.Equal(t, 1, res.ByKind[reconcile.MissingInPaygate], "another payment's: no match")
	require.Len(t, breaks, 2)
	for _, b := range breaks {
		if b.Kind == reconcile.AmountMismatch {
			require.Equal(t, "op-refund", b.Key)
			require.Equal(t, int64(300), b.Provider.AmountMinor)
		}
	}
}

func TestWindow(t *testing.T) {
	from, to := reconcile.Window(time.Date(2026, 1, 15, 18, 0, 0, 0, time.FixedZone("x", 3*3600)))
	require.Equal(t, day.Add(-2*time.Hour), from)
	require.Equal(t, day.Add(26*time.Hour), to)
}
