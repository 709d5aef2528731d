package server

import (
	"context"
	"net/http"

	"github.com/paygate/paygate/internal/instrument"
	"github.com/paygate/paygate/internal/openapi"
	"github.com/paygate/paygate/internal/payment"
	"github.com/paygate/paygate/internal/store"
)

// createDirect is createDirectPayment (POST /payments/direct).
func (s *Server) createDirect() http.Handler {
	return write(s, writeSpec{schema: "DirectPayment"},
		func(ctx context.Context, tx *store.Tx, c *call, in *openapi.DirectPayment) (answer, error) {
			d := payment.NewDirect{
				NewSession: newSession(&in.CreatePayment), OperationMode: deref(in.OperationMode),
				Method: in.PaymentMethod.Type, Wallet: in.PaymentMethod.Wallet, PayloadMode: deref(in.PaymentMethod.PayloadMode),
				AcceptHeader: c.r.Header.Get("Accept"), UserAgent: c.r.Header.Get("User-Agent"), PayerIP: s.proxies.ClientIP(c.r),
			}
			if pc := in.PaymentMethod.Card; pc != nil {
				d.Card = &instrument.Card{Number: pc.Number, ExpMonth: pc.ExpireMonth, ExpYear: pc.ExpireYear,
					CVV: deref(pc.CVV), Holder: deref(pc.Cardholder)}
			}
			if in.PaymentMethod.Mobile != nil {
				d.Phone = in.PaymentMethod.Mobile.Phone
			}
			if in.Device != nil {
				d.Device = mustJSON(in.Device)
			}
			p, err := s.payments.CreateDirect(ctx, tx, c.key, d)
			if err != nil {
				return answer{}, err
			}
			return answer{http.StatusCreated, s.paymentViewAt(p, s.keyNow(ctx))}, nil
		})
}

// getPayment is getPayment (GET /payments/{id}); another key's payment
// is 404.
func (s *Server) getPayment() http.Handler {
	return s.read(func(ctx context.Context, c *call) (answer, error) {
		p, err := byID(ctx, c, s.payments.FindForKey)
		if err != nil {
			return answer{}, err
		}
		return answer{http.StatusOK, s.paymentViewAt(p, s.keyNow(ctx))}, nil
	})
}

// paymentOp serves the payment operations confirmPayment (POST
// /payments/{id}/confirm), capturePayment (POST /payments/{id}/capture),
// cancelPayment (POST /payments/{id}/cancel) and refundPayment (POST
// /payments/{id}/refunds): lock the payment in the request's transaction,
// then let fn check its status and open operations and queue the work. The
// lock makes the check and the queueing one step: of concurrent captures,
// cancels or refunds (from any number of processes) each sees what the one
// before it queued, so exactly one is accepted where only one fits
// (docs/payments.md, "Concurrent operations").
func paymentOp[T any](s *Server, schema string, fn func(ctx context.Context, tx *store.Tx, p *payment.Payment, in *T) (any, error)) http.Handler {
	return write(s, writeSpec{schema: schema, optional: true},
		func(ctx context.Context, tx *store.Tx, c *call, in *T) (answer, error) {
			id, err := pathID(c.r)
			if err != nil {
				return answer{}, err
			}
			p, err := s.payments.LockForKey(ctx, tx, c.key.ID, id)
			if err != nil {
				return answer{}, err
			}
			out, err := fn(ctx, tx, p, in)
			if err != nil {
				return answer{}, err
			}
			return answer{http.StatusOK, out}, nil
		})
}

func (s *Server) confirmPayment() http.Handler {
	return paymentOp(s, "ConfirmPayment", func(ctx context.Context, tx *store.Tx, p *payment.Payment, in *openapi.ConfirmPayment) (any, error) {
		p, err := s.payments.Confirm(ctx, tx, p, deref(in.Value))
		if err != nil {
			return nil, err
		}
		return s.paymentViewAt(p, s.keyNow(ctx)), nil
	})
}

func (s *Server) capturePayment() http.Handler {
	return paymentOp(s, "Amount", func(ctx context.Context, tx *store.Tx, p *payment.Payment, in *openapi.Amount) (any, error) {
		p, err := s.payments.Capture(ctx, tx, p, in.AmountMinor)
		if err != nil {
			return nil, err
		}
		return s.paymentViewAt(p, s.keyNow(ctx)), nil
	})
}

// noBody is the body of an endpoint that takes none (cancelPayment (POST
// /payments/{id}/cancel)).
type noBody struct{}

func (s *Server) cancelPayment() http.Handler {
	return paymentOp(s, "", func(ctx context.Context, tx *store.Tx, p *payment.Payment, _ *noBody) (any, error) {
		p, err := s.payments.Cancel(ctx, tx, p)
		if err != nil {
			return nil, err
		}
		return s.paymentViewAt(p, s.keyNow(ctx)), nil
	})
}

func (s *Server) refundPayment() http.Handler {
	return paymentOp(s, "Amount", func(ctx context.Context, tx *store.Tx, p *payment.Payment, in *openapi.Amount) (any, error) {
		p, _, err := s.payments.Refund(ctx, tx, p, in.AmountMinor)
		if err != nil {
			return nil, err
		}
		return s.paymentViewAt(p, s.keyNow(ctx)), nil
	})
}

// listRefunds is listPaymentRefunds (GET /payments/{id}/refunds).
// listAttempts is listPaymentAttempts (GET /payments/{id}/attempts).
func (s *Server) listAttempts() http.Handler {
	return s.read(func(ctx context.Context, c *call) (answer, error) {
		p, err := byID(ctx, c, s.payments.FindForKey)
		if err != nil {
			return answer{}, err
		}
		as, err := s.payments.Attempts(ctx, p)
		if err != nil {
			return answer{}, err
		}
		out := openapi.PaymentAttemptList{Items: []openapi.PaymentAttempt{}}
		for _, a := range as {
			out.Items = append(out.Items, openapi.PaymentAttempt{Channel: a.Channel, Status: string(a.Status),
				DeclineCode: a.DeclineCode, Reason: a.Reason, CreatedAt: openapi.Time(a.CreatedAt)})
		}
		return answer{http.StatusOK, out}, nil
	})
}

func (s *Server) listRefunds() http.Handler {
	return s.read(func(ctx context.Context, c *call) (answer, error) {
		p, err := byID(ctx, c, s.payments.FindForKey)
		if err != nil {
			return answer{}, err
		}
		rs, err := s.payments.Refunds(ctx, p)
		if err != nil {
			return answer{}, err
		}
		out := openapi.RefundList{Items: []openapi.Refund{}}
		for _, r := range rs {
			w := openapi.Refund{ID: r.ID, AmountMinor: r.AmountMinor, Status: r.Status, CreatedAt: openapi.Time(r.CreatedAt)}
			if r.CompletedAt != nil {
				w.CompletedAt = openapi.Time(*r.CompletedAt)
			}
			out.Items = append(out.Items, w)
		}
		return answer{http.StatusOK, out}, nil
	})
}
