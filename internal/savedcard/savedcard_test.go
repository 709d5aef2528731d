package savedcard_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/fault"
	"github.com/paygate/paygate/internal/savedcard"
	"github.com/paygate/paygate/internal/vault"
)

var t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

func card(id string) savedcard.Card {
	return savedcard.Card{ID: id, AccessKeyID: "key-a", CustomerReference: "cust-1", Provider: "sandbox",
		MaskedCard: "424242******4242", Scheme: "visa", ExpMonth: 12, ExpYear: 2030, CreatedAt: t0}
}

func TestUsable(t *testing.T) {
	t.Parallel()
	mine := card("c1")
	cases := []struct {
		name                       string
		card                       *savedcard.Card
		key, customerRef, provider string
		ok                         bool
	}{
		{"the key's, the payer's and the provider's", &mine, "key-a", "cust-1", "sandbox", true},
		{"another key's", &mine, "key-b", "cust-1", "sandbox", false},
		{"another payer's", &mine, "key-a", "cust-2", "sandbox", false},
		{"a payer without a reference", &mine, "key-a", "", "sandbox", false},
		{"another provider's", &mine, "key-a", "cust-1", "other", false},
		{"not found", nil, "key-a", "cust-1", "sandbox", false},
		// Expiry is no rule of Usable (only the page's list hides expired cards).
		{"expired", func() *savedcard.Card { c := card("c2"); c.ExpYear = 2020; return &c }(), "key-a", "cust-1", "sandbox", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := savedcard.Usable(tc.card, tc.key, tc.customerRef, tc.provider)
			if tc.ok {
				require.NoError(t, err)
				return
			}
			fe, isFault := fault.As(err)
			require.True(t, isFault, "%v", err)
			require.Equal(t, fault.SavedCardNotFound, fe.Code)
			require.Equal(t, "saved_card_id", fe.Field)
			require.Equal(t, "this saved card cannot be used here", fe.Message)
		})
	}
}

func TestExpired(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 31, 23, 0, 0, 0, time.UTC)
	cases := []struct {
		name        string
		month, year int
		expired     bool
	}{
		{"last year", 12, 2025, true},
		{"last month", 2, 2026, true},
		{"this month: good through its end", 3, 2026, false},
		{"next month", 4, 2026, false},
		{"next year, an earlier month", 1, 2027, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := card("c")
			c.ExpMonth, c.ExpYear = tc.month, tc.year
			require.Equal(t, tc.expired, c.Expired(now))
		})
	}
}

func TestOffer(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 15, 0, 0, 0, 0, time.UTC)
	newest, other, expired, older := card("newest"), card("other"), card("expired"), card("older")
	other.Provider = "other"
	expired.ExpMonth, expired.ExpYear = 2, 2026
	older.ExpMonth, older.ExpYear = 3, 2026
	got := savedcard.Offer([]savedcard.Card{newest, other, expired, older}, "sandbox", now)
	require.Equal(t, []savedcard.Card{newest, older}, got, "the provider's unexpired cards, in the order given")
	require.Nil(t, savedcard.Offer([]savedcard.Card{other, expired}, "sandbox", now))
	require.Nil(t, savedcard.Offer(nil, "sandbox", now))
}

func TestNewAndToken(t *testing.T) {
	t.Parallel()
	kr := vault.New()
	c, err := savedcard.New(kr, card("c1"), "tok_123")
	require.NoError(t, err)
	require.Equal(t, "c1", c.ID)
	require.Equal(t, "424242******4242", c.MaskedCard)
	require.NotEmpty(t, c.TokenSealed)
	require.False(t, bytes.Contains(c.TokenSealed, []byte("tok_123")), "the token is sealed")

	tok, err := savedcard.Token(kr, c)
	require.NoError(t, err)
	require.Equal(t, "tok_123", tok)

	t.Run("bound to its card", func(t *testing.T) {
		moved := *c
		moved.ID = "c2" // the sealed token copied onto another card does not open
		_, err := savedcard.Token(kr, &moved)
		require.Error(t, err)
	})
	t.Run("another master key", func(t *testing.T) {
		_, err := savedcard.Token(vault.New(), c)
		require.Error(t, err)
	})
	t.Run("the AAD the master-key rotation uses", func(t *testing.T) {
		raw, err := kr.Open(c.TokenSealed, savedcard.AAD(c.ID))
		require.NoError(t, err)
		require.Equal(t, "tok_123", string(raw))
		require.Equal(t, []byte("saved_card_token:c1"), savedcard.AAD("c1"), "rows sealed earlier keep opening")
	})
	t.Run("needs an id and a token", func(t *testing.T) {
		_, err := savedcard.New(kr, card(""), "tok_123")
		require.Error(t, err)
		_, err = savedcard.New(kr, card("c3"), "")
		require.Error(t, err)
	})
}
