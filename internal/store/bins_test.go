package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/cardinfo"
	"github.com/paygate/paygate/internal/store"
	"github.com/paygate/paygate/internal/store/storetest"
)

// TestBINs runs the BIN base's statements on every database.
func TestBINs(t *testing.T) {
	t.Parallel()
	for _, db := range storetest.Databases(t) {
		t.Run(db.Name, func(t *testing.T) {
			t.Run("versions", func(t *testing.T) { testBINVersions(t, storetest.Open(t, db)) })
			t.Run("match", func(t *testing.T) { testBINMatch(t, storetest.Open(t, db)) })
			t.Run("many entries", func(t *testing.T) { testBINBatches(t, storetest.Open(t, db)) })
		})
	}
}

func binVersion(id string, at time.Time) cardinfo.Version {
	return cardinfo.Version{ID: id, Label: "label " + id, Source: id + ".csv", CreatedAt: at}
}

func testBINVersions(t *testing.T, s *store.Store) {
	ctx := context.Background()
	has, err := s.HasBINVersions(ctx)
	require.NoError(t, err)
	require.False(t, has)
	_, ok, err := s.MatchBIN(ctx, "424242")
	require.NoError(t, err)
	require.False(t, ok, "no active version matches nothing")

	created, err := s.CreateBINVersion(ctx, binVersion("v1", t0))
	require.NoError(t, err)
	require.True(t, created)
	created, err = s.CreateBINVersion(ctx, binVersion("v1", t0.Add(time.Hour)))
	require.NoError(t, err)
	require.False(t, created, "a second create of the same id changes nothing")
	created, err = s.CreateBINVersion(ctx, binVersion("v2", t0.Add(time.Second)))
	require.NoError(t, err)
	require.True(t, created)
	has, err = s.HasBINVersions(ctx)
	require.NoError(t, err)
	require.True(t, has)
	require.NoError(t, s.SetBINVersionEntries(ctx, "v2", 7))
	require.ErrorIs(t, s.SetBINVersionEntries(ctx, "missing", 7), store.ErrNotFound)

	vs, err := s.ListBINVersions(ctx)
	require.NoError(t, err)
	require.Equal(t, []cardinfo.Version{
		{ID: "v1", Label: "label v1", Source: "v1.csv", CreatedAt: t0},
		{ID: "v2", Label: "label v2", Source: "v2.csv", Entries: 7, CreatedAt: t0.Add(time.Second)},
	}, vs, "oldest first, none active")

	require.NoError(t, s.ActivateBINVersion(ctx, "v1", t0.Add(time.Minute)))
	require.NoError(t, s.InTx(ctx, func(tx *store.Tx) error {
		return tx.ActivateBINVersion(ctx, "v2", t0.Add(2*time.Minute))
	}))
	require.ErrorIs(t, s.ActivateBINVersion(ctx, "missing", t0), store.ErrNotFound)
	vs, err = s.ListBINVersions(ctx)
	require.NoError(t, err)
	require.False(t, vs[0].Active)
	require.True(t, vs[1].Active, "exactly one version is active")
	require.Equal(t, t0.Add(time.Minute), *vs[0].ActivatedAt, "the last activation is kept")
	v, err := s.FindBINVersion(ctx, "v2")
	require.NoError(t, err)
	require.Equal(t, vs[1], v)
	_, err = s.FindBINVersion(ctx, "missing")
	require.ErrorIs(t, err, store.ErrNotFound)

	// An activation rolled back leaves the active version as it was.
	tx, err := s.Begin(ctx)
	require.NoError(t, err)
	require.NoError(t, tx.ActivateBINVersion(ctx, "v1", t0.Add(time.Hour)))
	require.NoError(t, tx.Rollback())
	v, err = s.FindBINVersion(ctx, "v2")
	require.NoError(t, err)
	require.True(t, v.Active)
}

func bin(b, scheme, level string) cardinfo.Entry {
	return cardinfo.Entry{BIN: b, Details: cardinfo.Details{Scheme: scheme, Level: level}}
}

func binRange(low, high, scheme string) cardinfo.Entry {
	return cardinfo.Entry{RangeLow: low, RangeHigh: high, Details: cardinfo.Details{Scheme: scheme}}
}

func testBINMatch(t *testing.T, s *store.Store) {
	ctx := context.Background()
	for _, id := range []string{"old", "new"} {
		_, err := s.CreateBINVersion(ctx, binVersion(id, t0))
		require.NoError(t, err)
	}
	full := cardinfo.Entry{BIN: "42424242", Details: cardinfo.Details{Scheme: "visa", Type: "credit", Level: "platinum",
		Issuer: "Bank", Country: "United States", CountryCode: "US", IssuerWebsite: "https://bank.example", IssuerPhone: "+1 202 555 0100"}}
	require.NoError(t, s.AddBINEntries(ctx, "new", []cardinfo.Entry{
		full,
		bin("424242", "visa", "classic"),
		bin("411111", "visa", "six"),
		binRange("40000000", "49999999", "visa"),
		binRange("41000000", "41999999", "visa-41"),
		binRange("55500050", "55500149", "partial"),
		binRange("55000000", "55999999", "mastercard"),
	}))
	require.NoError(t, s.AddBINEntries(ctx, "old", []cardinfo.Entry{bin("424242", "old", "")}))
	require.Error(t, s.AddBINEntries(ctx, "new", []cardinfo.Entry{bin("424242", "dup", "")}), "a BIN once per version")
	require.NoError(t, s.ActivateBINVersion(ctx, "new", t0))

	for _, tc := range []struct{ bin, scheme, level string }{
		{"42424242", "visa", "platinum"}, // 8 digits before 6
		{"42424243", "visa", "classic"},  // then the 6-digit prefix
		{"424242", "visa", "classic"},    // a 6-digit query never takes an 8-digit entry
		{"41111111", "visa", "six"},
		{"41222222", "visa-41", ""}, // the narrowest range
		{"412222", "visa-41", ""},
		{"49999999", "visa", ""},
		{"555001", "mastercard", ""}, // partial holds only half of 555001's cards
		{"55500100", "partial", ""},
		{"55500049", "mastercard", ""},
	} {
		e, ok, err := s.MatchBIN(ctx, tc.bin)
		require.NoError(t, err)
		require.True(t, ok, tc.bin)
		require.Equal(t, tc.scheme, e.Scheme, tc.bin)
		require.Equal(t, tc.level, e.Level, tc.bin)
	}
	e, ok, err := s.MatchBIN(ctx, "42424242")
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, full, e)
	e, _, err = s.MatchBIN(ctx, "41222222")
	require.NoError(t, err)
	require.Equal(t, binRange("41000000", "41999999", "visa-41"), e)
	for _, b := range []string{"39999999", "500000", "56000000"} {
		_, ok, err := s.MatchBIN(ctx, b)
		require.NoError(t, err)
		require.False(t, ok, b)
	}
	_, _, err = s.MatchBIN(ctx, "4242424242424242")
	require.Error(t, err)

	require.NoError(t, s.ActivateBINVersion(ctx, "old", t0))
	e, ok, err = s.MatchBIN(ctx, "42424242")
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, "old", e.Scheme, "only the active version answers")
	_, ok, err = s.MatchBIN(ctx, "41111111")
	require.NoError(t, err)
	require.False(t, ok)
}

func testBINBatches(t *testing.T, s *store.Store) {
	ctx := context.Background()
	_, err := s.CreateBINVersion(ctx, binVersion("big", t0))
	require.NoError(t, err)
	var es []cardinfo.Entry
	for i := range 1234 {
		es = append(es, bin(fmt.Sprintf("%06d", 100000+i), "visa", fmt.Sprint(i)))
	}
	require.NoError(t, s.InTx(ctx, func(tx *store.Tx) error { return tx.AddBINEntries(ctx, "big", es) }))
	require.NoError(t, s.ActivateBINVersion(ctx, "big", t0))
	for _, i := range []int{0, 499, 500, 1233} {
		e, ok, err := s.MatchBIN(ctx, fmt.Sprintf("%06d", 100000+i))
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, fmt.Sprint(i), e.Level)
	}
}
