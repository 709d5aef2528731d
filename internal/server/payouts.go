package server

import (
	"context"
	"net/http"

	"github.com/paygate/paygate/internal/instrument"
	"github.com/paygate/paygate/internal/openapi"
	"github.com/paygate/paygate/internal/payout"
	"github.com/paygate/paygate/internal/store"
)

// createPayout is createPayout (POST /payouts).
func (s *Server) createPayout() http.Handler {
	return write(s, writeSpec{schema: "CreatePayout"},
		func(ctx context.Context, tx *store.Tx, c *call, in *openapi.CreatePayout) (answer, error) {
			n := payout.New{OrderID: in.OrderID, AmountMinor: in.AmountMinor, Currency: in.Currency, Account: in.Account,
				Method: in.PayoutMethod.Type, SavedCardID: deref(in.PayoutMethod.SavedCardID), Wallet: in.PayoutMethod.Wallet,
				PayloadMode: deref(in.PayoutMethod.PayloadMode), Description: deref(in.Description),
				ReturnURL: deref(in.ReturnURL), Customer: customer(in.Customer), PayerIP: s.proxies.ClientIP(c.r)}
			if pc := in.PayoutMethod.Card; pc != nil {
				n.Card = &instrument.Card{Number: pc.Number, ExpMonth: pc.ExpireMonth, ExpYear: pc.ExpireYear,
					CVV: deref(pc.CVV), Holder: deref(pc.Cardholder)}
			}
			if in.Device != nil {
				n.Device = mustJSON(in.Device)
			}
			if in.Metadata != nil {
				n.Metadata = mustJSON(in.Metadata)
			}
			p, err := s.payouts.Create(ctx, tx, c.key, n)
			if err != nil {
				return answer{}, err
			}
			return answer{http.StatusCreated, payoutView(p)}, nil
		})
}

// getPayout is getPayout (GET /payouts/{id}); another key's payout, and a
// payment's id, are 404.
func (s *Server) getPayout() http.Handler {
	return s.read(func(ctx context.Context, c *call) (answer, error) {
		p, err := byID(ctx, c, s.payouts.FindForKey)
		if err != nil {
			return answer{}, err
		}
		return answer{http.StatusOK, payoutView(p)}, nil
	})
}

// confirmPayout is confirmPayout (POST /payouts/{id}/confirm): the payout
// is locked in the request's transaction, so of concurrent confirms one
// is accepted and the others find it processing (409).
func (s *Server) confirmPayout() http.Handler {
	return write(s, writeSpec{schema: "ConfirmPayout", optional: true},
		func(ctx context.Context, tx *store.Tx, c *call, in *openapi.ConfirmPayout) (answer, error) {
			id, err := pathID(c.r)
			if err != nil {
				return answer{}, err
			}
			p, err := s.payouts.LockForKey(ctx, tx, c.key.ID, id)
			if err != nil {
				return answer{}, err
			}
			if p, err = s.payouts.Confirm(ctx, tx, p, deref(in.Value)); err != nil {
				return answer{}, err
			}
			return answer{http.StatusOK, payoutView(p)}, nil
		})
}

// payoutView is the Payout answer (OpenAPI schema Payout): no card number,
// no wallet payload, no code (the type has no field for them).
func payoutView(p *payout.Payout) openapi.Payout {
	out := openapi.Payout{PayoutID: p.ID, OrderID: p.OrderID, Status: string(p.Status), Final: p.Status.Final(),
		AmountMinor: p.AmountMinor, Currency: p.Currency, Account: p.Account, PayoutMethod: p.Method,
		CardMask: p.CardMask, DeclineCode: p.DeclineCode, ClientDescription: p.ClientDescription,
		CreatedAt: openapi.Time(p.CreatedAt), UpdatedAt: openapi.Time(p.UpdatedAt)}
	if p.Status == payout.RequiresAction && p.NextActionType != "" {
		out.NextAction = &openapi.NextAction{Type: p.NextActionType, URL: p.NextActionURL}
	}
	if p.BankReference != nil {
		out.BankReference = &openapi.BankReference{PaymentID: p.BankReference.PaymentID, Name: p.BankReference.Name}
	}
	return out
}
