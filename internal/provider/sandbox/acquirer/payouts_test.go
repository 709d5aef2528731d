package acquirer

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/provider"
)

func payoutReq(number string) provider.PayoutRequest {
	return provider.PayoutRequest{OperationID: op(), OrderID: "p-1", AmountMinor: 2500, Currency: "USD",
		Account: "acct-main", Instrument: provider.Instrument{Card: testCard(number)}}
}

func TestPayout(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	tests := []struct {
		name    string
		number  string
		status  provider.Status
		decline string
	}{
		{"succeeds", "4242424242424242", provider.StatusSucceeded, ""},
		{"declined", "4000000000000002", provider.StatusDeclined, "card_declined"},
		{"provider error", "4000000000000119", provider.StatusFailed, "processing_error"},
		{"3DS challenge", "4000000000003220", provider.StatusRequiresAction, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := payoutReq(tt.number)
			res, err := e.a.CreatePayout(ctx, r)
			require.NoError(t, err)
			require.Equal(t, tt.status, res.Status)
			require.Equal(t, tt.decline, res.DeclineCode)
			transfers := 0
			if tt.status == provider.StatusSucceeded {
				transfers = 1
				require.NotNil(t, res.BankReference)
			}
			require.Equal(t, transfers, e.srv.Count(EntryTransfer, r.OperationID))
			if tt.status == provider.StatusRequiresAction {
				require.Equal(t, "three_ds", res.NextAction.Type)
				require.Equal(t, e.run.URL+"/3ds/"+res.ProviderID, res.NextAction.URL)
			}
			got, err := e.a.PayoutStatus(ctx, provider.StatusRequest{OperationID: r.OperationID})
			require.NoError(t, err)
			require.Equal(t, res, got)
		})
	}
}

func TestPayoutChallenge(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	challenged := func() (provider.PayoutRequest, provider.PayoutResult) {
		r := payoutReq("4000000000003220")
		r.ReturnURL = "https://merchant.example/payouts"
		res, err := e.a.CreatePayout(ctx, r)
		require.NoError(t, err)
		require.Equal(t, provider.StatusRequiresAction, res.Status)
		return r, res
	}
	t.Run("right code", func(t *testing.T) {
		r, res := challenged()
		got, err := e.a.ConfirmPayout(ctx, provider.ConfirmRequest{OperationID: op(), ProviderID: res.ProviderID, Code: "123456"})
		require.NoError(t, err)
		require.Equal(t, provider.StatusSucceeded, got.Status)
		require.Equal(t, 1, e.srv.Count(EntryTransfer, r.OperationID))
		_, err = e.a.ConfirmPayout(ctx, provider.ConfirmRequest{OperationID: op(), ProviderID: res.ProviderID, Code: "123456"})
		kind(t, err, provider.Invalid)
	})
	t.Run("wrong code", func(t *testing.T) {
		r, res := challenged()
		got, err := e.a.ConfirmPayout(ctx, provider.ConfirmRequest{OperationID: op(), ProviderID: res.ProviderID, Code: "654321"})
		require.NoError(t, err)
		require.Equal(t, provider.StatusDeclined, got.Status)
		require.Equal(t, "authentication_failed", got.DeclineCode)
		require.Zero(t, e.srv.Count(EntryTransfer, r.OperationID))
	})
	for _, outcome := range []string{"approve", "deny"} {
		t.Run("page "+outcome, func(t *testing.T) {
			r, res := challenged()
			got, err := e.a.ConfirmPayout(ctx, provider.ConfirmRequest{ProviderID: res.ProviderID})
			require.NoError(t, err)
			require.Equal(t, provider.StatusRequiresAction, got.Status)
			resp, _ := e.submit(res.NextAction.URL, url.Values{"outcome": {outcome}})
			require.Equal(t, http.StatusSeeOther, resp.StatusCode)
			back, _ := url.Parse(resp.Header.Get("Location"))
			require.Equal(t, res.ProviderID, back.Query().Get("sandbox_payout_id"))
			want, transfers := provider.StatusSucceeded, 1
			if outcome == "deny" {
				want, transfers = provider.StatusDeclined, 0
			}
			require.Equal(t, string(want), back.Query().Get("status"))
			got, err = e.a.ConfirmPayout(ctx, provider.ConfirmRequest{ProviderID: res.ProviderID})
			require.NoError(t, err)
			require.Equal(t, want, got.Status)
			require.Equal(t, transfers, e.srv.Count(EntryTransfer, r.OperationID))
		})
	}
	t.Run("saved card is challenged too", func(t *testing.T) {
		pr := payReq("4000000000003220")
		pr.SaveCard = true
		res := e.pay(pr)
		e.submit(res.NextAction.URL, url.Values{"outcome": {"approve"}})
		paid, err := e.a.Status(ctx, provider.StatusRequest{OperationID: pr.OperationID})
		require.NoError(t, err)
		r := payoutReq("")
		r.Instrument = provider.Instrument{SavedToken: paid.CardToken}
		got, err := e.a.CreatePayout(ctx, r)
		require.NoError(t, err)
		require.Equal(t, provider.StatusRequiresAction, got.Status)
	})
}

func TestPayoutInstruments(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	for token, want := range map[string]provider.Status{
		"sandbox_success":  provider.StatusSucceeded,
		"sandbox_declined": provider.StatusDeclined,
		"sandbox_3ds":      provider.StatusRequiresAction,
	} {
		t.Run(token, func(t *testing.T) {
			r := payoutReq("")
			payload, _ := json.Marshal(map[string]string{"token": token})
			r.Instrument = provider.Instrument{Wallet: &provider.Wallet{Type: "samsung_pay", Payload: payload}}
			res, err := e.a.CreatePayout(ctx, r)
			require.NoError(t, err)
			require.Equal(t, want, res.Status)
		})
	}
	t.Run("mobile is unsupported", func(t *testing.T) {
		r := payoutReq("")
		r.Instrument = provider.Instrument{Phone: "+12025550100"}
		_, err := e.a.CreatePayout(ctx, r)
		kind(t, err, provider.Unsupported)
	})
	t.Run("profile without debit", func(t *testing.T) {
		e.a.Profiles["nodebit"] = provider.Capabilities{provider.Charge}
		defer delete(e.a.Profiles, "nodebit")
		r := payoutReq("4242424242424242")
		r.Profile = "nodebit"
		_, err := e.a.CreatePayout(ctx, r)
		kind(t, err, provider.Unsupported)
	})
}
