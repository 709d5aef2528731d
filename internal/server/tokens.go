package server

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"unicode/utf8"

	"github.com/paygate/paygate/internal/fault"
	"github.com/paygate/paygate/internal/openapi"
	"github.com/paygate/paygate/internal/savedcard"
)

// tokenParams are the query parameters of listPaymentMethodTokens.
var tokenParams = []string{"customer_reference", "limit", "cursor"}

// listPaymentMethodTokens is listPaymentMethodTokens (GET
// /cabinet/v1/payment-method-tokens; docs/design/decisions.md section 13):
// the key's usable saved cards, newest first, a page at a time, optionally
// of one payer. Signed, admitted and scoped like /api/v1 (readQuery).
func (s *Server) listPaymentMethodTokens() http.Handler {
	return s.readQuery(tokenParams, func(ctx context.Context, c *call) (answer, error) {
		f, err := savedCardFilter(c.query)
		if err != nil {
			return answer{}, err
		}
		limit := f.Limit
		f.Limit++ // one more tells whether another page exists
		cards, err := s.savedCards.List(ctx, c.key.ID, f)
		if err != nil {
			return answer{}, err
		}
		out := openapi.PaymentMethodTokenList{Items: []openapi.PaymentMethodToken{}}
		if len(cards) > limit {
			last := cards[limit-1]
			cur := encodeCursor(last.CreatedAt, last.ID)
			out.NextCursor, cards = &cur, cards[:limit]
		}
		for _, sc := range cards {
			out.Items = append(out.Items, tokenView(sc))
		}
		return answer{http.StatusOK, out}, nil
	})
}

// savedCardFilter reads the query, which queryParams has checked, by the
// rules of the document's parameters.
func savedCardFilter(q url.Values) (savedcard.Filter, error) {
	f := savedcard.Filter{Limit: 20}
	bad := func(name, msg string) error { return fault.OnField(fault.ValidationError, name, msg) }
	if v, given := q["customer_reference"]; given {
		if n := utf8.RuneCountInString(v[0]); n < 1 || n > 128 {
			return f, bad("customer_reference", "must be 1 to 128 characters")
		}
		f.CustomerReference = v[0]
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			return f, bad("limit", "must be an integer from 1 to 100")
		}
		f.Limit = n
	}
	if v := q.Get("cursor"); v != "" {
		t, id, ok := decodeCursor(v)
		if !ok {
			return f, bad("cursor", "is not a cursor this API gave")
		}
		f.AfterCreated, f.AfterID = &t, id
	}
	return f, nil
}

// deletePaymentMethodToken is deletePaymentMethodToken (DELETE
// /cabinet/v1/payment-method-tokens/{id}; docs/design/decisions.md section
// 13): the card is marked deleted in one compare-and-set step, so it can no
// longer be used; another key's card, or one already deleted, is 404.
func (s *Server) deletePaymentMethodToken() http.Handler {
	return s.remove(func(ctx context.Context, c *call) error {
		id, err := pathID(c.r)
		if err != nil {
			return err
		}
		return s.savedCards.Delete(ctx, c.key.ID, id)
	})
}

// tokenView is a saved card as the cabinet shows it: the mask, never the
// number nor the provider's token.
func tokenView(c savedcard.Card) openapi.PaymentMethodToken {
	return openapi.PaymentMethodToken{ID: c.ID, CustomerReference: c.CustomerReference, MaskedCard: c.MaskedCard,
		Scheme: c.Scheme, ExpireMonth: c.ExpMonth, ExpireYear: c.ExpYear, CreatedAt: openapi.Time(c.CreatedAt)}
}
