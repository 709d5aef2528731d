package acquirer

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/card"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/sandbox"
)

func TestTestCardsAreCardNumbers(t *testing.T) {
	for number := range testCards {
		require.True(t, card.Luhn(number), number)
	}
}

func TestPayTestCards(t *testing.T) {
	e := newEnv(t)
	tests := []struct {
		name      string
		number    string
		authorize bool
		expYear   int
		status    provider.Status
		decline   string
		action    string
		ledger    string // the entry kind expected, or none
	}{
		{"visa succeeds", "4242424242424242", false, 0, provider.StatusSucceeded, "", "", EntryCharge},
		{"mastercard succeeds", "5555555555554444", false, 0, provider.StatusSucceeded, "", "", EntryCharge},
		{"amex succeeds", "378282246310005", false, 0, provider.StatusSucceeded, "", "", EntryCharge},
		{"any other valid number succeeds", "4111111111111111", false, 0, provider.StatusSucceeded, "", "", EntryCharge},
		{"authorize holds", "4242424242424242", true, 0, provider.StatusAuthorized, "", "", EntryHold},
		{"3DS challenge", "4000000000003220", false, 0, provider.StatusRequiresAction, "", "three_ds", ""},
		{"3DS challenge, then declined", "4000008400001629", false, 0, provider.StatusRequiresAction, "", "three_ds", ""},
		{"declined", "4000000000000002", false, 0, provider.StatusDeclined, "card_declined", "", ""},
		{"insufficient funds", "4000000000009995", false, 0, provider.StatusDeclined, "insufficient_funds", "", ""},
		{"expired card", "4000000000000069", false, 0, provider.StatusDeclined, "expired_card", "", ""},
		{"incorrect cvc", "4000000000000127", false, 0, provider.StatusDeclined, "incorrect_cvc", "", ""},
		{"provider error", "4000000000000119", false, 0, provider.StatusFailed, "processing_error", "", ""},
		{"past expiry date", "4242424242424242", false, 2029, provider.StatusDeclined, "expired_card", "", ""},
		{"fails Luhn", "4242424242424241", false, 0, provider.StatusDeclined, "invalid_card_number", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := payReq(tt.number)
			r.Authorize = tt.authorize
			if tt.expYear != 0 {
				r.Instrument.Card.ExpYear = tt.expYear
			}
			res := e.pay(r)
			require.Equal(t, tt.status, res.Status)
			require.Equal(t, tt.decline, res.DeclineCode)
			require.NotEmpty(t, res.ProviderID)
			if tt.decline != "" {
				require.NotEmpty(t, res.DeclineMessage)
				require.NotContains(t, res.DeclineMessage, "SBX", "the sandbox's own text must not reach a payer")
			}
			if tt.action != "" {
				require.Equal(t, tt.action, res.NextAction.Type)
				require.Equal(t, e.run.URL+"/3ds/"+res.ProviderID, res.NextAction.URL)
			}
			if tt.authorize {
				require.Equal(t, e.clock.Now().Add(7*24*time.Hour), *res.AuthorizationExpiresAt)
			}
			total := e.srv.Count("", r.OperationID)
			if tt.ledger == "" {
				require.Zero(t, total)
				return
			}
			require.Equal(t, 1, total)
			require.Equal(t, 1, e.srv.Count(tt.ledger, r.OperationID))
			require.Equal(t, 1, e.srv.Count(tt.ledger, res.ProviderID))
			require.NotNil(t, res.BankReference)
			require.Equal(t, card.Scheme(tt.number), res.CardScheme)
		})
	}
}

func TestPayWallets(t *testing.T) {
	e := newEnv(t)
	tests := []struct {
		token, mode string
		status      provider.Status
		decline     string
	}{
		{"sandbox_success", "token", provider.StatusSucceeded, ""},
		{"sandbox_success", "direct", provider.StatusSucceeded, ""},
		{"sandbox_declined", "token", provider.StatusDeclined, "card_declined"},
		{"sandbox_3ds", "token", provider.StatusRequiresAction, ""},
	}
	for _, tt := range tests {
		t.Run(tt.token+"/"+tt.mode, func(t *testing.T) {
			r := payReq("")
			payload, _ := json.Marshal(map[string]string{"token": tt.token})
			r.Instrument = provider.Instrument{Wallet: &provider.Wallet{Type: "apple_pay", Mode: tt.mode, Payload: payload}}
			res := e.pay(r)
			require.Equal(t, tt.status, res.Status)
			require.Equal(t, tt.decline, res.DeclineCode)
		})
	}
	t.Run("unknown token is invalid", func(t *testing.T) {
		r := payReq("")
		r.Instrument = provider.Instrument{Wallet: &provider.Wallet{Type: "google_pay", Payload: json.RawMessage(`{"token":"x"}`)}}
		_, err := e.a.Pay(context.Background(), r)
		kind(t, err, provider.Invalid)
	})
}

func TestPayMobile(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	mobile := func(phone string) provider.PayRequest {
		r := payReq("")
		r.Instrument = provider.Instrument{Phone: phone}
		return r
	}

	r := mobile("+12025550100")
	res := e.pay(r)
	require.Equal(t, provider.StatusRequiresAction, res.Status)
	require.Equal(t, "otp", res.NextAction.Type)
	require.Zero(t, e.srv.Count(EntryCharge, r.OperationID))
	confirmOp := op()
	res, err := e.a.Confirm(ctx, provider.ConfirmRequest{OperationID: confirmOp, ProviderID: res.ProviderID, Code: "123456"})
	require.NoError(t, err)
	require.Equal(t, provider.StatusSucceeded, res.Status)
	require.Equal(t, 1, e.srv.Count(EntryCharge, r.OperationID))
	require.Equal(t, 1, e.srv.Count(EntryCharge, confirmOp))

	r = mobile("+12025550100")
	res = e.pay(r)
	res, err = e.a.Confirm(ctx, provider.ConfirmRequest{OperationID: op(), ProviderID: res.ProviderID, Code: "000000"})
	require.NoError(t, err)
	require.Equal(t, provider.StatusDeclined, res.Status)
	require.Equal(t, "authentication_failed", res.DeclineCode)
	require.Zero(t, e.srv.Count("", r.OperationID))

	res = e.pay(mobile("+12025550101"))
	require.Equal(t, provider.StatusDeclined, res.Status)

	t.Run("authorize is unsupported", func(t *testing.T) {
		r := mobile("+12025550100")
		r.Authorize = true
		_, err := e.a.Pay(ctx, r)
		kind(t, err, provider.Unsupported)
		body := `{"intent":"authorize","amount_minor":100,"currency":"USD","payment_method":{"type":"mobile","phone":"+12025550100"}}`
		resp, b := e.raw("POST", "/v1/payments", op(), "", body)
		require.Equal(t, http.StatusUnprocessableEntity, resp.StatusCode)
		require.Equal(t, "capability_not_supported", errCode(t, b))
	})
}

func TestIdempotency(t *testing.T) {
	e := newEnv(t)
	r := payReq("4242424242424242")
	first := e.pay(r)
	second := e.pay(r)
	require.Equal(t, first, second)
	require.Equal(t, 1, e.srv.Count(EntryCharge, r.OperationID))

	t.Run("replay is marked", func(t *testing.T) {
		body := `{"intent":"charge","amount_minor":100,"currency":"USD","payment_method":{"type":"wallet","wallet":{"type":"apple_pay","mode":"token","payload":{"token":"sandbox_success"}}}}`
		key := op()
		resp1, b1 := e.raw("POST", "/v1/payments", key, "", body)
		resp2, b2 := e.raw("POST", "/v1/payments", key, "", body)
		require.Equal(t, http.StatusCreated, resp1.StatusCode)
		require.Equal(t, http.StatusCreated, resp2.StatusCode)
		require.Equal(t, b1, b2)
		require.Empty(t, resp1.Header.Get("Idempotent-Replayed"))
		require.Equal(t, "true", resp2.Header.Get("Idempotent-Replayed"))
	})
	t.Run("same key, other request", func(t *testing.T) {
		other := r
		other.AmountMinor++
		_, err := e.a.Pay(context.Background(), other)
		kind(t, err, provider.Invalid)
		require.Equal(t, 1, e.srv.Count("", r.OperationID))
	})
	t.Run("no key", func(t *testing.T) {
		resp, b := e.raw("POST", "/v1/payments", "", "", `{}`)
		require.Equal(t, http.StatusBadRequest, resp.StatusCode)
		require.Equal(t, "idempotency_key_required", errCode(t, b))
	})
}

func TestPayStorm(t *testing.T) {
	e := newEnv(t)
	r := payReq("5555555555554444")
	const n = 50
	results := make([]provider.PayResult, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { results[i], errs[i] = e.a.Pay(context.Background(), r) })
	}
	wg.Wait()
	for i := range n {
		require.NoError(t, errs[i])
		require.Equal(t, results[0], results[i])
	}
	require.Equal(t, 1, e.srv.Count(EntryCharge, r.OperationID))
	require.Len(t, e.srv.Ledger(), 1)
}

// The late card: the charge is made, the answer withheld until the client
// gives up; the status inquiry and a retry find the one charge.
func TestLateCard(t *testing.T) {
	e := newEnv(t)
	impatient := sandbox.NewAdapter(e.run.URL, e.run.APIKey, &http.Client{Timeout: 200 * time.Millisecond})
	r := payReq("4000000000000341")
	_, err := impatient.Pay(context.Background(), r)
	kind(t, err, provider.OutcomeUnknown)

	res, err := impatient.Status(context.Background(), provider.StatusRequest{OperationID: r.OperationID})
	require.NoError(t, err)
	require.Equal(t, provider.StatusSucceeded, res.Status)
	require.Equal(t, 1, e.srv.Count(EntryCharge, r.OperationID))

	again, err := impatient.Pay(context.Background(), r)
	require.NoError(t, err)
	require.Equal(t, res.ProviderID, again.ProviderID)
	require.Equal(t, 1, e.srv.Count(EntryCharge, r.OperationID))
}

// The unreadable card: the first answer and two status queries cannot be
// read; the third query can (docs/design/decisions.md section 7:
// manual_review on the way).
func TestUnreadableCard(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	r := payReq("4000000000000259")
	_, err := e.a.Pay(ctx, r)
	kind(t, err, provider.Unreadable)
	for range 2 {
		_, err = e.a.Status(ctx, provider.StatusRequest{OperationID: r.OperationID})
		kind(t, err, provider.Unreadable)
	}
	res, err := e.a.Status(ctx, provider.StatusRequest{OperationID: r.OperationID})
	require.NoError(t, err)
	require.Equal(t, provider.StatusSucceeded, res.Status)
	require.Equal(t, 1, e.srv.Count(EntryCharge, r.OperationID))
}

func TestStatusUnknownOperation(t *testing.T) {
	e := newEnv(t)
	_, err := e.a.Status(context.Background(), provider.StatusRequest{OperationID: op()})
	kind(t, err, provider.NotFound)
}

func TestSavedCard(t *testing.T) {
	e := newEnv(t)
	r := payReq("4000000000003220") // saved after its challenge; later payments skip it
	r.SaveCard = true
	res := e.pay(r)
	_, body := e.submit(res.NextAction.URL, map[string][]string{"outcome": {"approve"}})
	require.Contains(t, body, "paid")
	res, err := e.a.Status(context.Background(), provider.StatusRequest{OperationID: r.OperationID})
	require.NoError(t, err)
	require.Regexp(t, `^tok_`, res.CardToken)
	require.Equal(t, "visa", res.CardScheme)
	require.Equal(t, 2032, res.CardExpYear)

	again := payReq("")
	again.Instrument = provider.Instrument{SavedToken: res.CardToken}
	got := e.pay(again)
	require.Equal(t, provider.StatusSucceeded, got.Status)
	require.Equal(t, 1, e.srv.Count(EntryCharge, again.OperationID))

	again.OperationID = op()
	again.Instrument.SavedToken = "tok_unknown"
	_, err = e.a.Pay(context.Background(), again)
	kind(t, err, provider.Invalid)
}
