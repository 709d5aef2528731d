// Package savedcard holds a payer's saved card: a provider's card token kept,
// sealed, after a payment that asked for it (docs/design/decisions.md
// section 5), and the rules on who may use it. Payments save and charge
// them, payouts send money to them (subscriptions will charge them the
// same way). The SQL is the store's; Service lists and deletes a key's
// cards through it.
package savedcard

import (
	"errors"
	"time"

	"github.com/paygate/paygate/internal/fault"
)

// Card is a provider's card token kept for a payer (docs/design/decisions.md
// section 5): never the card number, only the token (sealed), the mask, the
// scheme and the expiry. It belongs to the access key that saved it, the
// payer's customer reference and the provider that issued the token.
type Card struct {
	ID                string
	AccessKeyID       string
	CustomerReference string
	Provider          string
	TokenSealed       []byte
	MaskedCard        string
	Scheme            string
	ExpMonth, ExpYear int
	CreatedAt         time.Time
	// DeletedAt is when the merchant deleted the card through the cabinet
	// (docs/design/decisions.md section 13); nil while it is usable. The
	// row stays so that the payments that used it keep their saved_card_id.
	DeletedAt *time.Time
}

// Filter selects a page of a key's usable saved cards, newest first
// (listPaymentMethodTokens (GET /cabinet/v1/payment-method-tokens)).
type Filter struct {
	CustomerReference string // "" for every payer
	// After is the (created_at, id) of the last card of the previous page.
	AfterCreated *time.Time
	AfterID      string
	Limit        int
}

// Sealer encrypts data at rest (the vault).
type Sealer interface {
	Seal(plaintext, aad []byte) ([]byte, error)
	Open(sealed, aad []byte) ([]byte, error)
}

// AAD binds a saved card's sealed token to the card, so that a token copied
// onto another card's row does not open.
func AAD(id string) []byte { return []byte("saved_card_token:" + id) }

// New returns c with token sealed into it, bound to c.ID; the caller fills
// every other field and stores the card.
func New(s Sealer, c Card, token string) (*Card, error) {
	if c.ID == "" || token == "" {
		return nil, errors.New("savedcard: a saved card needs an id and a token")
	}
	sealed, err := s.Seal([]byte(token), AAD(c.ID))
	if err != nil {
		return nil, err
	}
	c.TokenSealed = sealed
	return &c, nil
}

// Token opens the card's provider token for a call to its provider. The
// token goes to the provider only: it is never logged nor answered.
func Token(s Sealer, c *Card) (string, error) {
	tok, err := s.Open(c.TokenSealed, AAD(c.ID))
	if err != nil {
		return "", err
	}
	return string(tok), nil
}

// Usable says whether the payer may pay with c: the card must be the key's,
// the payer's (customer reference) and the provider's that will be called,
// since a token means nothing to another provider (docs/design/decisions.md
// section 5), and not deleted (docs/design/decisions.md section 13). A nil
// c is a card that could not be found. Every refusal is
// the same 422 saved_card_not_found, so that an answer never tells another
// key's or payer's card from one that does not exist. Expiry is not a rule
// here (Offer only hides expired cards from the page).
func Usable(c *Card, keyID, customerRef, provider string) error {
	if c == nil || c.DeletedAt != nil || c.AccessKeyID != keyID || c.CustomerReference != customerRef || c.Provider != provider {
		return fault.OnField(fault.SavedCardNotFound, "saved_card_id", "this saved card cannot be used here")
	}
	return nil
}

// Expired says whether the card's expiry month has passed at now (in now's
// location): a card is good through its expiry month.
func (c Card) Expired(now time.Time) bool {
	return c.ExpYear < now.Year() || (c.ExpYear == now.Year() && c.ExpMonth < int(now.Month()))
}

// Offer picks, from a payer's cards, those a checkout with provider may
// show at now: the provider's, not deleted and not expired, in the order
// given. The caller lists only the key's and the payer's cards. nil when
// none.
func Offer(cards []Card, provider string, now time.Time) []Card {
	var out []Card
	for _, c := range cards {
		if c.Provider == provider && c.DeletedAt == nil && !c.Expired(now) {
			out = append(out, c)
		}
	}
	return out
}
