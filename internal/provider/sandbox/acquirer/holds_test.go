package acquirer

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/sandbox/wire"
)

func (e *env) authorize(number string) (provider.PayRequest, provider.PayResult) {
	e.t.Helper()
	r := payReq(number)
	r.Authorize = true
	res := e.pay(r)
	require.Equal(e.t, provider.StatusAuthorized, res.Status)
	return r, res
}

func TestCaptureAndCancel(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	tests := []struct {
		name     string
		amount   int64 // 0: full
		captured int64
		released int64
	}{
		{"full", 0, 1999, 0},
		{"exact", 1999, 1999, 0},
		{"partial releases the rest", 500, 500, 1499},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, auth := e.authorize("4242424242424242")
			capOp := op()
			res, err := e.a.Capture(ctx, provider.CaptureRequest{OperationID: capOp, ProviderID: auth.ProviderID, AmountMinor: tt.amount})
			require.NoError(t, err)
			require.Equal(t, provider.StatusSucceeded, res.Status)
			require.Equal(t, tt.captured, res.CapturedAmountMinor)
			entries := e.srv.Ledger()
			require.Equal(t, 1, Count(entries, EntryCapture, capOp))
			releases := 0
			for _, en := range entries {
				if en.Matches(EntryRelease, capOp) {
					releases++
					require.Equal(t, tt.released, en.AmountMinor)
					require.Equal(t, "partial_capture", en.Reason)
				}
			}
			require.Equal(t, tt.released > 0, releases == 1)

			// The same capture again is a replay; another capture is refused.
			again, err := e.a.Capture(ctx, provider.CaptureRequest{OperationID: capOp, ProviderID: auth.ProviderID, AmountMinor: tt.amount})
			require.NoError(t, err)
			require.Equal(t, res, again)
			_, err = e.a.Capture(ctx, provider.CaptureRequest{OperationID: op(), ProviderID: auth.ProviderID})
			kind(t, err, provider.Invalid)
			require.Equal(t, 1, e.srv.Count(EntryCapture, auth.ProviderID))
		})
	}
	t.Run("more than authorized", func(t *testing.T) {
		_, auth := e.authorize("4242424242424242")
		_, err := e.a.Capture(ctx, provider.CaptureRequest{OperationID: op(), ProviderID: auth.ProviderID, AmountMinor: 2000})
		kind(t, err, provider.Invalid)
	})
	t.Run("cancel releases the hold", func(t *testing.T) {
		_, auth := e.authorize("5555555555554444")
		cancelOp := op()
		res, err := e.a.Cancel(ctx, provider.CancelRequest{OperationID: cancelOp, ProviderID: auth.ProviderID})
		require.NoError(t, err)
		require.Equal(t, provider.StatusCanceled, res.Status)
		require.Equal(t, 1, e.srv.Count(EntryRelease, cancelOp))
		_, err = e.a.Capture(ctx, provider.CaptureRequest{OperationID: op(), ProviderID: auth.ProviderID})
		kind(t, err, provider.Invalid)
	})
	t.Run("unknown payment", func(t *testing.T) {
		_, err := e.a.Capture(ctx, provider.CaptureRequest{OperationID: op(), ProviderID: "pay_nope"})
		kind(t, err, provider.NotFound)
	})
}

func TestRefund(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	t.Run("default profile has none", func(t *testing.T) {
		res := e.pay(payReq("4242424242424242"))
		_, err := e.a.Refund(ctx, provider.RefundRequest{OperationID: op(), ProviderID: res.ProviderID})
		kind(t, err, provider.Unsupported)
		resp, body := e.raw("POST", "/v1/payments/"+res.ProviderID+"/refunds", op(), "", "")
		require.Equal(t, http.StatusUnprocessableEntity, resp.StatusCode)
		require.Equal(t, "capability_not_supported", errCode(t, body))
		require.Zero(t, e.srv.Count(EntryRefund, ""))
	})
	t.Run("refunds profile", func(t *testing.T) {
		r := payReq("4242424242424242")
		r.Profile = wire.ProfileRefunds
		res := e.pay(r)
		part := op()
		got, err := e.a.Refund(ctx, provider.RefundRequest{OperationID: part, ProviderID: res.ProviderID, AmountMinor: 999, Profile: wire.ProfileRefunds})
		require.NoError(t, err)
		require.Equal(t, int64(999), got.RefundedAmountMinor)
		got, err = e.a.Refund(ctx, provider.RefundRequest{OperationID: op(), ProviderID: res.ProviderID, Profile: wire.ProfileRefunds})
		require.NoError(t, err)
		require.Equal(t, int64(1999), got.RefundedAmountMinor)
		_, err = e.a.Refund(ctx, provider.RefundRequest{OperationID: op(), ProviderID: res.ProviderID, AmountMinor: 1, Profile: wire.ProfileRefunds})
		kind(t, err, provider.Invalid)
		require.Equal(t, 2, e.srv.Count(EntryRefund, res.ProviderID))
		require.Equal(t, 1, e.srv.Count(EntryRefund, part))
	})
}

func TestHoldExpiry(t *testing.T) {
	tests := []struct {
		name   string
		number string
		ttl    time.Duration
	}{
		{"after 7 days", "4242424242424242", 7 * 24 * time.Hour},
		{"short-hold card", "4000000000000077", time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			ctx := context.Background()
			r, auth := e.authorize(tt.number)
			require.Equal(t, e.clock.Now().Add(tt.ttl), *auth.AuthorizationExpiresAt)

			e.clock.Advance(tt.ttl - time.Second)
			res, err := e.a.Status(ctx, provider.StatusRequest{OperationID: r.OperationID})
			require.NoError(t, err)
			require.Equal(t, provider.StatusAuthorized, res.Status)
			require.Zero(t, e.srv.Count(EntryRelease, r.OperationID))

			e.clock.Advance(time.Second)
			require.Equal(t, 1, e.srv.Count(EntryRelease, r.OperationID))
			res, err = e.a.Status(ctx, provider.StatusRequest{OperationID: r.OperationID})
			require.NoError(t, err)
			require.Equal(t, provider.StatusCanceled, res.Status)
			require.False(t, e.clock.Now().Before(*res.AuthorizationExpiresAt))
			_, err = e.a.Capture(ctx, provider.CaptureRequest{OperationID: op(), ProviderID: auth.ProviderID})
			kind(t, err, provider.Invalid)
			entries := e.srv.Ledger()
			require.Equal(t, "expired", entries[len(entries)-1].Reason)
			require.Equal(t, 1, Count(entries, EntryRelease, r.OperationID))
		})
	}
}
