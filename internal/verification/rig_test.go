package verification_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/clock"
	"github.com/paygate/paygate/internal/fault"
	"github.com/paygate/paygate/internal/jobs"
	"github.com/paygate/paygate/internal/merchant"
	"github.com/paygate/paygate/internal/operation"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/sandbox"
	"github.com/paygate/paygate/internal/provider/sandbox/acquirer"
	"github.com/paygate/paygate/internal/store"
	"github.com/paygate/paygate/internal/store/storetest"
	"github.com/paygate/paygate/internal/vault"
	"github.com/paygate/paygate/internal/verification"
)

// processClock is the process's clock; a test moves it instead of waiting.
type processClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *processClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *processClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// rig is the card verification domain on a fresh store of one database,
// built with its constructors as internal/app builds it, verifying through
// the bundled sandbox acquirer over real HTTP. No worker runs anything: a
// test runs a verification's operations with the operation engine when it
// chooses (run), and its expiry job by calling its worker.
type rig struct {
	t         *testing.T
	ctx       context.Context
	store     *store.Store
	clock     *processClock
	acquirer  *acquirer.Server
	keyring   *vault.Keyring
	newID     func() string
	providers provider.Registry
	svc       *verification.Service
	engine    *verification.Engine
	ops       *operation.Engine[store.Queries, *store.Tx]
	// handler is the verification's operation handler, as the engine calls it.
	handler operation.Handler[store.Queries, *store.Tx]
}

func newRig(t *testing.T, db storetest.Database) *rig {
	t.Helper()
	s := storetest.Open(t, db)
	clk := &processClock{t: time.Now().UTC().Truncate(time.Second)}
	acq, err := acquirer.Start(acquirer.Config{Now: clk.Now, MaxHang: 3 * time.Second})
	require.NoError(t, err)
	t.Cleanup(func() { acq.Close() })
	r := &rig{t: t, ctx: context.Background(), store: s, clock: clk, acquirer: acq.Server, keyring: vault.New(),
		newID:     func() string { return uuid.Must(uuid.NewV7()).String() },
		providers: provider.Registry{sandbox.Name: sandbox.NewAdapter(acq.URL, acq.APIKey, &http.Client{Timeout: 5 * time.Second})}}
	log := slog.New(slog.DiscardHandler)
	r.ops = operation.NewEngine(
		func(ctx context.Context, fn func(*store.Tx) error) error { return s.InTx(ctx, fn) },
		func(ctx context.Context, fn func(store.Queries) error) error { return s.ReadOnly(ctx, fn) },
		func(tx *store.Tx) store.Queries { return tx.Queries },
		r.keyring, clk.Now, log, operation.Options{KeyClocks: true})
	r.svc = verification.NewService(r.keyring, clk.Now, r.newID, r.providers, r.keyring, s, store.ErrNotFound, render)
	r.engine = verification.NewEngine(r.svc, s, func(ctx context.Context, fn func(verification.EngineTx) error) error {
		return s.InTx(ctx, func(tx *store.Tx) error { return fn(tx) })
	})
	r.handler = verification.NewHandler[store.Queries, *store.Tx](r.engine)
	r.ops.Handle(verification.Resource, r.handler)
	// Queuing inserts River jobs (Tx.Enqueue): an insert-only client that
	// knows every kind a verification queues.
	workers := river.NewWorkers()
	operation.AddWorkers(workers, r.ops)
	verification.AddWorkers(workers, r.engine)
	_, err = jobs.NewClient(s, workers, clk.Now, jobs.Options{Log: log})
	require.NoError(t, err)
	return r
}

// render is the object of a verification's events: enough to read back
// which verification and status each event carries.
func render(v *verification.Verification) ([]byte, error) {
	return json.Marshal(map[string]string{"verification_id": v.ID, "status": string(v.Status)})
}

// key is a new sandbox key allowed raw card data.
func (r *rig) key() merchant.Key { return storetest.SandboxKey(r.t, r.store, true) }

// of is a valid verification of the card number in USD.
func (r *rig) of(number string) verification.New {
	return verification.New{OrderID: "v-" + uuid.NewString(), Currency: "USD",
		Card: verification.Card{Number: number, ExpMonth: 12, ExpYear: r.clock.Now().Year() + 2, CVV: "123"}}
}

// create accepts a verification in its own transaction, as a request does.
func (r *rig) create(ctx context.Context, k merchant.Key, in verification.New) (*verification.Verification, error) {
	var v *verification.Verification
	err := r.store.InTx(ctx, func(tx *store.Tx) error {
		var err error
		v, err = r.svc.Create(ctx, tx, k, in)
		return err
	})
	return v, err
}

// accepted creates a verification that must be accepted.
func (r *rig) accepted(k merchant.Key, in verification.New) *verification.Verification {
	r.t.Helper()
	v, err := r.create(r.ctx, k, in)
	require.NoError(r.t, err)
	return v
}

// codeSent creates a verification of the card and runs its LookUp: the
// sandbox holds a sum and sends the code (the card's last four digits).
func (r *rig) codeSent(k merchant.Key, number string) *verification.Verification {
	r.t.Helper()
	v := r.accepted(k, r.of(number))
	r.run(v.ID)
	v = r.verification(v.ID)
	require.Equal(r.t, verification.CodeSent, v.Status)
	return v
}

// ahead moves the key's sandbox clock d ahead of the process's
// (docs/sandbox.md, "The sandbox clock") and returns the context of its
// requests, which carries that clock as a request's does.
func (r *rig) ahead(k merchant.Key, d time.Duration) context.Context {
	r.t.Helper()
	require.NoError(r.t, r.store.MoveKeyClock(r.ctx, k.ID, d))
	return clock.With(r.ctx, d)
}

// verify submits a code in a transaction that reads the verification
// locked, as the verify request does.
func (r *rig) verify(k merchant.Key, id, code string) (*verification.Verification, error) {
	var v *verification.Verification
	err := r.store.InTx(r.ctx, func(tx *store.Tx) error {
		locked, err := tx.LockVerificationForKey(r.ctx, k.ID, id)
		if err != nil {
			return err
		}
		v, err = r.svc.Verify(r.ctx, tx, locked, code)
		return err
	})
	return v, err
}

// run runs each operation of the verification not yet done, once, against
// the sandbox, and returns their ids.
func (r *rig) run(id string) []string {
	r.t.Helper()
	ops := storetest.OpenOperations(r.t, r.store, id)
	for _, op := range ops {
		require.NoError(r.t, r.ops.Run(r.ctx, op, 1, 5))
	}
	return ops
}

func (r *rig) verification(id string) *verification.Verification {
	r.t.Helper()
	v, err := r.store.FindVerificationByID(r.ctx, id)
	require.NoError(r.t, err)
	return v
}

// events lists the types of the verification's events, oldest first.
func (r *rig) events(k merchant.Key, id string) []string {
	return storetest.EventTypes(r.t, r.store, k.ID, id)
}

// cardHashes are the card number's keyed hashes, one under each master
// key of the keyring, the active one first: HMAC-SHA256 under a key
// derived for the label below. The label is part of the stored format:
// checks hashed under another would no longer count
// (docs/design/decisions.md section 15).
func (r *rig) cardHashes(number string) []string {
	var out []string
	for _, k := range r.keyring.DeriveKeys("paygate card verification card hash v1") {
		m := hmac.New(sha256.New, k)
		m.Write([]byte(number))
		out = append(out, hex.EncodeToString(m.Sum(nil)))
	}
	return out
}

// luhnCard is a sandbox success card of its own for each seed: 16 digits,
// Luhn-valid (docs/sandbox.md: any such number succeeds). A test takes
// cards of its own: at most three verifications of a card a day.
func luhnCard(seed int) string {
	base := fmt.Sprintf("411111%09d", seed)
	sum := 0
	for i := len(base) - 1; i >= 0; i-- {
		d := int(base[i] - '0')
		if (len(base)-i)%2 == 1 {
			if d *= 2; d > 9 {
				d -= 9
			}
		}
		sum += d
	}
	return base + fmt.Sprint((10-sum%10)%10)
}

// storedHashes lists the card_checks table's hashes, as stored.
func (r *rig) storedHashes() []string {
	r.t.Helper()
	rows, err := r.store.DB().QueryContext(r.ctx, `SELECT card_hash FROM card_checks ORDER BY created_at`)
	require.NoError(r.t, err)
	defer rows.Close()
	var out []string
	for rows.Next() {
		var h string
		require.NoError(r.t, rows.Scan(&h))
		out = append(out, h)
	}
	require.NoError(r.t, rows.Err())
	return out
}

// faultOf is err's fault, failing the test when err is none.
func faultOf(t *testing.T, err error) *fault.Error {
	t.Helper()
	var f *fault.Error
	require.True(t, errors.As(err, &f), "want a fault, got %v", err)
	return f
}

// expire runs the verification's expiry job once, as River would, and
// returns how long it asked to wait (0: it did not snooze).
func (r *rig) expire(id string) time.Duration {
	r.t.Helper()
	w := &clock.ExpiryWorker[verification.ExpireArgs]{Expire: r.engine.ExpireJob}
	err := w.Work(r.ctx, &river.Job[verification.ExpireArgs]{JobRow: &rivertype.JobRow{},
		Args: verification.ExpireArgs{VerificationID: id}})
	var s *rivertype.JobSnoozeError
	if errors.As(err, &s) {
		return s.Duration
	}
	require.NoError(r.t, err)
	return 0
}
