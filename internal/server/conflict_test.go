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

// TestConflictAnswer: every resource's lost compare-and-set answers what a
// payment's always has (docs/api.md, "Idempotency"): 409
// invalid_payment_state, retryable, no Retry-After; and it is not a
// *fault.Error, so the idempotency pipeline does not store it.
func TestConflictAnswer(t *testing.T) {
	const want = `{"error":{"code":"invalid_payment_state","message":"the payment changed while this request ran; read it and retry","field":null,"request_id":"req-1","retryable":true,"details":{}}}` + "\n"
	s := &Server{log: slog.New(slog.DiscardHandler)}
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"payment", payment.ErrConflict},
		{"payment, as the store names it", store.ErrConflict},
		{"payout", payout.ErrConflict},
		{"verification", verification.ErrConflict},
		{"subscription", subscription.ErrConflict},
		{"wrapped", fmt.Errorf("step: %w", subscription.ErrConflict)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, ok := fault.As(tc.err); ok {
				t.Fatal("a *fault.Error: the pipeline would store it")
			}
			r := httptest.NewRequest(http.MethodPost, "/api/v1/x", nil)
			r = r.WithContext(context.WithValue(r.Context(), requestIDKey, "req-1"))
			w := httptest.NewRecorder()
			s.failErr(w, r, tc.err)
			if w.Code != http.StatusConflict {
				t.Errorf("status %d, want 409", w.Code)
			}
			if got := w.Body.String(); got != want {
				t.Errorf("body\n got %s\nwant %s", got, want)
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
