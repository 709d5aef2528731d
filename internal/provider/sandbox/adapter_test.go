package sandbox

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/sandbox/wire"
)

// stub is a fake acquirer that gives one fixed answer, to drive the
// adapter's error mapping through every kind.
func stub(t *testing.T, h http.HandlerFunc) (*Adapter, *atomic.Int32) {
	t.Helper()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		h(w, r)
	}))
	t.Cleanup(srv.Close)
	return NewAdapter(srv.URL+"/", "k", &http.Client{Timeout: 2 * time.Second}), &hits
}

func answerWith(status int, header, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		if k, v, ok := strings.Cut(header, ": "); ok {
			w.Header().Set(k, v)
		}
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

func TestAdapterErrorKinds(t *testing.T) {
	leak := `{"error":{"code":"x","message":"RAW ACQUIRER TEXT 4242424242424242"}}`
	tests := []struct {
		name  string
		h     http.HandlerFunc
		kind  provider.ErrorKind
		retry time.Duration
	}{
		{"503", answerWith(503, "", leak), provider.Transient, 0},
		{"500", answerWith(500, "", "<html>oops</html>"), provider.Transient, 0},
		{"504", answerWith(504, "", ""), provider.OutcomeUnknown, 0},
		{"404", answerWith(404, "", leak), provider.NotFound, 0},
		{"400", answerWith(400, "", leak), provider.Invalid, 0},
		{"401", answerWith(401, "", ""), provider.Invalid, 0},
		{"422 capability", answerWith(422, "", `{"error":{"code":"capability_not_supported","message":"m"}}`), provider.Unsupported, 0},
		{"422", answerWith(422, "", leak), provider.Invalid, 0},
		{"409 state", answerWith(409, "", `{"error":{"code":"invalid_state","message":"m"}}`), provider.Invalid, 0},
		{"409 in progress", answerWith(409, "", `{"error":{"code":"idempotency_request_in_progress","message":"m"}}`), provider.Transient, 0},
		{"429 seconds", answerWith(429, "Retry-After: 7", ""), provider.RateLimited, 7 * time.Second},
		{"429 no header", answerWith(429, "", ""), provider.RateLimited, time.Second},
		{"302", answerWith(302, "", ""), provider.Unreadable, 0},
		{"200 not JSON", answerWith(200, "", "<html>RAW 4242424242424242</html>"), provider.Unreadable, 0},
		{"200 cut JSON", answerWith(200, "", `{"object":"payment","id":"pay_1","sta`), provider.Unreadable, 0},
		{"200 unknown status", answerWith(200, "", `{"object":"payment","id":"pay_1","status":"weird"}`), provider.Unreadable, 0},
		{"200 not a payment", answerWith(200, "", `{"object":"payout","id":"po_1","status":"succeeded"}`), provider.Unreadable, 0},
		{"200 action without next_action", answerWith(200, "", `{"object":"payment","id":"pay_1","status":"requires_action"}`), provider.Unreadable, 0},
		{"connection cut", func(w http.ResponseWriter, _ *http.Request) {
			c, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				c.Close()
			}
		}, provider.OutcomeUnknown, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, _ := stub(t, tt.h)
			_, err := a.Pay(context.Background(), payReq("4242424242424242"))
			kind(t, err, tt.kind)
			require.NotContains(t, err.Error(), "4242424242424242")
			require.NotContains(t, err.Error(), "RAW")
			if tt.retry > 0 {
				require.Equal(t, tt.retry, err.(*provider.Error).RetryAfter)
			}
		})
	}
}

func TestAdapterConnectionRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	ln.Close()
	a := NewAdapter("http://"+addr, "k", nil)
	_, err = a.Pay(context.Background(), payReq("4242424242424242"))
	kind(t, err, provider.Transient)
	_, err = a.Status(context.Background(), provider.StatusRequest{OperationID: op()})
	kind(t, err, provider.Transient)
}

// The request as the sandbox receives it: key, profile and card data in the
// body only.
func TestAdapterRequest(t *testing.T) {
	var got *http.Request
	var body string
	a, _ := stub(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got, body = r, string(b)
		w.WriteHeader(201)
		io.WriteString(w, `{"object":"payment","id":"pay_1","status":"succeeded"}`)
	})
	r := payReq("4242424242424242")
	r.Profile = wire.ProfileRefunds
	_, err := a.Pay(context.Background(), r)
	require.NoError(t, err)
	require.Equal(t, "/v1/payments", got.URL.String())
	require.Equal(t, "Bearer k", got.Header.Get("Authorization"))
	require.Equal(t, r.OperationID, got.Header.Get("Idempotency-Key"))
	require.Equal(t, wire.ProfileRefunds, got.Header.Get(wire.ProfileHeader))
	require.Contains(t, body, `"number":"4242424242424242"`)
	require.Contains(t, body, `"intent":"charge"`)
}

func TestAdapterRefusesLocally(t *testing.T) {
	a, hits := stub(t, answerWith(500, "", ""))
	ctx := context.Background()
	two := payReq("4242424242424242")
	two.Instrument.Phone = "+12025550100"
	noOp := payReq("4242424242424242")
	noOp.OperationID = ""
	badWallet := payReq("")
	badWallet.Instrument = provider.Instrument{Wallet: &provider.Wallet{Type: "apple_pay", Payload: []byte("{")}}
	unknownProfile := payReq("4242424242424242")
	unknownProfile.Profile = "nope"
	for name, call := range map[string]func() error{
		"two instruments": func() error { _, err := a.Pay(ctx, two); return err },
		"no operation id": func() error { _, err := a.Pay(ctx, noOp); return err },
		"wallet not JSON": func() error { _, err := a.Pay(ctx, badWallet); return err },
		"unknown profile": func() error { _, err := a.Pay(ctx, unknownProfile); return err },
		"BIN is a PAN":    func() error { _, err := a.BIN(ctx, "4242424242424242"); return err },
		"BIN of 7":        func() error { _, err := a.BIN(ctx, "4242424"); return err },
		"capture, no id":  func() error { _, err := a.Capture(ctx, provider.CaptureRequest{OperationID: op()}); return err },
		"verify, no code": func() error {
			_, err := a.Verify(ctx, provider.VerifyRequest{OperationID: op(), ProviderID: "v"})
			return err
		},
		"status, no op id": func() error { _, err := a.Status(ctx, provider.StatusRequest{}); return err },
	} {
		t.Run(name, func(t *testing.T) { kind(t, call(), provider.Invalid) })
	}
	require.Zero(t, hits.Load(), "nothing invalid is sent")
}

func TestAdapterCapabilities(t *testing.T) {
	a := NewAdapter("http://127.0.0.1:1", "k", nil)
	require.Equal(t, "sandbox", a.Name())
	def, err := a.Capabilities("")
	require.NoError(t, err)
	require.False(t, def.Has(provider.Refund))
	for _, c := range []provider.Capability{provider.Charge, provider.Authorize, provider.Capture, provider.Cancel,
		provider.Lookup, provider.Debit, provider.ThreeDS, provider.WalletToken, provider.WalletDirect,
		provider.Mobile, provider.SavedCards, provider.HostedPage} {
		require.True(t, def.Has(c), c)
	}
	ref, err := a.Capabilities(wire.ProfileRefunds)
	require.NoError(t, err)
	require.True(t, ref.Has(provider.Refund))
	_, err = a.Capabilities("gold")
	kind(t, err, provider.Invalid)
}

// op, testCard, payReq and kind mirror the acquirer's test helpers
// (acquirer/helpers_test.go): the two packages share no test code.
func op() string { return "op_" + uuid.NewString() }

func testCard(number string) *provider.Card {
	return &provider.Card{Number: number, ExpMonth: 12, ExpYear: 2032, CVV: "987", Holder: "Ada Lovelace"}
}

func payReq(number string) provider.PayRequest {
	return provider.PayRequest{OperationID: op(), AmountMinor: 1999, Currency: "USD", OrderID: "order-1",
		Instrument: provider.Instrument{Card: testCard(number)}, Locale: "en"}
}

// kind asserts err is a *provider.Error of kind k.
func kind(t *testing.T, err error, k provider.ErrorKind) {
	t.Helper()
	require.Error(t, err)
	require.Equal(t, k, provider.KindOf(err), "error: %v", err)
}
