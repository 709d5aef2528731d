package store_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/allowance"
	"github.com/paygate/paygate/internal/fault"
	"github.com/paygate/paygate/internal/store"
	"github.com/paygate/paygate/internal/store/storetest"
)

func ptr(v int64) *int64 { return &v }

// TestAllowanceRules runs the rules of docs/design/decisions.md section 12
// on every database, one case a key: the per-transaction and daily checks,
// a refusal reserving nothing, consumption and release, settling twice, the
// UTC day, and the other allowance and currency left alone.
func TestAllowanceRules(t *testing.T) {
	t.Parallel()
	noon := time.Date(2031, 5, 6, 12, 0, 0, 0, time.UTC)
	type step struct {
		op     string // reserve (amount), consume (amount), release
		id     string
		amount int64
		at     time.Time
		want   string // "" or the setting a limit_exceeded names
	}
	for _, db := range storetest.Databases(t) {
		t.Run(db.Name, func(t *testing.T) {
			ctx := context.Background()
			s := storetest.Open(t, db)
			for _, tc := range []struct {
				name    string
				setting *allowance.Setting // KeyID filled in
				steps   []step
				used    int64
				held    int64
			}{
				{"unset is unlimited and counts nothing", nil,
					[]step{{"reserve", "a", 1 << 40, noon, ""}}, 0, 0},
				{"per transaction", &allowance.Setting{PerTransactionMinor: ptr(500)},
					[]step{{"reserve", "a", 500, noon, ""}, {"reserve", "b", 501, noon, allowance.SettingPerTransaction}}, 0, 500},
				{"daily fills exactly", &allowance.Setting{DailyMinor: ptr(1000)},
					[]step{{"reserve", "a", 600, noon, ""}, {"reserve", "b", 400, noon, ""},
						{"reserve", "c", 1, noon, allowance.SettingDaily}}, 0, 1000},
				{"a decline releases", &allowance.Setting{DailyMinor: ptr(1000)},
					[]step{{"reserve", "a", 1000, noon, ""}, {"reserve", "b", 1, noon, allowance.SettingDaily},
						{"release", "a", 0, noon, ""}, {"reserve", "b", 1000, noon, ""}}, 0, 1000},
				{"a partial capture consumes part", &allowance.Setting{DailyMinor: ptr(1000)},
					[]step{{"reserve", "a", 1000, noon, ""}, {"consume", "a", 600, noon, ""},
						{"reserve", "b", 400, noon, ""}, {"reserve", "c", 1, noon, allowance.SettingDaily}}, 600, 400},
				{"settling twice counts once", &allowance.Setting{DailyMinor: ptr(1000)},
					[]step{{"reserve", "a", 700, noon, ""}, {"consume", "a", 700, noon, ""},
						{"release", "a", 0, noon, ""}, {"consume", "a", 700, noon, ""}}, 700, 0},
				{"consumption is capped at the reservation", &allowance.Setting{DailyMinor: ptr(1000)},
					[]step{{"reserve", "a", 300, noon, ""}, {"consume", "a", 900, noon, ""}}, 300, 0},
				{"a new UTC day starts empty", &allowance.Setting{DailyMinor: ptr(1000)},
					[]step{{"reserve", "a", 1000, noon, ""}, {"reserve", "b", 1000, noon.Add(12 * time.Hour), ""}}, 0, 1000},
			} {
				t.Run(tc.name, func(t *testing.T) {
					k := newKey(t, s, "allow-"+uuid.NewString()[:8])
					if tc.setting != nil {
						set := *tc.setting
						set.KeyID, set.Allowance, set.Currency, set.UpdatedAt = k.ID, allowance.Collection, "USD", noon
						require.NoError(t, s.PutAllowance(ctx, set))
					}
					ids := map[string]string{}
					for i, st := range tc.steps {
						if ids[st.id] == "" {
							ids[st.id] = uuid.NewString()
						}
						var err error
						require.NoError(t, s.InTx(ctx, func(tx *store.Tx) error {
							switch st.op {
							case "reserve":
								err = allowance.Reserve(ctx, tx, allowance.Hold{KeyID: k.ID, Allowance: allowance.Collection,
									Currency: "USD", AmountMinor: st.amount, Resource: "payment", ResourceID: ids[st.id], At: st.at})
							case "consume":
								return allowance.Settle(ctx, tx, "payment", ids[st.id], st.amount, st.at)
							case "release":
								return allowance.Settle(ctx, tx, "payment", ids[st.id], 0, st.at)
							}
							if _, ok := fault.As(err); ok {
								return nil // the test looks at it; nothing was written
							}
							return err
						}))
						if st.want == "" {
							require.NoError(t, err, "step %d", i)
							continue
						}
						f, ok := fault.As(err)
						require.True(t, ok, "step %d: %v", i, err)
						require.Equal(t, fault.LimitExceeded, f.Code)
						require.Equal(t, st.want, f.Details["setting"])
					}
					u, err := s.AllowanceUsage(ctx, k.ID, allowance.Collection, "USD", allowance.Day(noon))
					require.NoError(t, err)
					require.Equal(t, allowance.Usage{UsedMinor: tc.used, ReservedMinor: tc.held}, u)
					other, err := s.AllowanceUsage(ctx, k.ID, allowance.Payout, "USD", allowance.Day(noon))
					require.NoError(t, err)
					require.Zero(t, other, "the payout allowance is untouched")
				})
			}
		})
	}
}

// TestAllowanceReservationIsAtomic: many transactions reserving at once
// against one daily allowance, on every database, together never pass it:
// exactly as many fit as the limit admits.
func TestAllowanceReservationIsAtomic(t *testing.T) {
	t.Parallel()
	const n, fits = 60, 20
	at := time.Date(2031, 5, 6, 12, 0, 0, 0, time.UTC)
	for _, db := range storetest.Databases(t) {
		t.Run(db.Name, func(t *testing.T) {
			ctx := context.Background()
			s := storetest.Open(t, db)
			k := newKey(t, s, "allow-race")
			require.NoError(t, s.PutAllowance(ctx, allowance.Setting{KeyID: k.ID, Allowance: allowance.Collection,
				Currency: "EUR", DailyMinor: ptr(fits * 100), UpdatedAt: at}))
			var (
				wg       sync.WaitGroup
				mu       sync.Mutex
				ok, over int
			)
			start := make(chan struct{})
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					err := s.InTx(ctx, func(tx *store.Tx) error {
						return allowance.Reserve(ctx, tx, allowance.Hold{KeyID: k.ID, Allowance: allowance.Collection,
							Currency: "EUR", AmountMinor: 100, Resource: "payment", ResourceID: fmt.Sprint("race-", i), At: at})
					})
					mu.Lock()
					defer mu.Unlock()
					switch {
					case err == nil:
						ok++
					case fault.CodeOf(err) == fault.LimitExceeded:
						over++
					default:
						t.Errorf("reserve %d: %v", i, err)
					}
				}()
			}
			close(start)
			wg.Wait()
			require.Equal(t, [2]int{fits, n - fits}, [2]int{ok, over})
			u, err := s.AllowanceUsage(ctx, k.ID, allowance.Collection, "EUR", allowance.Day(at))
			require.NoError(t, err)
			require.Equal(t, allowance.Usage{ReservedMinor: fits * 100}, u)
		})
	}
}

// TestAllowanceSettings: a setting reads back, set and unset; unsetting both
// limits removes it.
func TestAllowanceSettings(t *testing.T) {
	t.Parallel()
	at := time.Date(2031, 5, 6, 12, 0, 0, 0, time.UTC)
	for _, db := range storetest.Databases(t) {
		t.Run(db.Name, func(t *testing.T) {
			ctx := context.Background()
			s := storetest.Open(t, db)
			k := newKey(t, s, "allow-settings")
			got, err := s.FindAllowance(ctx, k.ID, allowance.Payout, "USD")
			require.NoError(t, err)
			require.Nil(t, got, "a new key has none")
			set := allowance.Setting{KeyID: k.ID, Allowance: allowance.Payout, Currency: "USD", DailyMinor: ptr(5), UpdatedAt: at}
			require.NoError(t, s.PutAllowance(ctx, set))
			set.PerTransactionMinor = ptr(3)
			require.NoError(t, s.PutAllowance(ctx, set))
			got, err = s.FindAllowance(ctx, k.ID, allowance.Payout, "USD")
			require.NoError(t, err)
			require.Equal(t, set, *got)
			list, err := s.ListAllowances(ctx, k.ID)
			require.NoError(t, err)
			require.Equal(t, []allowance.Setting{set}, list)
			set.PerTransactionMinor, set.DailyMinor = nil, nil
			require.NoError(t, s.PutAllowance(ctx, set))
			list, err = s.ListAllowances(ctx, k.ID)
			require.NoError(t, err)
			require.Empty(t, list)
		})
	}
}
