package server

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/paygate/paygate/internal/fault"
	"github.com/paygate/paygate/internal/payment"
	"github.com/paygate/paygate/internal/payout"
	"github.com/paygate/paygate/internal/store"
	"github.com/paygate/paygate/internal/subscription"
	"github.com/paygate/paygate/internal/verification"
)

// TestConflictAnswer: every resource's lost compare-and-set answers with
// the resource's own state code and name, retryable, no Retry-After
// (docs/api.md, "Idempotency"), a payment's byte for byte as it always
// has; and it is not a *fault.Error, so the idempotency pipeline does not
// store it.
func TestConflictAnswer(t *testing.T) {
	want := func(code, resource string) string {
		return `{"error":{"code":"` + code + `","message":"the ` + resource +
			` changed while this request ran; read it and retry","field":null,"request_id":"req-1","retryable":true,"details":{}}}` + "\n"
	}
	s := &Server{log: slog.New(slog.DiscardHandler)}
	for _, tc := range []struct {
		name   string
		err    error
		status int
		want   string
	}{
		{"payment", payment.ErrConflict, 409, want("invalid_payment_state", "payment")},
		{"payment, as the store names it", store.ErrConflict, 409, want("invalid_payment_state", "payment")},
		{"payout", payout.ErrConflict, 409, want("invalid_payout_state", "payout")},
		// A verification has no 409 of its own: its state moved, so it is
		// not (or no longer) awaiting the code as the request read it.
		{"verification", verification.ErrConflict, 422, want("verification_not_awaiting_code", "verification")},
		{"subscription", subscription.ErrConflict, 409, want("invalid_subscription_state", "subscription")},
		{"wrapped", fmt.Errorf("step: %w", subscription.ErrConflict), 409, want("invalid_subscription_state", "subscription")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, ok := fault.As(tc.err); ok {
				t.Fatal("a *fault.Error: the pipeline would store it")
			}
			r := httptest.NewRequest(http.MethodPost, "/api/v1/x", nil)
			r = r.WithContext(context.WithValue(r.Context(), requestIDKey, "req-1"))
			w := httptest.NewRecorder()
			s.failErr(w, r, tc.err)
			if w.Code != tc.status {
				t.Errorf("status %d, want %d", w.Code, tc.status)
			}
			if got := w.Body.String(); got != tc.want {
				t.Errorf("body\n got %s\nwant %s", got, tc.want)
			}
			if h := w.Header().Get("Retry-After"); h != "" {
				t.Errorf("Retry-After %q, want none", h)
			}
			if h := w.Header().Get("Content-Type"); h != "application/json" {
				t.Errorf("Content-Type %q", h)
			}
		})
	}
}
