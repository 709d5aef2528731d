package server_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/allowance"
	"github.com/paygate/paygate/internal/client"
	"github.com/paygate/paygate/internal/merchant"
	"github.com/paygate/paygate/internal/openapi"
	"github.com/paygate/paygate/internal/payment"
	"github.com/paygate/paygate/internal/store"
	"github.com/paygate/paygate/internal/store/storetest"
	"github.com/paygate/paygate/internal/webhook"
)

// keyClock is the calling key's sandbox clock (getSandboxClock (GET
// /sandbox/clock)).
func (e *env) keyClock(c *client.Client) openapi.SandboxClock {
	e.t.Helper()
	var out openapi.SandboxClock
	require.NoError(e.t, c.JSON(context.Background(), "GET", "/api/v1/sandbox/clock", nil, &out))
	return out
}

// storedPayment is a payment as stored, not as an answer shows it at the
// key's time (an answer shows a session past its deadline as expired
// whether or not its expiry ran).
func (e *env) storedPayment(id string) *payment.Payment {
	e.t.Helper()
	p, err := e.store.FindPaymentByID(context.Background(), id)
	require.NoError(e.t, err)
	return p
}

// storedPaymentIs is the condition that the stored payment is in status.
func (e *env) storedPaymentIs(id string, status payment.Status) func() error {
	return func() error {
		if got := e.storedPayment(id).Status; got != status {
			return fmt.Errorf("payment %s stayed %s, not %s", id, got, status)
		}
		return nil
	}
}

// TestSandboxClockExpiries: an advance of a key's clock runs that key's
// expiries, each at its own time, and nothing of another key's
// (docs/design/decisions.md section 14): hosted sessions, authorizations,
// card verifications waiting for their code, payouts waiting for their
// payee. The process's clock (the test clock) does not move, so no
// expiry job of River's comes due: the advance does them.
func TestSandboxClockExpiries(t *testing.T) {
	each(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{work: true})

		t.Run("a session expires with its key's clock, not another key's", func(t *testing.T) {
			c, k := e.newClient("clock-session-a")
			other, otherKey := e.newClient("clock-session-b")
			s := createSession(t, c, fmt.Sprintf(visaSession, 1, ""))
			same := createSession(t, other, fmt.Sprintf(visaSession, 1, ""))
			require.Equal(t, "created", s.Status)

			got := e.advance(c, s.ExpiresAt.Std().Add(time.Second))
			require.GreaterOrEqual(t, got.Ran["expirations"], 1)
			require.Equal(t, payment.Expired, e.storedPayment(s.PaymentID).Status, "the advance ran the expiry")
			require.Equal(t, "expired", e.paymentOf(t, c, s.PaymentID).Status)
			require.Equal(t, 1, e.eventsOf(k.ID, "payment.expired", map[string]bool{s.PaymentID: true}))

			require.Equal(t, payment.Created, e.storedPayment(same.PaymentID).Status)
			require.Equal(t, "created", e.paymentOf(t, other, same.PaymentID).Status)
			require.Zero(t, e.eventsOf(otherKey.ID, "payment.expired", map[string]bool{same.PaymentID: true}))
			require.Zero(t, e.keyClock(other).OffsetSeconds, "another key's clock does not move")
		})

		t.Run("an authorization expires after its 7 days, on its key's clock", func(t *testing.T) {
			c, k := e.newClient("clock-authorization")
			// A key a day ahead: the provider's expiry (its own, the
			// process's, time) is moved onto the key's clock.
			e.advance(c, e.keyClock(c).Now.Std().Add(24*time.Hour))
			now := e.keyClock(c).Now.Std()
			p := e.settle(c, e.direct(c, cardBody("4242424242424242", `,"operation_mode":"authorize"`)).PaymentID)
			require.Equal(t, "authorized", p.Status)
			exp := p.AuthorizationExpiresAt.Std()
			require.WithinDuration(t, now.Add(7*24*time.Hour), exp, time.Minute, "7 days of the key's clock")

			got := e.advance(c, exp.Add(-time.Second))
			require.Zero(t, got.Ran["expirations"], "not before its time")
			require.Equal(t, payment.Authorized, e.storedPayment(p.PaymentID).Status)
			got = e.advance(c, exp.Add(time.Second))
			require.GreaterOrEqual(t, got.Ran["expirations"], 1)
			require.Equal(t, payment.Expired, e.storedPayment(p.PaymentID).Status)
			require.Equal(t, "expired", e.paymentOf(t, c, p.PaymentID).Status)
			require.Equal(t, 1, e.eventsOf(k.ID, "payment.expired", map[string]bool{p.PaymentID: true}))
		})

		t.Run("a card verification expires after 72 hours of key time", func(t *testing.T) {
			c, _ := e.newClient("clock-verification")
			v := e.createVerification(c, "clock-v", luhnCard(901))
			require.Equal(t, "code_sent", e.awaitVerification(c, v.VerificationID).Status)

			got := e.advance(c, e.keyClock(c).Now.Std().Add(71*time.Hour))
			require.Zero(t, got.Ran["expirations"])
			require.Equal(t, "code_sent", e.getVerification(c, v.VerificationID).Status)
			got = e.advance(c, v.CreatedAt.Std().Add(72*time.Hour+time.Second))
			require.GreaterOrEqual(t, got.Ran["expirations"], 1)
			done := e.getVerification(c, v.VerificationID)
			require.Equal(t, "failed", done.Status)
			require.Equal(t, "verification_expired", done.DeclineCode)
		})

		t.Run("a payout left in requires_action fails after 30 minutes of key time", func(t *testing.T) {
			c, _ := e.newClient("clock-payout")
			p := e.createPayout(c, payoutBody("4000000000003220", ""))
			ra := e.settlePayout(c, p.PayoutID)
			require.Equal(t, "requires_action", ra.Status)

			got := e.advance(c, e.keyClock(c).Now.Std().Add(31*time.Minute))
			require.GreaterOrEqual(t, got.Ran["expirations"], 1)
			done := e.getPayout(c, p.PayoutID)
			require.Equal(t, "failed", done.Status)
			require.Equal(t, "authentication_expired", done.DeclineCode)
		})
	})
}

// TestSandboxClockKeyTime: what a key creates is dated by its clock, the
// allowance day is the key's, and its webhooks still go out at once
// (they keep the process's time) (docs/design/decisions.md section 14).
func TestSandboxClockKeyTime(t *testing.T) {
	each(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{work: true})

		t.Run("created_at is the key's time", func(t *testing.T) {
			c, _ := e.newClient("clock-created")
			e.advance(c, e.clock.Now().Add(10*24*time.Hour))
			now := e.keyClock(c).Now.Std()
			require.True(t, now.After(e.clock.Now().Add(9*24*time.Hour)))

			p := e.direct(c, cardBody("4242424242424242", ""))
			require.Equal(t, now, p.CreatedAt.Std())
			s := createSession(t, c, fmt.Sprintf(visaSession, 2, ""))
			require.Equal(t, now, s.CreatedAt.Std())
			require.Equal(t, now.Add(payment.DefaultSessionLifetime), s.ExpiresAt.Std())
			v := e.createVerification(c, "clock-created", luhnCard(902))
			require.Equal(t, now, v.CreatedAt.Std())
			po := e.createPayout(c, payoutBody("4242424242424242", ""))
			require.Equal(t, now, po.CreatedAt.Std())

			// The session's expiry job is scheduled on the process's clock
			// at the time the key's reaches the deadline, not 10 days on.
			e.clock.Add(payment.DefaultSessionLifetime + time.Second)
			e.await(0, e.storedPaymentIs(s.PaymentID, payment.Expired)) // the session's expiry job ran
		})

		t.Run("the expiry jobs decide by the key's clock", func(t *testing.T) {
			// A key a day ahead; each job is scheduled on the process's
			// clock when the key's reaches its deadline, and finds it due.
			c, _ := e.newClient("clock-jobs")
			e.advance(c, e.clock.Now().Add(24*time.Hour))
			auth := e.settle(c, e.direct(c, cardBody("4242424242424242", `,"operation_mode":"authorize"`)).PaymentID)
			require.Equal(t, "authorized", auth.Status)
			threeDS := e.settle(c, e.direct(c, cardBody("4000000000003220", "")).PaymentID)
			require.Equal(t, "requires_action", threeDS.Status)
			po := e.createPayout(c, payoutBody("4000000000003220", ""))
			require.Equal(t, "requires_action", e.settlePayout(c, po.PayoutID).Status)
			v := e.createVerification(c, "clock-jobs", luhnCard(903))
			require.Equal(t, "code_sent", e.awaitVerification(c, v.VerificationID).Status)

			e.clock.Add(payment.ActionLifetime + time.Minute)
			e.await(0, func() error {
				if got := e.getPayout(c, po.PayoutID).Status; got != "failed" {
					return fmt.Errorf("payout %s stayed %s: its action did not expire", po.PayoutID, got)
				}
				return nil
			})
			e.await(0, e.storedPaymentIs(threeDS.PaymentID, payment.Expired)) // the 3DS step expired
			e.clock.Add(72 * time.Hour)
			e.await(0, func() error {
				if got := e.getVerification(c, v.VerificationID); got.DeclineCode != "verification_expired" {
					return fmt.Errorf("verification %s stayed %s (%q): it did not expire", v.VerificationID, got.Status, got.DeclineCode)
				}
				return nil
			})
			require.Equal(t, payment.Authorized, e.storedPayment(auth.PaymentID).Status)
			e.clock.Add(4 * 24 * time.Hour)
			e.await(0, e.storedPaymentIs(auth.PaymentID, payment.Expired)) // the authorization expired
		})

		t.Run("the collection allowance follows the key's day", func(t *testing.T) {
			c, _ := e.newClient("clock-allowance")
			e.setAllowance(c, allowance.Collection, nil, minor(1000))
			order := func() string {
				return fmt.Sprintf(`{"order_id":"a-%s","amount_minor":1000,"currency":"USD",%s,
					"payment_method":{"type":"card","card":{"number":"4242424242424242","expire_month":12,"expire_year":%d,"cvv":"123"}}}`,
					uuid.NewString(), visaCustomer, time.Now().Year()+2)
			}
			e.direct(c, order())
			resp := e.post(c, "/api/v1/payments/direct", order())
			require.Equal(t, http.StatusUnprocessableEntity, resp.Status, "%s", resp.Body)
			require.Equal(t, "limit_exceeded", errorCode(t, resp))

			var clk openapi.SandboxClockAdvanced
			require.NoError(t, c.JSON(context.Background(), "POST", "/api/v1/sandbox/clock/advance",
				map[string]any{"seconds": 24 * 60 * 60}, &clk))
			lim := e.limits(c).Items
			require.Len(t, lim, 1)
			require.Zero(t, lim[0].UsedMinor+lim[0].ReservedMinor, "a new day of the key's")
			require.True(t, lim[0].ResetsAt.Std().After(clk.Now.Std()))
			e.direct(c, order())
		})

		t.Run("webhooks of a key ahead go out at once", func(t *testing.T) {
			c, k := e.newClient("clock-webhooks")
			rc := newReceiver(t, ok)
			e.addEndpoint(c, rc.URL, "payment.expired")
			s := createSession(t, c, fmt.Sprintf(visaSession, 3, ""))
			e.advance(c, s.ExpiresAt.Std().Add(24*time.Hour))
			evs, err := e.store.ListEvents(context.Background(), k.ID, webhook.EventFilter{Type: "payment.expired", Limit: 10})
			require.NoError(t, err)
			require.Len(t, evs, 1)
			// The test clock stays: a delivery dated by the key's clock
			// would wait a day.
			e.await(0, func() error {
				if len(rc.requests(evs[0].ID)) == 0 {
					return fmt.Errorf("event %s was not delivered", evs[0].ID)
				}
				return nil
			})
		})
	})
}

// TestSandboxClockAPI: the endpoints' rules (docs/design/decisions.md
// section 14): exactly one of to and seconds, forward only, at most 5
// years a call; 404 for a production key; an Idempotency-Key replay
// answers the stored answer without moving the clock again.
func TestSandboxClockAPI(t *testing.T) {
	each(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{})
		ctx := context.Background()
		now := e.keyClock(e.a).Now.Std()

		t.Run("validation", func(t *testing.T) {
			for name, body := range map[string]string{
				"both":                  fmt.Sprintf(`{"to":%q,"seconds":60}`, now.Add(time.Hour).Format(time.RFC3339)),
				"neither":               `{}`,
				"backwards":             fmt.Sprintf(`{"to":%q}`, now.Add(-time.Hour).Format(time.RFC3339)),
				"negative seconds":      `{"seconds":-60}`,
				"more than 5 years":     fmt.Sprintf(`{"seconds":%d}`, int64(6*365*24*60*60)),
				"a date past 5 years":   fmt.Sprintf(`{"to":%q}`, now.AddDate(5, 0, 2).Format(time.RFC3339)),
				"not a date":            `{"to":"tomorrow"}`,
				"seconds not a number":  `{"seconds":"60"}`,
				"seconds with fraction": `{"seconds":1.5}`,
			} {
				resp := e.post(e.a, "/api/v1/sandbox/clock/advance", body)
				require.Equal(t, http.StatusBadRequest, resp.Status, "%s: %s", name, resp.Body)
				require.Equal(t, "validation_error", errorCode(t, resp), name)
			}
			require.Equal(t, now, e.keyClock(e.a).Now.Std(), "nothing moved")
		})

		t.Run("an Idempotency-Key replay does not move the clock again", func(t *testing.T) {
			req := client.Request{Method: "POST", Target: "/api/v1/sandbox/clock/advance",
				Body: []byte(`{"seconds":3600}`), IdempotencyKey: "advance-" + uuid.NewString()}
			first, err := e.a.Do(ctx, req)
			require.NoError(t, err)
			require.Equal(t, http.StatusOK, first.Status, "%s", first.Body)
			var adv openapi.SandboxClockAdvanced
			require.NoError(t, json.Unmarshal(first.Body, &adv))
			require.Equal(t, now.Add(time.Hour), adv.Now.Std())

			again, err := e.a.Do(ctx, req)
			require.NoError(t, err)
			require.Equal(t, http.StatusOK, again.Status)
			require.True(t, again.Replayed())
			require.JSONEq(t, string(first.Body), string(again.Body))
			clk := e.keyClock(e.a)
			require.Equal(t, now.Add(time.Hour), clk.Now.Std())
			require.Equal(t, int64(3600), clk.OffsetSeconds)
		})

		t.Run("a retry while the first still runs goes to the first's time", func(t *testing.T) {
			// What the first request keeps before it moves the clock: its
			// absolute target with its Idempotency-Key (a client that timed
			// out retries while it runs).
			from := e.keyClock(e.a).Now.Std()
			body := []byte(`{"seconds":86400}`)
			idem := "advance-" + uuid.NewString()
			sum := sha256.Sum256(body)
			fp := sha256.Sum256([]byte("POST\n/api/v1/sandbox/clock/advance\n" + hex.EncodeToString(sum[:])))
			target := from.Add(2 * time.Hour)
			require.NoError(t, e.store.InTx(ctx, func(tx *store.Tx) error {
				return tx.SaveIdempotentResponse(ctx, e.aKey.ID, idem, store.StoredResponse{
					Fingerprint: hex.EncodeToString(fp[:]), StatusCode: 102,
					Body: []byte(`{"target":"` + target.Format(time.RFC3339Nano) + `"}`), CreatedAt: e.clock.Now()})
			}))
			resp, err := e.a.Do(ctx, client.Request{Method: "POST", Target: "/api/v1/sandbox/clock/advance",
				Body: body, IdempotencyKey: idem})
			require.NoError(t, err)
			require.Equal(t, http.StatusOK, resp.Status, "%s", resp.Body)
			require.Equal(t, target, e.keyClock(e.a).Now.Std(), "to the first request's target, not a day on")
			again, err := e.a.Do(ctx, client.Request{Method: "POST", Target: "/api/v1/sandbox/clock/advance",
				Body: body, IdempotencyKey: idem})
			require.NoError(t, err)
			require.True(t, again.Replayed())
			require.JSONEq(t, string(resp.Body), string(again.Body))
			require.Equal(t, target, e.keyClock(e.a).Now.Std())

			over := e.post(e.a, "/api/v1/sandbox/clock/advance", `{"seconds":18446744074}`)
			require.Equal(t, http.StatusBadRequest, over.Status, "%s", over.Body)
		})

		t.Run("at most 5 years, to the day", func(t *testing.T) {
			from := e.keyClock(e.b).Now.Std()
			got := e.advance(e.b, from.AddDate(5, 0, 0))
			require.Equal(t, from.AddDate(5, 0, 0), got.Now.Std())
		})
	})
}

// TestSandboxClockProduction: a production key has no sandbox clock: both
// endpoints answer 404 and nothing moves (docs/design/decisions.md
// section 14).
func TestSandboxClockProduction(t *testing.T) {
	each(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{environment: merchant.Production})
		ms := &merchant.Service{Store: e.store, Sealer: e.cfg.Keyring, Now: e.clock.Now,
			NewID: func() string { return uuid.NewString() }, Environment: merchant.Production}
		k, err := ms.Create(context.Background(), merchant.NewKey{Name: "live"})
		require.NoError(t, err)
		require.Equal(t, merchant.Production, k.Key.Environment)
		c := client.New(e.url, k.Key.AccessKey, k.Secret)
		c.Now, c.Retries = e.clock.Now, 0

		resp := e.get(c, "/api/v1/sandbox/clock")
		require.Equal(t, http.StatusNotFound, resp.Status, "%s", resp.Body)
		require.Equal(t, "not_found", errorCode(t, resp))
		for _, body := range []string{`{"seconds":60}`, `{}`} {
			resp = e.post(c, "/api/v1/sandbox/clock/advance", body)
			require.Equal(t, http.StatusNotFound, resp.Status, "%s", resp.Body)
			require.Equal(t, "not_found", errorCode(t, resp))
		}
		off, err := e.store.KeyClockOffset(context.Background(), k.Key.ID)
		require.NoError(t, err)
		require.Zero(t, off)
	})
}
