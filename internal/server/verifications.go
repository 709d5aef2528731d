package server

import (
	"context"
	"net/http"

	"github.com/paygate/paygate/internal/openapi"
	"github.com/paygate/paygate/internal/store"
	"github.com/paygate/paygate/internal/verification"
)

// createVerification is createCardVerification (POST /card-verifications).
func (s *Server) createVerification() http.Handler {
	return write(s, writeSpec{schema: "CreateCardVerification"},
		func(ctx context.Context, tx *store.Tx, c *call, in *openapi.CreateCardVerification) (answer, error) {
			n := verification.New{OrderID: in.OrderID, Currency: in.Currency, Description: deref(in.Description),
				Card: verification.Card{Number: in.Card.Number, ExpMonth: in.Card.ExpireMonth,
					ExpYear: in.Card.ExpireYear, CVV: in.Card.CVV}}
			if in.Metadata != nil {
				n.Metadata = mustJSON(in.Metadata)
			}
			v, err := s.verifications.Create(ctx, tx, c.key, n)
			if err != nil {
				return answer{}, err
			}
			return answer{http.StatusCreated, verificationView(v)}, nil
		})
}

// getVerification is getCardVerification (GET /card-verifications/{id}).
func (s *Server) getVerification() http.Handler {
	return s.read(func(ctx context.Context, c *call) (answer, error) {
		v, err := byID(ctx, c, s.verifications.FindForKey)
		if err != nil {
			return answer{}, err
		}
		return answer{http.StatusOK, verificationView(v)}, nil
	})
}

// verifyVerification is verifyCardVerification (POST
// /card-verifications/{id}/verify): the verification is locked in the
// request's transaction, so that concurrent codes are counted one after
// another (docs/design/decisions.md section 15).
func (s *Server) verifyVerification() http.Handler {
	return write(s, writeSpec{schema: "VerifyCardVerification"},
		func(ctx context.Context, tx *store.Tx, c *call, in *openapi.VerifyCardVerification) (answer, error) {
			id, err := pathID(c.r)
			if err != nil {
				return answer{}, err
			}
			v, err := s.verifications.LockForKey(ctx, tx, c.key.ID, id)
			if err != nil {
				return answer{}, err
			}
			if v, err = s.verifications.Verify(ctx, tx, v, in.Code); err != nil {
				return answer{}, err
			}
			return answer{http.StatusOK, verificationView(v)}, nil
		})
}

// verificationView is the OpenAPI schema CardVerification: no card number
// and no code, only the mask.
func verificationView(v *verification.Verification) openapi.CardVerification {
	out := openapi.CardVerification{
		VerificationID: v.ID, OrderID: v.OrderID, Status: string(v.Status), Final: v.Status.Final(),
		CardMask: v.CardMask, DeclineCode: v.DeclineCode, ClientDescription: verification.ClientDescription(v),
		VerifyAttempts: v.VerifyAttempts, CreatedAt: openapi.Time(v.CreatedAt), UpdatedAt: openapi.Time(v.UpdatedAt),
	}
	if v.Status == verification.CodeSent {
		out.NextAction = &openapi.VerificationNextAction{Type: "lookup"}
	}
	if b := v.BankReference; b != nil {
		out.BankReference = &openapi.BankReference{PaymentID: b.PaymentID, Name: b.Name}
	}
	return out
}
