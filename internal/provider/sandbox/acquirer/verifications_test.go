package acquirer

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/provider"
)

func verificationReq(number string) provider.VerificationRequest {
	return provider.VerificationRequest{OperationID: op(), OrderID: "v-1", Currency: "USD", Card: *testCard(number)}
}

func TestVerification(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	tests := []struct {
		name     string
		number   string
		codes    []string
		attempts []int // after each code
		statuses []provider.Status
		decline  string
	}{
		{"right code at once", "4242424242424242", []string{"4242"},
			[]int{1}, []provider.Status{provider.StatusSucceeded}, ""},
		{"right code on the third try", "5555555555554444", []string{"1111", "0000", "4444"},
			[]int{1, 2, 3}, []provider.Status{provider.StatusCodeSent, provider.StatusCodeSent, provider.StatusSucceeded}, ""},
		{"three wrong codes", "4242424242424242", []string{"1", "2", "3"},
			[]int{1, 2, 3}, []provider.Status{provider.StatusCodeSent, provider.StatusCodeSent, provider.StatusFailed}, "authentication_failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := verificationReq(tt.number)
			v, err := e.a.CreateVerification(ctx, r)
			require.NoError(t, err)
			require.Equal(t, provider.StatusCodeSent, v.Status)
			require.Zero(t, v.Attempts)
			require.Equal(t, 1, e.srv.Count(EntryVerificationHold, r.OperationID))
			for i, code := range tt.codes {
				got, err := e.a.Verify(ctx, provider.VerifyRequest{OperationID: op(), ProviderID: v.ProviderID, Code: code})
				require.NoError(t, err)
				require.Equal(t, tt.attempts[i], got.Attempts, "the answer already counts the attempt")
				require.Equal(t, tt.statuses[i], got.Status)
			}
			got, err := e.a.VerificationStatus(ctx, provider.StatusRequest{OperationID: r.OperationID})
			require.NoError(t, err)
			require.Equal(t, tt.statuses[len(tt.statuses)-1], got.Status)
			require.Equal(t, tt.decline, got.DeclineCode)
			require.Equal(t, 1, e.srv.Count(EntryRelease, r.OperationID), "the end releases the blocked sum")

			_, err = e.a.Verify(ctx, provider.VerifyRequest{OperationID: op(), ProviderID: v.ProviderID, Code: "4242"})
			kind(t, err, provider.Invalid)
		})
	}
	t.Run("declined card", func(t *testing.T) {
		r := verificationReq("4000000000000002")
		v, err := e.a.CreateVerification(ctx, r)
		require.NoError(t, err)
		require.Equal(t, provider.StatusDeclined, v.Status)
		require.Equal(t, "card_declined", v.DeclineCode)
		require.Zero(t, e.srv.Count("", r.OperationID))
	})
	t.Run("provider error", func(t *testing.T) {
		v, err := e.a.CreateVerification(ctx, verificationReq("4000000000000119"))
		require.NoError(t, err)
		require.Equal(t, provider.StatusFailed, v.Status)
	})
	t.Run("unreadable card", func(t *testing.T) {
		r := verificationReq("4000000000000259")
		_, err := e.a.CreateVerification(ctx, r)
		kind(t, err, provider.Unreadable)
		for range 2 {
			_, err = e.a.VerificationStatus(ctx, provider.StatusRequest{OperationID: r.OperationID})
			kind(t, err, provider.Unreadable)
		}
		v, err := e.a.VerificationStatus(ctx, provider.StatusRequest{OperationID: r.OperationID})
		require.NoError(t, err)
		require.Equal(t, provider.StatusCodeSent, v.Status)
		require.Equal(t, 1, e.srv.Count(EntryVerificationHold, r.OperationID))
	})
	t.Run("idempotent", func(t *testing.T) {
		r := verificationReq("4242424242424242")
		v1, err := e.a.CreateVerification(ctx, r)
		require.NoError(t, err)
		v2, err := e.a.CreateVerification(ctx, r)
		require.NoError(t, err)
		require.Equal(t, v1, v2)
		require.Equal(t, 1, e.srv.Count(EntryVerificationHold, r.OperationID))
		verifyOp := op()
		g1, err := e.a.Verify(ctx, provider.VerifyRequest{OperationID: verifyOp, ProviderID: v1.ProviderID, Code: "1"})
		require.NoError(t, err)
		g2, err := e.a.Verify(ctx, provider.VerifyRequest{OperationID: verifyOp, ProviderID: v1.ProviderID, Code: "1"})
		require.NoError(t, err)
		require.Equal(t, 1, g2.Attempts, "a retried verify is not a second attempt")
		require.Equal(t, g1, g2)
	})
	t.Run("status of an unknown operation", func(t *testing.T) {
		_, err := e.a.VerificationStatus(ctx, provider.StatusRequest{OperationID: op()})
		kind(t, err, provider.NotFound)
	})
	t.Run("not a code", func(t *testing.T) {
		v, err := e.a.CreateVerification(ctx, verificationReq("4242424242424242"))
		require.NoError(t, err)
		resp, body := e.raw("POST", "/v1/verifications/"+v.ProviderID+"/verify", op(), "", `{"code":"12ab"}`)
		require.Equal(t, http.StatusBadRequest, resp.StatusCode)
		require.Equal(t, "invalid_request", errCode(t, body))
	})
}
