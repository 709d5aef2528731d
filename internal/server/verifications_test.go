package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/client"
	"github.com/paygate/paygate/internal/merchant"
	"github.com/paygate/paygate/internal/openapi"
	"github.com/paygate/paygate/internal/provider/sandbox/acquirer"
	"github.com/paygate/paygate/internal/store/storetest"
)

// luhnCard is a sandbox success card: 16 digits from seed, Luhn-valid (any
// such number succeeds in the sandbox, docs/sandbox.md). Each test takes
// its own cards: at most three verifications of a card a day.
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

func verificationBody(order, number string) string {
	return fmt.Sprintf(`{"order_id":%q,"currency":"UAH","card":{"number":%q,"expire_month":12,"expire_year":%d,"cvv":"123"}}`,
		order, number, time.Now().Year()+2)
}

// createVerification creates a verification and expects 201 pending.
func (e *env) createVerification(c *client.Client, order, number string) openapi.CardVerification {
	e.t.Helper()
	var v openapi.CardVerification
	require.NoError(e.t, c.JSON(context.Background(), "POST", "/api/v1/card-verifications", json.RawMessage(verificationBody(order, number)), &v))
	require.Equal(e.t, "pending", v.Status)
	require.False(e.t, v.Final)
	require.Nil(e.t, v.NextAction)
	return v
}

func (e *env) getVerification(c *client.Client, id string) openapi.CardVerification {
	e.t.Helper()
	var v openapi.CardVerification
	require.NoError(e.t, c.JSON(context.Background(), "GET", "/api/v1/card-verifications/"+id, nil, &v))
	return v
}

// awaitVerification waits for the verification to leave the given statuses
// (pending by default), moving the clock as settle does.
func (e *env) awaitVerification(c *client.Client, id string, passing ...string) openapi.CardVerification {
	e.t.Helper()
	if len(passing) == 0 {
		passing = []string{"pending"}
	}
	var v openapi.CardVerification
	e.await(time.Second, func() error {
		if v = e.getVerification(c, id); slices.Contains(passing, v.Status) {
			return fmt.Errorf("verification %s stayed %s", id, v.Status)
		}
		return nil
	})
	return v
}

func (e *env) verifyCode(c *client.Client, id, code string) *client.Response {
	e.t.Helper()
	return e.post(c, "/api/v1/card-verifications/"+id+"/verify", fmt.Sprintf(`{"code":%q}`, code))
}

func verificationOf(t *testing.T, r *client.Response) openapi.CardVerification {
	t.Helper()
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	var v openapi.CardVerification
	require.NoError(t, json.Unmarshal(r.Body, &v))
	return v
}

func errorCode(t *testing.T, r *client.Response) string {
	t.Helper()
	return decodeError(t, r.Body).Error.Code
}

// eventTypes lists the types of a resource's events, oldest first.
func (e *env) eventTypes(c *client.Client, id string) []string {
	e.t.Helper()
	var out []string
	for _, ev := range e.events(c, "?limit=100&resource_id="+id).Items {
		out = append([]string{ev.Type}, out...)
	}
	return out
}

// TestVerificationCodeBeforeSent: no code is awaited before the provider
// has sent one. Without workers the provider is not asked, so the
// verification stays pending however fast the workers of another test
// would be.
func TestVerificationCodeBeforeSent(t *testing.T) {
	each(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{})
		v := e.createVerification(e.a, "v-early", "4242424242424242")
		r := e.verifyCode(e.a, v.VerificationID, "4242")
		require.Equal(t, http.StatusUnprocessableEntity, r.Status, "no code awaited before code_sent")
		require.Equal(t, "verification_not_awaiting_code", errorCode(t, r))
	})
}

func TestCardVerifications(t *testing.T) {
	each(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{work: true})

		t.Run("the right code verifies", func(t *testing.T) {
			number := "4242424242424242"
			v := e.createVerification(e.a, "v-right", number)
			require.Equal(t, "424242******4242", v.CardMask)
			require.NotEmpty(t, v.ClientDescription)
			v = e.awaitVerification(e.a, v.VerificationID)
			require.Equal(t, "code_sent", v.Status)
			require.Equal(t, &openapi.VerificationNextAction{Type: "lookup"}, v.NextAction)

			got := verificationOf(t, e.verifyCode(e.a, v.VerificationID, number[12:]))
			require.Equal(t, "code_sent", got.Status, "the result is asynchronous")
			require.Equal(t, 1, got.VerifyAttempts)
			v = e.awaitVerification(e.a, v.VerificationID, "code_sent")
			require.Equal(t, "verified", v.Status)
			require.True(t, v.Final)
			require.Nil(t, v.NextAction)
			require.Equal(t, 1, v.VerifyAttempts)

			r := e.verifyCode(e.a, v.VerificationID, number[12:])
			require.Equal(t, "verification_not_awaiting_code", errorCode(t, r))
			require.Equal(t, []string{"card_verification.pending", "card_verification.code_sent", "card_verification.verified"},
				e.eventTypes(e.a, v.VerificationID))
		})

		t.Run("three wrong codes fail", func(t *testing.T) {
			v := e.createVerification(e.a, "v-wrong", "5555555555554444")
			e.awaitVerification(e.a, v.VerificationID)
			for i := 1; i <= 3; i++ {
				got := verificationOf(t, e.verifyCode(e.a, v.VerificationID, "000"+fmt.Sprint(i)))
				require.Equal(t, "code_sent", got.Status, "right and wrong codes answer alike")
				require.Equal(t, i, got.VerifyAttempts)
				if i < 3 {
					// The wrong code is checked and the verification still waits.
					e.await(time.Second, e.verifyOpsDone(v.VerificationID))
					require.Equal(t, "code_sent", e.getVerification(e.a, v.VerificationID).Status)
				}
			}
			got := e.awaitVerification(e.a, v.VerificationID, "code_sent")
			require.Equal(t, "failed", got.Status)
			require.Equal(t, "authentication_failed", got.DeclineCode)
			require.Equal(t, 3, got.VerifyAttempts)
		})

		t.Run("a declined card fails", func(t *testing.T) {
			v := e.createVerification(e.a, "v-decline", "4000000000000002")
			got := e.awaitVerification(e.a, v.VerificationID)
			require.Equal(t, "failed", got.Status)
			require.Equal(t, "card_declined", got.DeclineCode)
		})

		t.Run("unreadable answers pass through manual_review", func(t *testing.T) {
			v := e.createVerification(e.a, "v-unreadable", "4000000000000259")
			got := e.awaitVerification(e.a, v.VerificationID, "pending", "manual_review")
			require.Equal(t, "code_sent", got.Status, "manual_review is never a bad card")
			require.Equal(t, []string{"card_verification.pending", "card_verification.manual_review", "card_verification.code_sent"},
				e.eventTypes(e.a, v.VerificationID))
		})

		t.Run("expires after 72 hours", func(t *testing.T) {
			v := e.createVerification(e.a, "v-expire", luhnCard(1))
			e.awaitVerification(e.a, v.VerificationID)
			e.clock.Add(72 * time.Hour)
			got := e.awaitVerification(e.a, v.VerificationID, "code_sent")
			require.Equal(t, "failed", got.Status)
			require.Equal(t, "verification_expired", got.DeclineCode)
			require.Equal(t, "verification_not_awaiting_code", errorCode(t, e.verifyCode(e.a, v.VerificationID, "1234")))
			// The provider is asked to let the hold go (docs/design/decisions.md section 15).
			released := func() int {
				n := 0
				for _, en := range e.acquirer.Ledger() {
					if en.Kind == acquirer.EntryRelease && en.Reason == "expired" && en.CardMask == got.CardMask {
						n++
					}
				}
				return n
			}
			e.await(time.Second, func() error {
				if released() == 0 {
					return fmt.Errorf("the acquirer released no hold of verification %s", v.VerificationID)
				}
				return nil
			})
			require.Equal(t, 1, released(), "the hold was released once at the acquirer")
		})

		t.Run("ids of other keys and resources are 404", func(t *testing.T) {
			v := e.createVerification(e.a, "v-other", luhnCard(2))
			for _, r := range []*client.Response{
				e.get(e.b, "/api/v1/card-verifications/"+v.VerificationID),
				e.verifyCode(e.b, v.VerificationID, "1234"),
				e.get(e.a, "/api/v1/payments/"+v.VerificationID),
				e.post(e.a, "/api/v1/payments/"+v.VerificationID+"/cancel", ""),
				e.post(e.a, "/api/v1/payments/"+v.VerificationID+"/capture", `{"amount_minor":100}`),
				e.post(e.a, "/api/v1/payments/"+v.VerificationID+"/refunds", `{"amount_minor":100}`),
			} {
				require.Equal(t, http.StatusNotFound, r.Status, string(r.Body))
			}
			require.NotContains(t, string(e.get(e.a, "/api/v1/payments?limit=100").Body), v.VerificationID)
			// Another key may use the same order_id.
			e.createVerification(e.b, "v-other", luhnCard(3))
		})

		t.Run("duplicate order_id is 409", func(t *testing.T) {
			e.createVerification(e.a, "v-dup", luhnCard(4))
			r := e.post(e.a, "/api/v1/card-verifications", verificationBody("v-dup", luhnCard(5)))
			require.Equal(t, http.StatusConflict, r.Status)
			require.Equal(t, "duplicate_order_id", errorCode(t, r))
		})

		t.Run("the fourth verification of a card in 24 hours is 429", func(t *testing.T) {
			number := luhnCard(6)
			e.createVerification(e.a, "v-limit-1", number)
			e.createVerification(e.b, "v-limit-2", number) // another key counts too
			e.createVerification(e.a, "v-limit-3", number)
			fourth := client.Request{Method: "POST", Target: "/api/v1/card-verifications", IdempotencyKey: "v-limit-4-key",
				Body: []byte(verificationBody("v-limit-4", number))}
			r, err := e.b.Do(context.Background(), fourth)
			require.NoError(t, err)
			require.Equal(t, http.StatusTooManyRequests, r.Status)
			require.Equal(t, "rate_limited", errorCode(t, r))
			require.NotContains(t, string(r.Body), number)
			wait, err := strconv.Atoi(r.Header.Get("Retry-After"))
			require.NoError(t, err)
			require.InDelta(t, 24*3600, wait, 60, "Retry-After: when the oldest check leaves the window")
			// Another card is not limited, and the card is again a day later:
			// the same request (same Idempotency-Key) then succeeds, because
			// a rate_limited refusal is not stored as its answer.
			e.createVerification(e.b, "v-limit-5", luhnCard(7))
			e.clock.Add(24 * time.Hour)
			r, err = e.b.Do(context.Background(), fourth)
			require.NoError(t, err)
			require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
			require.False(t, r.Replayed())
		})

		t.Run("a key without direct card data is 403", func(t *testing.T) {
			k, err := e.merchants.Create(context.Background(), merchant.NewKey{Name: "hosted-only"})
			require.NoError(t, err)
			c := client.New(e.url, k.Key.AccessKey, k.Secret)
			c.Now, c.Retries = e.clock.Now, 0
			r := e.post(c, "/api/v1/card-verifications", verificationBody("v-403", luhnCard(8)))
			require.Equal(t, http.StatusForbidden, r.Status)
			require.Equal(t, "direct_card_data_not_allowed", errorCode(t, r))
		})

		t.Run("no card number or code in answers and events", func(t *testing.T) {
			number, code := luhnCard(9), "98765432"
			v := e.createVerification(e.a, "v-pci", number)
			e.awaitVerification(e.a, v.VerificationID)
			r := e.verifyCode(e.a, v.VerificationID, code)
			seen := string(r.Body) + string(e.get(e.a, "/api/v1/card-verifications/"+v.VerificationID).Body)
			e.await(time.Second, e.verifyOpsDone(v.VerificationID))
			for _, ev := range e.events(e.a, "?limit=100&resource_id="+v.VerificationID).Items {
				seen += string(ev.Data.Object)
				var obj openapi.CardVerification
				require.NoError(t, json.Unmarshal(ev.Data.Object, &obj), "data.object is the CardVerification")
				require.Equal(t, v.VerificationID, obj.VerificationID)
			}
			require.NotContains(t, seen, number)
			require.NotContains(t, seen, code)
			require.NotContains(t, seen, `"cvv"`)
		})
	})
}

// verifyOpsDone is the condition that none of the verification's
// operations is left to run (its codes checked).
func (e *env) verifyOpsDone(id string) func() error {
	return func() error {
		var n int
		require.NoError(e.t, e.store.DB().QueryRowContext(context.Background(),
			`SELECT COUNT(*) FROM operations WHERE resource_id = $1 AND state <> 'done'`, id).Scan(&n))
		if n > 0 {
			return fmt.Errorf("verification %s has %d operations not done", id, n)
		}
		return nil
	}
}

func (e *env) get(c *client.Client, target string) *client.Response {
	e.t.Helper()
	resp, err := c.Do(context.Background(), client.Request{Method: "GET", Target: target})
	require.NoError(e.t, err)
	return resp
}

// TestCardVerificationRaces fires concurrent requests at the atomic steps
// (docs/design/decisions.md section 15): codes counted at most to the
// provider's cap with one failed; one order_id, one verification.
func TestCardVerificationRaces(t *testing.T) {
	each(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{work: true})
		second := e.apiProcess()

		t.Run("50 concurrent wrong codes", func(t *testing.T) {
			cs := e.clients("codes", "", e.url, second)
			v := e.createVerification(cs[0], "v-race", luhnCard(20))
			e.awaitVerification(cs[0], v.VerificationID)
			n := tally(t, race(t, cs, posts(50, "/api/v1/card-verifications/"+v.VerificationID+"/verify", `{"code":"0000"}`)))
			require.Equal(t, map[string]int{"200": 3, "422 verification_not_awaiting_code": 47}, n)
			got := e.awaitVerification(cs[0], v.VerificationID, "code_sent")
			require.Equal(t, "failed", got.Status)
			require.Equal(t, "authentication_failed", got.DeclineCode)
			require.Equal(t, 3, got.VerifyAttempts)
			e.await(time.Second, e.verifyOpsDone(v.VerificationID))
			failed := 0
			for _, typ := range e.eventTypes(cs[0], v.VerificationID) {
				if typ == "card_verification.failed" {
					failed++
				}
			}
			require.Equal(t, 1, failed)
		})

		t.Run("duplicate order_id race", func(t *testing.T) {
			cs := e.clients("dups", "", e.url, second)
			reqs := make([]post, 20)
			for i := range reqs {
				reqs[i] = post{"/api/v1/card-verifications", verificationBody("v-dup-race", luhnCard(100+i))}
			}
			n := statuses(t, race(t, cs, reqs))
			require.Equal(t, map[string]int{"201": 1, "409 duplicate_order_id": 19}, n)
		})

		t.Run("concurrent verifications of one card", func(t *testing.T) {
			cs := e.clients("cards", "", e.url, second)
			reqs := make([]post, 10)
			for i := range reqs {
				reqs[i] = post{"/api/v1/card-verifications", verificationBody(fmt.Sprintf("v-card-%d", i), luhnCard(200))}
			}
			n := statuses(t, race(t, cs, reqs))
			require.Equal(t, map[string]int{"201": 3, "429 rate_limited": 7}, n)
		})
	})
}

// statuses counts answers by "status code".
func statuses(t *testing.T, rs []*client.Response) map[string]int {
	t.Helper()
	n := map[string]int{}
	for _, r := range rs {
		key := fmt.Sprint(r.Status)
		if r.Status >= 400 {
			key += " " + errorCode(t, r)
		}
		n[key]++
	}
	return n
}
