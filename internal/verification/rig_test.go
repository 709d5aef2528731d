package verification_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/app"
	"github.com/paygate/paygate/internal/app/apptest"
	"github.com/paygate/paygate/internal/clock"
	"github.com/paygate/paygate/internal/fault"
	"github.com/paygate/paygate/internal/merchant"
	"github.com/paygate/paygate/internal/operation"
	"github.com/paygate/paygate/internal/store"
	"github.com/paygate/paygate/internal/store/storetest"
	"github.com/paygate/paygate/internal/verification"
)

// rig is the card verification domain as internal/app builds it, on a
// fresh store of one database, verifying through the sandbox acquirer over
// real HTTP (internal/app/apptest).
type rig struct {
	*apptest.Rig
	svc    *verification.Service
	engine *verification.Engine
	// handler is the verification's operation handler, as the engine calls it.
	handler operation.Handler[app.Reader, *store.Tx]
}

func newRig(t *testing.T, db storetest.Database) *rig {
	t.Helper()
	r := apptest.New(t, db)
	return &rig{Rig: r, svc: r.App.Verifications.Service, engine: r.App.Verifications,
		handler: verification.NewHandler[app.Reader, *store.Tx](r.App.Verifications)}
}

// key is a new sandbox key allowed raw card data.
func (r *rig) key() merchant.Key { return r.Key(true) }

// of is a valid verification of the card number in USD.
func (r *rig) of(number string) verification.New {
	return verification.New{OrderID: "v-" + uuid.NewString(), Currency: "USD",
		Card: verification.Card{Number: number, ExpMonth: 12, ExpYear: r.Clock.Now().Year() + 2, CVV: "123"}}
}

// create accepts a verification in its own transaction, as a request does.
func (r *rig) create(ctx context.Context, k merchant.Key, in verification.New) (*verification.Verification, error) {
	var v *verification.Verification
	err := r.Store.InTx(ctx, func(tx *store.Tx) error {
		var err error
		v, err = r.svc.Create(ctx, tx, k, in)
		return err
	})
	return v, err
}

// accepted creates a verification that must be accepted.
func (r *rig) accepted(k merchant.Key, in verification.New) *verification.Verification {
	r.T.Helper()
	v, err := r.create(r.Ctx, k, in)
	require.NoError(r.T, err)
	return v
}

// codeSent creates a verification of the card and runs its LookUp: the
// sandbox holds a sum and sends the code (the card's last four digits).
func (r *rig) codeSent(k merchant.Key, number string) *verification.Verification {
	r.T.Helper()
	v := r.accepted(k, r.of(number))
	r.Run(v.ID)
	v = r.verification(v.ID)
	require.Equal(r.T, verification.CodeSent, v.Status)
	return v
}

// verify submits a code in a transaction that reads the verification
// locked, as the verify request does.
func (r *rig) verify(k merchant.Key, id, code string) (*verification.Verification, error) {
	var v *verification.Verification
	err := r.Store.InTx(r.Ctx, func(tx *store.Tx) error {
		locked, err := tx.LockVerificationForKey(r.Ctx, k.ID, id)
		if err != nil {
			return err
		}
		v, err = r.svc.Verify(r.Ctx, tx, locked, code)
		return err
	})
	return v, err
}

func (r *rig) verification(id string) *verification.Verification {
	r.T.Helper()
	v, err := r.Store.FindVerificationByID(r.Ctx, id)
	require.NoError(r.T, err)
	return v
}

// cardHashes are the card number's keyed hashes, one under each master
// key of the keyring, the active one first: HMAC-SHA256 under a key
// derived for the label below. The label is part of the stored format:
// checks hashed under another would no longer count
// (docs/design/decisions.md section 15).
func (r *rig) cardHashes(number string) []string {
	var out []string
	for _, k := range r.Keyring.DeriveKeys("paygate card verification card hash v1") {
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
	r.T.Helper()
	rows, err := r.Store.DB().QueryContext(r.Ctx, `SELECT card_hash FROM card_checks ORDER BY created_at`)
	require.NoError(r.T, err)
	defer rows.Close()
	var out []string
	for rows.Next() {
		var h string
		require.NoError(r.T, rows.Scan(&h))
		out = append(out, h)
	}
	require.NoError(r.T, rows.Err())
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
	r.T.Helper()
	w := &clock.ExpiryWorker[verification.ExpireArgs]{Expire: r.engine.ExpireJob}
	err := w.Work(r.Ctx, &river.Job[verification.ExpireArgs]{JobRow: &rivertype.JobRow{},
		Args: verification.ExpireArgs{VerificationID: id}})
	var s *rivertype.JobSnoozeError
	if errors.As(err, &s) {
		return s.Duration
	}
	require.NoError(r.T, err)
	return 0
}
