package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/client"
	"github.com/paygate/paygate/internal/merchant"
	"github.com/paygate/paygate/internal/openapi"
	"github.com/paygate/paygate/internal/provider/sandbox/acquirer"
	"github.com/paygate/paygate/internal/store/storetest"
)

// payoutBody is a createPayout body to a card, with the Visa customer
// fields (the test cards are Visa); extra is appended inside the object.
func payoutBody(number, extra string) string {
	return fmt.Sprintf(`{"order_id":"po-%s","amount_minor":2500,"currency":"USD","account":"main",%s,
		"payout_method":{"type":"card","card":{"number":"%s","expire_month":12,"expire_year":%d,"cvv":"123"}}%s}`,
		uuid.NewString(), visaCustomer, number, time.Now().Year()+2, extra)
}

// createPayout posts body and requires 201 processing.
func (e *env) createPayout(c *client.Client, body string) openapi.Payout {
	e.t.Helper()
	resp := e.post(c, "/api/v1/payouts", body)
	require.Equal(e.t, http.StatusCreated, resp.Status, "%s", resp.Body)
	var p openapi.Payout
	require.NoError(e.t, json.Unmarshal(resp.Body, &p))
	require.Equal(e.t, "processing", p.Status)
	require.False(e.t, p.Final)
	return p
}

func (e *env) getPayout(c *client.Client, id string) openapi.Payout {
	e.t.Helper()
	var p openapi.Payout
	require.NoError(e.t, c.JSON(context.Background(), "GET", "/api/v1/payouts/"+id, nil, &p))
	return p
}

// settlePayout waits for the payout to leave the passing statuses, moving
// the clock a second per look (as settle does for payments).
func (e *env) settlePayout(c *client.Client, id string, passing ...string) openapi.Payout {
	e.t.Helper()
	if len(passing) == 0 {
		passing = []string{"processing"}
	}
	var p openapi.Payout
	e.await(time.Second, func() error {
		if p = e.getPayout(c, id); slices.Contains(passing, p.Status) {
			return fmt.Errorf("payout %s stayed %s", id, p.Status)
		}
		return nil
	})
	return p
}

// transfersFor counts the acquirer's transfers for a payout, found by its
// card mask and amount among the ledger's entries.
func transfersFor(e *env, amount int64) int {
	e.t.Helper()
	n := 0
	for _, en := range e.acquirer.Ledger() {
		if en.Kind == acquirer.EntryTransfer && en.AmountMinor == amount {
			n++
		}
	}
	return n
}

func TestPayoutLifeCycle(t *testing.T) {
	each(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{work: true})

		t.Run("test cards", func(t *testing.T) {
			for _, tc := range []struct{ number, status, decline string }{
				{"4242424242424242", "succeeded", ""},
				{"4000000000000002", "declined", "card_declined"},
				{"4000000000009995", "declined", "insufficient_funds"},
				{"4000000000000119", "failed", "processing_error"},
			} {
				p := e.createPayout(e.a, payoutBody(tc.number, ""))
				require.Equal(t, tc.number[:6]+"******"+tc.number[12:], p.CardMask)
				require.Equal(t, "card", p.PayoutMethod)
				got := e.settlePayout(e.a, p.PayoutID)
				require.Equal(t, tc.status, got.Status, tc.number)
				require.True(t, got.Final)
				require.Equal(t, tc.decline, got.DeclineCode)
				if tc.decline != "" {
					require.NotEmpty(t, got.ClientDescription)
				} else {
					require.NotNil(t, got.BankReference, "the receiving bank's reference of a transfer")
				}
			}
		})

		t.Run("a wallet", func(t *testing.T) {
			p := e.createPayout(e.a, `{"order_id":"w-`+uuid.NewString()+`","amount_minor":700,"currency":"EUR","account":"main",
				"payout_method":{"type":"apple_pay","wallet":{"token":"sandbox_success"}}}`)
			require.Equal(t, "apple_pay", p.PayoutMethod)
			require.Equal(t, "succeeded", e.settlePayout(e.a, p.PayoutID).Status)
		})

		t.Run("3DS confirmed by code", func(t *testing.T) {
			for code, want := range map[string]string{"123456": "succeeded", "654321": "declined"} {
				p := e.createPayout(e.a, payoutBody("4000000000003220", ""))
				ra := e.settlePayout(e.a, p.PayoutID)
				require.Equal(t, "requires_action", ra.Status)
				require.NotNil(t, ra.NextAction)
				require.Equal(t, "three_ds", ra.NextAction.Type)
				require.True(t, strings.HasPrefix(ra.NextAction.URL, e.acqURL+"/3ds/"), ra.NextAction.URL)

				resp := e.post(e.a, "/api/v1/payouts/"+p.PayoutID+"/confirm", `{"value":"`+code+`"}`)
				require.Equal(t, http.StatusOK, resp.Status, "%s", resp.Body)
				require.NotContains(t, string(resp.Body), code)
				var c openapi.Payout
				require.NoError(t, json.Unmarshal(resp.Body, &c))
				require.Equal(t, "processing", c.Status)
				require.Nil(t, c.NextAction)
				got := e.settlePayout(e.a, p.PayoutID)
				require.Equal(t, want, got.Status, code)
				if want == "declined" {
					require.Equal(t, "authentication_failed", got.DeclineCode)
				}
			}
		})

		t.Run("3DS completed on the payer's page", func(t *testing.T) {
			for outcome, want := range map[string]string{"approve": "succeeded", "deny": "declined"} {
				p := e.createPayout(e.a, payoutBody("4000000000003220", ""))
				ra := e.settlePayout(e.a, p.PayoutID)
				require.Equal(t, "requires_action", ra.Status)
				challenge(t, ra.NextAction.URL, outcome)
				resp := e.post(e.a, "/api/v1/payouts/"+p.PayoutID+"/confirm", "")
				require.Equal(t, http.StatusOK, resp.Status, "%s", resp.Body)
				require.Equal(t, want, e.settlePayout(e.a, p.PayoutID).Status, outcome)
			}
		})

		t.Run("a confirm before the payer finished leaves it waiting", func(t *testing.T) {
			p := e.createPayout(e.a, payoutBody("4000000000003220", ""))
			require.Equal(t, "requires_action", e.settlePayout(e.a, p.PayoutID).Status)
			resp := e.post(e.a, "/api/v1/payouts/"+p.PayoutID+"/confirm", "")
			require.Equal(t, http.StatusOK, resp.Status, "%s", resp.Body)
			got := e.settlePayout(e.a, p.PayoutID)
			require.Equal(t, "requires_action", got.Status)
			require.NotNil(t, got.NextAction)
		})

		t.Run("confirm outside requires_action is 409", func(t *testing.T) {
			done := e.createPayout(e.a, payoutBody("4242424242424242", ""))
			require.Equal(t, "succeeded", e.settlePayout(e.a, done.PayoutID).Status)
			// Confirmed once: the payout is processing (or already final),
			// so a second confirm is refused whichever it finds.
			p := e.createPayout(e.a, payoutBody("4000000000003220", ""))
			require.Equal(t, "requires_action", e.settlePayout(e.a, p.PayoutID).Status)
			require.Equal(t, http.StatusOK, e.post(e.a, "/api/v1/payouts/"+p.PayoutID+"/confirm", `{"value":"123456"}`).Status)
			for _, id := range []string{done.PayoutID, p.PayoutID} {
				resp := e.post(e.a, "/api/v1/payouts/"+id+"/confirm", `{"value":"123456"}`)
				require.Equal(t, http.StatusConflict, resp.Status, "%s", resp.Body)
				require.Equal(t, "invalid_payout_state", decodeError(t, resp.Body).Error.Code)
			}
			require.Equal(t, "succeeded", e.settlePayout(e.a, p.PayoutID).Status)
		})

		t.Run("an unreadable answer passes manual_review and is never re-sent", func(t *testing.T) {
			p := e.createPayout(e.a, strings.Replace(payoutBody("4000000000000259", ""), `"amount_minor":2500`, `"amount_minor":2591`, 1))
			got := e.settlePayout(e.a, p.PayoutID, "processing", "manual_review")
			require.Equal(t, "succeeded", got.Status)
			require.Equal(t, 1, transfersFor(e, 2591), "one transfer in the acquirer's ledger")
		})

		t.Run("events carry the payout as GET shows it", func(t *testing.T) {
			p := e.createPayout(e.a, payoutBody("4000000000003220", ""))
			require.Equal(t, "requires_action", e.settlePayout(e.a, p.PayoutID).Status)
			e.post(e.a, "/api/v1/payouts/"+p.PayoutID+"/confirm", `{"value":"123456"}`)
			final := e.settlePayout(e.a, p.PayoutID)
			require.Equal(t, "succeeded", final.Status)
			page := e.events(e.a, "?resource_id="+p.PayoutID)
			var types []string
			for _, ev := range page.Items {
				types = append(types, ev.Type)
				var obj openapi.Payout
				require.NoError(t, json.Unmarshal(ev.Data.Object, &obj))
				require.Equal(t, p.PayoutID, obj.PayoutID)
				require.Equal(t, strings.TrimPrefix(ev.Type, "payout."), obj.Status)
				if ev.Type == "payout.succeeded" {
					want, err := json.Marshal(final)
					require.NoError(t, err)
					require.JSONEq(t, string(want), string(ev.Data.Object))
				}
			}
			slices.Sort(types)
			require.Equal(t, []string{"payout.processing", "payout.processing", "payout.requires_action", "payout.succeeded"}, types)
		})
	})
}

func TestPayoutRequests(t *testing.T) {
	each(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{work: true})
		ctx := context.Background()
		refuse := func(t *testing.T, c *client.Client, body string, status int, code string) {
			t.Helper()
			resp := e.post(c, "/api/v1/payouts", body)
			require.Equal(t, status, resp.Status, "%s", resp.Body)
			require.Equal(t, code, decodeError(t, resp.Body).Error.Code, "%s", resp.Body)
		}

		// A card saved by a payment of the payer's.
		pay := e.direct(e.a, cardBody("4242424242424242", `,"customer_reference":"payee-1","save_payment_method":true`))
		saved := e.settle(e.a, pay.PaymentID)
		require.Equal(t, "succeeded", saved.Status)
		require.NotEmpty(t, saved.SavedCardID)
		savedBody := func(id string) string {
			return `{"order_id":"s-` + uuid.NewString() + `","amount_minor":1200,"currency":"USD","account":"main",
				"payout_method":{"type":"card","saved_card_id":"` + id + `"}}`
		}

		t.Run("to a saved card", func(t *testing.T) {
			p := e.createPayout(e.a, savedBody(saved.SavedCardID))
			require.Equal(t, saved.MaskedCard, p.CardMask)
			require.Equal(t, "succeeded", e.settlePayout(e.a, p.PayoutID).Status)
		})

		t.Run("an unknown or foreign saved card is 422", func(t *testing.T) {
			refuse(t, e.b, savedBody(saved.SavedCardID), http.StatusUnprocessableEntity, "saved_card_not_found")
			refuse(t, e.a, savedBody(uuid.NewString()), http.StatusUnprocessableEntity, "saved_card_not_found")
		})

		t.Run("a card and a saved card are exclusive", func(t *testing.T) {
			body := payoutBody("4242424242424242", "")
			body = strings.Replace(body, `"type":"card",`, `"type":"card","saved_card_id":"`+saved.SavedCardID+`",`, 1)
			refuse(t, e.a, body, http.StatusBadRequest, "card_and_saved_card_are_exclusive")
		})

		t.Run("the method must match its type", func(t *testing.T) {
			refuse(t, e.a, `{"order_id":"m-1","amount_minor":1,"currency":"USD","account":"main","payout_method":{"type":"card"}}`,
				http.StatusBadRequest, "validation_error")
			refuse(t, e.a, `{"order_id":"m-2","amount_minor":1,"currency":"USD","account":"main","payout_method":{"type":"google_pay"}}`,
				http.StatusBadRequest, "validation_error")
			refuse(t, e.a, strings.Replace(payoutBody("4242424242424242", ""), `"type":"card"`, `"type":"apple_pay"`, 1),
				http.StatusBadRequest, "validation_error")
			refuse(t, e.a, strings.Replace(payoutBody("4242424242424242", ""), `"number":"4242424242424242"`, `"number":"4242424242424241"`, 1),
				http.StatusBadRequest, "validation_error")
		})

		t.Run("the Visa customer rules apply", func(t *testing.T) {
			body := strings.Replace(payoutBody("4242424242424242", ""), visaCustomer+",", "", 1)
			refuse(t, e.a, body, http.StatusBadRequest, "validation_error")
		})

		t.Run("raw card data needs the key's permission", func(t *testing.T) {
			k, err := e.merchants.Create(ctx, merchant.NewKey{Name: "hosted-only"})
			require.NoError(t, err)
			c := client.New(e.url, k.Key.AccessKey, k.Secret)
			c.Now, c.Retries = e.clock.Now, 0
			refuse(t, c, payoutBody("4242424242424242", ""), http.StatusForbidden, "direct_card_data_not_allowed")
		})

		t.Run("a payout is no payment, and another key's is 404", func(t *testing.T) {
			p := e.createPayout(e.a, payoutBody("4242424242424242", ""))
			e.settlePayout(e.a, p.PayoutID)
			for _, target := range []string{"/api/v1/payments/" + p.PayoutID, "/api/v1/payments/" + p.PayoutID + "/refunds"} {
				resp, err := e.a.Do(ctx, client.Request{Method: "GET", Target: target})
				require.NoError(t, err)
				require.Equal(t, http.StatusNotFound, resp.Status, target)
			}
			for _, op := range []string{"confirm", "capture", "cancel"} {
				require.Equal(t, http.StatusNotFound, e.post(e.a, "/api/v1/payments/"+p.PayoutID+"/"+op, "").Status, op)
			}
			var list struct{ Items []openapi.Payment }
			require.NoError(t, e.a.JSON(ctx, "GET", "/api/v1/payments?limit=100", nil, &list))
			for _, it := range list.Items {
				require.NotEqual(t, p.PayoutID, it.PaymentID)
			}
			resp, err := e.b.Do(ctx, client.Request{Method: "GET", Target: "/api/v1/payouts/" + p.PayoutID})
			require.NoError(t, err)
			require.Equal(t, http.StatusNotFound, resp.Status)
			require.Equal(t, http.StatusNotFound, e.post(e.b, "/api/v1/payouts/"+p.PayoutID+"/confirm", `{"value":"123456"}`).Status)
			// A payment's id is no payout's.
			resp, err = e.a.Do(ctx, client.Request{Method: "GET", Target: "/api/v1/payouts/" + pay.PaymentID})
			require.NoError(t, err)
			require.Equal(t, http.StatusNotFound, resp.Status)
		})

		t.Run("no card number or code in answers or events", func(t *testing.T) {
			p := e.createPayout(e.a, payoutBody("4000000000003220", ""))
			require.Equal(t, "requires_action", e.settlePayout(e.a, p.PayoutID).Status)
			resp := e.post(e.a, "/api/v1/payouts/"+p.PayoutID+"/confirm", `{"value":"987654"}`)
			require.Equal(t, http.StatusOK, resp.Status)
			got := e.settlePayout(e.a, p.PayoutID)
			require.Equal(t, "declined", got.Status)
			all, err := json.Marshal([]any{got, e.events(e.a, "?resource_id="+p.PayoutID), resp.Body})
			require.NoError(t, err)
			for _, secret := range []string{"4000000000003220", "987654"} {
				require.NotContains(t, string(all), secret)
				require.NotContains(t, string(resp.Body), secret)
			}
		})
	})
}

// TestPayoutDuplicateOrderIDRace: concurrent payouts with one order_id,
// through two API processes, end in exactly one 201; the others are 409
// duplicate_order_id (the unique index decides, on both databases).
func TestPayoutDuplicateOrderIDRace(t *testing.T) {
	each(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{})
		cs := e.clients("payout-race", "", e.url, e.apiProcess())
		body := `{"order_id":"race-1","amount_minor":100,"currency":"USD","account":"main",
			"payout_method":{"type":"google_pay","wallet":{"token":"sandbox_success"}}}`
		rs := race(t, cs, posts(8, "/api/v1/payouts", body))
		n := map[string]int{}
		for _, r := range rs {
			key := fmt.Sprint(r.Status)
			if r.Status != http.StatusCreated {
				key += " " + decodeError(t, r.Body).Error.Code
			}
			n[key]++
		}
		require.Equal(t, map[string]int{"201": 1, "409 duplicate_order_id": 7}, n)
	})
}

// TestPayoutActionExpiry: a payout left in requires_action for 30 minutes
// (the test clock) is asked about once more: still waiting, it ends failed
// with authentication_expired; approved on the page meanwhile, it ends
// succeeded (docs/design/decisions.md section 15).
func TestPayoutActionExpiry(t *testing.T) {
	each(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{work: true})
		waiting := e.createPayout(e.a, payoutBody("4000000000003220", ""))
		approved := e.createPayout(e.a, payoutBody("4000000000003220", ""))
		for _, id := range []string{waiting.PayoutID, approved.PayoutID} {
			require.Equal(t, "requires_action", e.settlePayout(e.a, id).Status)
		}
		challenge(t, e.getPayout(e.a, approved.PayoutID).NextAction.URL, "approve")

		e.clock.Add(29 * time.Minute)
		require.Equal(t, "requires_action", e.getPayout(e.a, waiting.PayoutID).Status, "not before 30 minutes")
		e.clock.Add(time.Minute)

		got := e.settlePayout(e.a, waiting.PayoutID, "requires_action")
		require.Equal(t, "failed", got.Status)
		require.Equal(t, "authentication_expired", got.DeclineCode)
		require.Nil(t, got.NextAction)
		require.Equal(t, "succeeded", e.settlePayout(e.a, approved.PayoutID, "requires_action").Status)

		resp := e.post(e.a, "/api/v1/payouts/"+waiting.PayoutID+"/confirm", `{"value":"123456"}`)
		require.Equal(t, http.StatusConflict, resp.Status)
	})
}
