package cardinfo_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/cardinfo"
	"github.com/paygate/paygate/internal/fault"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/store"
	"github.com/paygate/paygate/internal/store/storetest"
)

func newService(s *store.Store) *cardinfo.Service {
	return &cardinfo.Service{Store: s, Now: time.Now, NewID: func() string { return uuid.Must(uuid.NewV7()).String() }}
}

func seed(t *testing.T, s *store.Store, svc *cardinfo.Service) bool {
	t.Helper()
	var seeded bool
	require.NoError(t, s.InTx(context.Background(), func(tx *store.Tx) (err error) {
		seeded, err = svc.Seed(context.Background(), tx)
		return err
	}))
	return seeded
}

func importCSV(s *store.Store, svc *cardinfo.Service, csv string, activate bool) (cardinfo.Version, error) {
	var v cardinfo.Version
	err := s.InTx(context.Background(), func(tx *store.Tx) (err error) {
		v, err = svc.Import(context.Background(), tx, cardinfo.ImportRequest{Source: "test.csv", CSV: strings.NewReader(csv), Activate: activate})
		return err
	})
	return v, err
}

func TestService(t *testing.T) {
	for _, db := range storetest.Databases(t) {
		t.Run(db.Name, func(t *testing.T) {
			t.Run("seed", func(t *testing.T) { testSeed(t, db) })
			t.Run("lookup", func(t *testing.T) { testLookup(t, storetest.Open(t, db)) })
			t.Run("import", func(t *testing.T) { testImport(t, storetest.Open(t, db)) })
		})
	}
}

func testSeed(t *testing.T, db storetest.Database) {
	ctx := context.Background()
	cfg := db.Config(t)
	// Several processes start at once on an empty database.
	var stores []*store.Store
	for range 4 {
		s, err := store.Open(ctx, cfg)
		require.NoError(t, err)
		t.Cleanup(func() { s.Close() })
		require.NoError(t, s.Migrate(ctx))
		stores = append(stores, s)
	}
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		seeded int
	)
	for _, s := range stores {
		wg.Go(func() {
			err := s.InTx(ctx, func(tx *store.Tx) error {
				ok, err := newService(s).Seed(ctx, tx)
				if ok {
					mu.Lock()
					seeded++
					mu.Unlock()
				}
				return err
			})
			require.NoError(t, err)
		})
	}
	wg.Wait()
	require.Equal(t, 1, seeded)
	s := stores[0]
	svc := newService(s)
	vs, err := svc.Versions(ctx)
	require.NoError(t, err)
	require.Len(t, vs, 1)
	require.Equal(t, cardinfo.DefaultVersionID, vs[0].ID)
	require.Equal(t, cardinfo.DefaultSource, vs[0].Source)
	require.True(t, vs[0].Active)
	require.Equal(t, int64(28), vs[0].Entries)

	// Once any version exists, seeding changes nothing, even when another
	// version is active.
	v, err := importCSV(s, svc, "bin,scheme\n999999,other\n", true)
	require.NoError(t, err)
	require.False(t, seed(t, s, svc))
	vs, err = svc.Versions(ctx)
	require.NoError(t, err)
	require.Len(t, vs, 2)
	require.Equal(t, v.ID, vs[1].ID)
	require.True(t, vs[1].Active)
}

// fallback is a fake provider lookup that records its calls.
type fallback struct {
	calls []string
	info  provider.BINInfo
	err   error
}

func (f *fallback) lookup(_ context.Context, bin string) (provider.BINInfo, error) {
	f.calls = append(f.calls, bin)
	return f.info, f.err
}

func testLookup(t *testing.T, s *store.Store) {
	ctx := context.Background()
	svc := newService(s)
	require.True(t, seed(t, s, svc))
	fb := &fallback{}

	t.Run("invalid", func(t *testing.T) {
		for _, bin := range []string{"", "42424", "4242424", "4242424242424242", "42424a", "４２４２４２", " 424242", "424242\n"} {
			_, err := svc.Lookup(ctx, bin, fb.lookup)
			f, ok := fault.As(err)
			require.True(t, ok, "%q: %v", bin, err)
			require.Equal(t, fault.InvalidBIN, f.Code)
			require.Equal(t, "bin", f.Field)
			if bin != "" {
				require.NotContains(t, f.Message, bin)
			}
		}
		require.Empty(t, fb.calls, "the provider is not asked")
	})

	t.Run("the base answers", func(t *testing.T) {
		for _, tc := range []struct{ bin, scheme, level string }{
			{"42424242", "visa", "platinum"},
			{"42424299", "visa", "classic"}, // the 6-digit entry
			{"424242", "visa", "classic"},
			{"411111", "visa", ""}, // the scheme range
			{"22001234", "mir", ""},
			{"555555", "mastercard", "standard"},
		} {
			info, err := svc.Lookup(ctx, tc.bin, fb.lookup)
			require.NoError(t, err)
			require.Equal(t, tc.bin, info.BIN)
			require.Equal(t, cardinfo.BINBase, info.Source)
			require.Equal(t, tc.scheme, info.Scheme, tc.bin)
			require.Equal(t, tc.level, info.Level, tc.bin)
		}
		require.Empty(t, fb.calls, "the provider is asked only for BINs the base does not cover")
	})

	t.Run("the provider answers the rest", func(t *testing.T) {
		fb.info = provider.BINInfo{BIN: "990000", Scheme: " Other ", Type: "DEBIT", Issuer: "Far Bank", CountryCode: "de"}
		info, err := svc.Lookup(ctx, "99000012", fb.lookup)
		require.NoError(t, err)
		require.Equal(t, cardinfo.Info{BIN: "99000012", Source: cardinfo.Provider, Details: cardinfo.Details{
			Scheme: "other", Type: "debit", Issuer: "Far Bank", CountryCode: "DE"}}, info)
		require.Equal(t, []string{"99000012"}, fb.calls)

		fb.info.CountryCode = "QQ"
		info, err = svc.Lookup(ctx, "990000", fb.lookup)
		require.NoError(t, err)
		require.Empty(t, info.CountryCode, "a code that is not an assigned ISO code is dropped")
	})

	t.Run("unknown to both", func(t *testing.T) {
		for _, tc := range []struct {
			name string
			fb   cardinfo.Fallback
		}{
			{"no fallback", nil},
			{"not found", (&fallback{err: provider.Errorf(provider.NotFound, "unknown BIN")}).lookup},
			{"unsupported", (&fallback{err: provider.Errorf(provider.Unsupported, "no BIN lookup")}).lookup},
			{"empty answer", (&fallback{info: provider.BINInfo{BIN: "990000"}}).lookup},
		} {
			_, err := svc.Lookup(ctx, "990000", tc.fb)
			require.Equal(t, fault.BINNotFound, fault.CodeOf(err), tc.name)
		}
	})

	t.Run("a failing provider is retryable", func(t *testing.T) {
		for _, kind := range []provider.ErrorKind{provider.Transient, provider.OutcomeUnknown, provider.RateLimited} {
			_, err := svc.Lookup(ctx, "990000", (&fallback{err: provider.Errorf(kind, "down")}).lookup)
			require.Equal(t, fault.Unavailable, fault.CodeOf(err), kind)
		}
		_, err := svc.Lookup(ctx, "990000", (&fallback{err: errors.New("dial tcp: refused")}).lookup)
		require.Equal(t, fault.Unavailable, fault.CodeOf(err))
	})

	t.Run("classify", func(t *testing.T) {
		for _, tc := range []struct{ number, bin, level string }{
			{"4242424242424242", "42424242", "platinum"},
			{"4000000000003220", "40000000", "classic"},
			{"5555555555554444", "55555555", "world"},
			{"4111111111111111", "41111111", ""},
			{"424242000004", "424242", "classic"}, // 12 digits: 8 would show too much
		} {
			info, ok := svc.Classify(ctx, tc.number)
			require.True(t, ok, tc.number)
			require.Equal(t, tc.bin, info.BIN)
			require.Equal(t, tc.level, info.Level)
			require.Equal(t, cardinfo.BINBase, info.Source)
		}
		for _, number := range []string{"9900000000000000", "", "4242", "4242 4242 4242 4242"} {
			_, ok := svc.Classify(ctx, number)
			require.False(t, ok, number)
		}
	})
}

func testImport(t *testing.T, s *store.Store) {
	ctx := context.Background()
	svc := newService(s)
	seed(t, s, svc)

	_, err := importCSV(s, svc, "bin,scheme\n424242,visa\n42424,visa\n", true)
	var ie *cardinfo.ImportError
	require.ErrorAs(t, err, &ie)
	require.Equal(t, []cardinfo.Problem{{Line: 3, Message: "bin must be 6 or 8 digits"}}, ie.Problems)
	vs, err := svc.Versions(ctx)
	require.NoError(t, err)
	require.Len(t, vs, 1, "a refused file leaves no version behind")

	v, err := importCSV(s, svc, "bin,scheme,issuer\n424242,visa,Imported Bank\n", false)
	require.NoError(t, err)
	require.Equal(t, "test.csv", v.Label, "the label defaults to the file name")
	require.Equal(t, int64(1), v.Entries)
	require.False(t, v.Active)
	info, err := svc.Lookup(ctx, "424242", nil)
	require.NoError(t, err)
	require.Equal(t, "Paygate Sandbox Bank", info.Issuer, "not active until activated")

	var activated cardinfo.Version
	require.NoError(t, s.InTx(ctx, func(tx *store.Tx) (err error) {
		activated, err = svc.Activate(ctx, tx, v.ID)
		return err
	}))
	require.True(t, activated.Active)
	require.NotNil(t, activated.ActivatedAt)
	info, err = svc.Lookup(ctx, "424242", nil)
	require.NoError(t, err)
	require.Equal(t, "Imported Bank", info.Issuer)
	_, err = svc.Lookup(ctx, "411111", nil)
	require.Equal(t, fault.BINNotFound, fault.CodeOf(err), "the new version alone answers")

	err = s.InTx(ctx, func(tx *store.Tx) error {
		_, err := svc.Activate(ctx, tx, "no-such-version")
		return err
	})
	require.ErrorIs(t, err, store.ErrNotFound)
}
