package store_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/cabinet"
	"github.com/paygate/paygate/internal/merchant"
	"github.com/paygate/paygate/internal/store"
	"github.com/paygate/paygate/internal/store/storetest"
)

// fastArgon keeps tests quick; the recommended parameters are tested in
// internal/cabinet.
var fastArgon = cabinet.Params{Time: 1, Memory: 64, Threads: 1}

type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *testClock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func cabinetKey(t *testing.T, s *store.Store, name string) merchant.Key {
	k := merchant.Key{ID: uuid.NewString(), AccessKey: "ak_sandbox_" + uuid.NewString()[:8], Name: name,
		Environment: merchant.Sandbox, SecretSealed: []byte("sealed"), CreatedAt: time.Now().UTC()}
	require.NoError(t, s.CreateKey(context.Background(), k))
	return k
}

// TestCabinetUsers runs the users' rules of docs/design/decisions.md
// section 13 on every database: the setup link works once and expires,
// sign-in, throttling, sessions' expiry, disabling, and grants.
func TestCabinetUsers(t *testing.T) {
	t.Parallel()
	for _, db := range storetest.Databases(t) {
		t.Run(db.Name, func(t *testing.T) {
			ctx := context.Background()
			s := storetest.Open(t, db)
			clk := &testClock{now: time.Date(2031, 5, 6, 12, 0, 0, 0, time.UTC)}
			svc := &cabinet.Service{Store: s, Now: clk.Now, Params: fastArgon}
			keyA, keyB := cabinetKey(t, s, "A"), cabinetKey(t, s, "B")

			u, token, err := svc.CreateUser(ctx, " Ann@Example.COM ", cabinet.Admin, []string{keyA.ID})
			require.NoError(t, err)
			require.Equal(t, "ann@example.com", u.Email)
			_, _, err = svc.CreateUser(ctx, "ANN@example.com", cabinet.Viewer, nil)
			require.ErrorIs(t, err, cabinet.ErrEmailTaken)

			t.Run("setup once", func(t *testing.T) {
				_, err := svc.SignIn(ctx, u.Email, "", "10.0.0.1")
				require.ErrorIs(t, err, cabinet.ErrBadCredentials, "no password before setup")
				_, err = svc.CompleteSetup(ctx, token, "short")
				require.ErrorIs(t, err, cabinet.ErrShortPassword)
				got, err := svc.SetupUser(ctx, token)
				require.NoError(t, err)
				require.Equal(t, u.ID, got.ID)
				sid, err := svc.CompleteSetup(ctx, token, "a long passphrase")
				require.NoError(t, err)
				me, err := svc.Session(ctx, sid)
				require.NoError(t, err)
				require.Equal(t, u.ID, me.ID)
				_, err = svc.CompleteSetup(ctx, token, "another long passphrase")
				require.ErrorIs(t, err, cabinet.ErrSetupInvalid, "a used link")
				_, err = svc.SetupUser(ctx, token)
				require.ErrorIs(t, err, cabinet.ErrSetupInvalid)
			})

			t.Run("setup expires", func(t *testing.T) {
				_, tok, err := svc.CreateUser(ctx, "late@example.com", cabinet.Viewer, []string{keyB.ID})
				require.NoError(t, err)
				clk.Add(cabinet.SetupLifetime)
				_, err = svc.CompleteSetup(ctx, tok, "a long passphrase")
				require.ErrorIs(t, err, cabinet.ErrSetupInvalid)
			})

			t.Run("concurrent setup uses the link once", func(t *testing.T) {
				_, tok, err := svc.CreateUser(ctx, "race@example.com", cabinet.Viewer, nil)
				require.NoError(t, err)
				var wins atomic.Int32
				var wg sync.WaitGroup
				for range 6 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						if _, err := svc.CompleteSetup(ctx, tok, "a long passphrase"); err == nil {
							wins.Add(1)
						}
					}()
				}
				wg.Wait()
				require.Equal(t, int32(1), wins.Load())
			})

			t.Run("sign in", func(t *testing.T) {
				sid, err := svc.SignIn(ctx, "ANN@example.com", "a long passphrase", "10.0.0.2")
				require.NoError(t, err)
				me, err := svc.Session(ctx, sid)
				require.NoError(t, err)
				require.NotNil(t, me)
				_, err = svc.SignIn(ctx, u.Email, "a long passphrasE", "10.0.0.2")
				require.ErrorIs(t, err, cabinet.ErrBadCredentials)
				_, err = svc.SignIn(ctx, "nobody@example.com", "a long passphrase", "10.0.0.2")
				require.ErrorIs(t, err, cabinet.ErrBadCredentials, "unknown email: the same answer")
				me, err = svc.Session(ctx, "forged")
				require.NoError(t, err)
				require.Nil(t, me)

				keys, err := svc.Keys(ctx, u)
				require.NoError(t, err)
				require.Len(t, keys, 1)
				require.Equal(t, keyA.ID, keys[0].ID, "only the granted key")
			})

			t.Run("session expiry", func(t *testing.T) {
				sid, err := svc.SignIn(ctx, u.Email, "a long passphrase", "10.0.0.3")
				require.NoError(t, err)
				for range 7 { // used every 100 minutes: never idle, but old
					clk.Add(100 * time.Minute)
					me, err := svc.Session(ctx, sid)
					require.NoError(t, err)
					require.NotNil(t, me)
				}
				clk.Add(100 * time.Minute) // 13 h 20 min after sign-in
				me, err := svc.Session(ctx, sid)
				require.NoError(t, err)
				require.Nil(t, me, "past the absolute lifetime")

				sid, err = svc.SignIn(ctx, u.Email, "a long passphrase", "10.0.0.3")
				require.NoError(t, err)
				clk.Add(cabinet.SessionIdle + time.Second)
				me, err = svc.Session(ctx, sid)
				require.NoError(t, err)
				require.Nil(t, me, "idle too long")

				sid, err = svc.SignIn(ctx, u.Email, "a long passphrase", "10.0.0.3")
				require.NoError(t, err)
				require.NoError(t, svc.SignOut(ctx, sid))
				me, err = svc.Session(ctx, sid)
				require.NoError(t, err)
				require.Nil(t, me, "signed out")
			})

			t.Run("throttling", func(t *testing.T) {
				for i := range cabinet.EmailAttempts {
					_, err := svc.SignIn(ctx, u.Email, "wrong wrong wrong", "10.0.1.1")
					require.ErrorIs(t, err, cabinet.ErrBadCredentials, i)
				}
				_, err := svc.SignIn(ctx, u.Email, "a long passphrase", "10.0.1.2")
				require.ErrorIs(t, err, cabinet.ErrThrottled, "even the right password, from another address")
				clk.Add(cabinet.ThrottleWindow - time.Second)
				_, err = svc.SignIn(ctx, u.Email, "a long passphrase", "10.0.1.2")
				require.ErrorIs(t, err, cabinet.ErrThrottled)
				clk.Add(time.Second)
				_, err = svc.SignIn(ctx, u.Email, "a long passphrase", "10.0.1.2")
				require.NoError(t, err, "the window is over")

				// A success clears the email's window.
				for range cabinet.EmailAttempts - 1 {
					_, err := svc.SignIn(ctx, u.Email, "wrong wrong wrong", "10.0.1.3")
					require.ErrorIs(t, err, cabinet.ErrBadCredentials)
				}
				_, err = svc.SignIn(ctx, u.Email, "a long passphrase", "10.0.1.3")
				require.NoError(t, err)
				_, err = svc.SignIn(ctx, u.Email, "wrong wrong wrong", "10.0.1.3")
				require.ErrorIs(t, err, cabinet.ErrBadCredentials)

				// Per address: many emails from one address.
				for i := range cabinet.IPAttempts {
					_, err := svc.SignIn(ctx, uuid.NewString()+"@example.com", "x", "10.0.2.1")
					require.ErrorIs(t, err, cabinet.ErrBadCredentials, i)
				}
				_, err = svc.SignIn(ctx, u.Email, "a long passphrase", "10.0.2.1")
				require.ErrorIs(t, err, cabinet.ErrThrottled)
				clk.Add(cabinet.ThrottleWindow)
			})

			t.Run("concurrent guesses", func(t *testing.T) {
				// Twenty guesses at once, as from several processes: only
				// EmailAttempts of them get a password checked.
				var checked atomic.Int32
				var wg sync.WaitGroup
				for i := range 20 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						_, err := svc.SignIn(ctx, "race@example.com", "wrong wrong wrong", "10.0.3."+string(rune('a'+i)))
						if err == cabinet.ErrBadCredentials {
							checked.Add(1)
						} else if err != cabinet.ErrThrottled {
							t.Error(err)
						}
					}()
				}
				wg.Wait()
				require.Equal(t, int32(cabinet.EmailAttempts), checked.Load())
			})

			t.Run("disable", func(t *testing.T) {
				clk.Add(cabinet.ThrottleWindow)
				sid, err := svc.SignIn(ctx, u.Email, "a long passphrase", "10.0.4.1")
				require.NoError(t, err)
				require.NoError(t, svc.Disable(ctx, "ann@EXAMPLE.com"))
				me, err := svc.Session(ctx, sid)
				require.NoError(t, err)
				require.Nil(t, me, "the session ended")
				_, err = svc.SignIn(ctx, u.Email, "a long passphrase", "10.0.4.1")
				require.ErrorIs(t, err, cabinet.ErrBadCredentials)
				require.ErrorIs(t, svc.Disable(ctx, "nobody@example.com"), cabinet.ErrNoUser)
			})

			t.Run("grant and list", func(t *testing.T) {
				require.NoError(t, svc.Grant(ctx, "late@example.com", keyA.ID))
				require.NoError(t, svc.Grant(ctx, "late@example.com", keyA.ID), "twice is once")
				users, err := svc.Users(ctx)
				require.NoError(t, err)
				byEmail := map[string]cabinet.User{}
				for _, u := range users {
					byEmail[u.Email] = u
				}
				require.ElementsMatch(t, []string{keyB.ID, keyA.ID}, byEmail["late@example.com"].KeyIDs)
				require.NotNil(t, byEmail["ann@example.com"].DisabledAt)
				require.Equal(t, cabinet.Viewer, byEmail["late@example.com"].Role)
			})
		})
	}
}
