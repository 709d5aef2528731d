package savedcard_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/fault"
	"github.com/paygate/paygate/internal/savedcard"
)

// TestDeletedCardIsNotUsable: a card deleted through the cabinet
// (docs/design/decisions.md section 13) is refused like an unknown one and
// never offered, though it is the key's, the payer's and the provider's.
func TestDeletedCardIsNotUsable(t *testing.T) {
	t.Parallel()
	deletedAt := t0.Add(time.Hour)
	gone := card("gone")
	gone.DeletedAt = &deletedAt
	kept := card("kept")

	err := savedcard.Usable(&gone, "key-a", "cust-1", "sandbox")
	fe, isFault := fault.As(err)
	require.True(t, isFault, "%v", err)
	require.Equal(t, fault.SavedCardNotFound, fe.Code)
	require.Equal(t, "saved_card_id", fe.Field)
	require.NoError(t, savedcard.Usable(&kept, "key-a", "cust-1", "sandbox"))

	now := time.Date(2026, 3, 15, 0, 0, 0, 0, time.UTC)
	require.Equal(t, []savedcard.Card{kept}, savedcard.Offer([]savedcard.Card{gone, kept}, "sandbox", now))
	require.Nil(t, savedcard.Offer([]savedcard.Card{gone}, "sandbox", now))
}
