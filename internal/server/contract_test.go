package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/client"
	"github.com/paygate/paygate/internal/openapi"
	"github.com/paygate/paygate/internal/store"
	"github.com/paygate/paygate/internal/store/storetest"
)

// TestEventObjectIsGET drives payments to every status the engine and the
// API produce and checks each payment's newest event carries the payment
// exactly as GET shows it (docs/design/decisions.md section 6: data.object
// is the resource as GET returns it; the payment.succeeded of a payment that
// saved a card once lacked saved_card_id), and that every event's object is
// in the status its type names.
func TestEventObjectIsGET(t *testing.T) {
	each(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{work: true})
		ctx := context.Background()
		refunder := e.clients("event-refunds", "sandbox-refunds", e.url)[0]

		type flow struct {
			c    *client.Client
			id   string
			want string
		}
		var flows []flow
		direct := func(c *client.Client, number, extra, want string, passing ...string) string {
			p := e.direct(c, cardBody(number, extra))
			got := e.settle(c, p.PaymentID, passing...)
			require.Equal(t, want, got.Status, number)
			flows = append(flows, flow{c, p.PaymentID, want})
			return p.PaymentID
		}

		direct(e.a, "4242424242424242", `,"save_payment_method":true,"customer_reference":"cust-7"`, "succeeded")
		direct(e.a, "4000000000000002", "", "declined")
		direct(e.a, "4000000000000119", "", "failed")
		direct(e.a, "4000000000003220", "", "requires_action")
		direct(e.a, "4242424242424242", `,"operation_mode":"authorize"`, "authorized")

		id := direct(e.a, "4242424242424242", `,"operation_mode":"authorize"`, "authorized")
		require.Equal(t, http.StatusOK, e.post(e.a, "/api/v1/payments/"+id+"/capture", `{"amount_minor":600}`).Status)
		require.Equal(t, "succeeded", e.settle(e.a, id, "authorized").Status)
		flows[len(flows)-1].want = "succeeded"

		id = direct(e.a, "4242424242424242", `,"operation_mode":"authorize"`, "authorized")
		require.Equal(t, http.StatusOK, e.post(e.a, "/api/v1/payments/"+id+"/cancel", ``).Status)
		require.Equal(t, "canceled", e.settle(e.a, id, "authorized").Status)
		flows[len(flows)-1].want = "canceled"

		id = direct(refunder, "4242424242424242", "", "succeeded")
		require.Equal(t, http.StatusOK, e.post(refunder, "/api/v1/payments/"+id+"/refunds", `{"amount_minor":300}`).Status)
		require.Equal(t, "partially_refunded", e.settle(refunder, id, "succeeded").Status)
		flows[len(flows)-1].want = "partially_refunded"
		id = direct(refunder, "4242424242424242", "", "succeeded")
		require.Equal(t, http.StatusOK, e.post(refunder, "/api/v1/payments/"+id+"/refunds", ``).Status)
		require.Equal(t, "refunded", e.settle(refunder, id, "succeeded").Status)
		flows[len(flows)-1].want = "refunded"

		var s openapi.Payment
		require.NoError(t, e.a.JSON(ctx, "POST", "/api/v1/payment-sessions",
			json.RawMessage(`{"order_id":"s-1","amount_minor":500,"currency":"USD"}`), &s))
		require.Equal(t, http.StatusOK, e.post(e.a, "/api/v1/payments/"+s.PaymentID+"/cancel", ``).Status)
		flows = append(flows, flow{e.a, s.PaymentID, "canceled"})

		// Statuses that pass: the answer of the call that made the change
		// is the payment as GET showed it at that moment.
		atOnce := func(c *client.Client, id, typ string, answer []byte) {
			t.Helper()
			for _, ev := range e.events(c, "?resource_id="+id).Items {
				if ev.Type == typ {
					require.JSONEq(t, string(answer), string(ev.Data.Object), "%s is the answer of the call that made it", typ)
					return
				}
			}
			t.Fatalf("no %s event for %s", typ, id)
		}
		resp := e.post(e.a, "/api/v1/payments/direct", cardBody("4242424242424242", ""))
		require.Equal(t, http.StatusCreated, resp.Status)
		var created openapi.Payment
		require.NoError(t, json.Unmarshal(resp.Body, &created))
		atOnce(e.a, created.PaymentID, "payment.processing", resp.Body)
		resp = e.post(e.a, "/api/v1/payment-sessions", `{"order_id":"s-0","amount_minor":500,"currency":"USD","expires_in_seconds":300}`)
		require.Equal(t, http.StatusCreated, resp.Status)
		require.NoError(t, json.Unmarshal(resp.Body, &created))
		atOnce(e.a, created.PaymentID, "payment.created", resp.Body)

		// Opened by the payer, and another one left to expire (the expiry
		// job's step, run here at the deadline if the job has not yet).
		newPayer(t, e).get(e.url + "/checkout/" + created.SessionID)
		flows = append(flows, flow{e.a, created.PaymentID, "awaiting_payment_data"})
		expiring := e.session(t, `,"expires_in_seconds":300`)
		newPayer(t, e).get(e.url + "/checkout/" + expiring.SessionID)

		for _, f := range flows {
			checkNewest(t, e, f.c, f.id, f.want)
		}
		e.clock.Add(301 * time.Second)
		require.NoError(t, e.store.InTx(ctx, func(tx *store.Tx) error {
			_, err := e.app.Payments.ExpireSession(ctx, tx, expiring.PaymentID, e.clock.Now()) // unless its job was first
			return err
		}))
		checkNewest(t, e, e.a, expiring.PaymentID, "expired")
		var saved openapi.Payment
		require.NoError(t, e.a.JSON(ctx, "GET", "/api/v1/payments/"+flows[0].id, nil, &saved))
		require.NotEmpty(t, saved.SavedCardID, "the first flow saved a card")
	})
}

// checkNewest asserts the payment's newest event is of type payment.want and
// carries the payment as GET shows it now, and that every event's object is
// in the status its type names.
func checkNewest(t *testing.T, e *env, c *client.Client, id, want string) {
	t.Helper()
	var got json.RawMessage
	require.NoError(t, c.JSON(context.Background(), "GET", "/api/v1/payments/"+id, nil, &got))
	page := e.events(c, "?resource_id="+id)
	require.NotEmpty(t, page.Items, want)
	newest := page.Items[0]
	for _, ev := range page.Items {
		var obj struct{ Status string }
		require.NoError(t, json.Unmarshal(ev.Data.Object, &obj))
		require.Equal(t, ev.Type, "payment."+obj.Status, "an event's object is in the status its type names")
		if time.Time(ev.CreatedAt).After(time.Time(newest.CreatedAt)) {
			newest = ev
		}
	}
	require.Equal(t, "payment."+want, newest.Type)
	require.JSONEq(t, string(got), string(newest.Data.Object), "the newest %s event is the payment as GET shows it", want)
}

// TestConfirmAnswerHasNoStaleAction: a confirmed payment answers
// processing without the next_action of the step it left (docs/payments.md,
// "Next actions": only a requires_action payment carries next_action).
func TestConfirmAnswerHasNoStaleAction(t *testing.T) {
	each(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{work: true})
		p := e.direct(e.a, cardBody("4000000000003220", ""))
		got := e.settle(e.a, p.PaymentID)
		require.Equal(t, "requires_action", got.Status)
		require.NotNil(t, got.NextAction)
		resp := e.post(e.a, "/api/v1/payments/"+p.PaymentID+"/confirm", ``)
		require.Equal(t, http.StatusOK, resp.Status, string(resp.Body))
		var ans openapi.Payment
		require.NoError(t, json.Unmarshal(resp.Body, &ans))
		require.Equal(t, "processing", ans.Status)
		require.Nil(t, ans.NextAction, "processing carries no next_action")
	})
}

// TestReturnURLAndExpiryYear: return_url must be an absolute https URL
// (http in the sandbox) on both payment kinds, refused at creation with
// nothing stored; a two-digit expire_year means 20YY, as on the hosted
// page and at the acquirer (docs/api.md, "What the document promises
// generated clients").
func TestReturnURLAndExpiryYear(t *testing.T) {
	each(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{work: true})
		ctx := context.Background()
		bad := []string{"javascript:alert(1)", "data:text/html,x", "vbscript:x", "ftp://shop.example/r",
			"https:evil.example", "http://", "https://", "/return", "//evil.example/r", "https://u:p@shop.example/"}
		for _, u := range bad {
			for _, target := range []string{"/api/v1/payment-sessions", "/api/v1/payments/direct"} {
				body := fmt.Sprintf(`{"order_id":"r","amount_minor":100,"currency":"USD","return_url":%q}`, u)
				if strings.HasSuffix(target, "direct") {
					body = cardBody("4242424242424242", fmt.Sprintf(`,"return_url":%q`, u))
				}
				resp := e.post(e.a, target, body)
				require.Equal(t, http.StatusBadRequest, resp.Status, "%s %s", target, u)
				env := decodeError(t, resp.Body)
				require.Equal(t, "validation_error", env.Error.Code, u)
				require.Equal(t, "return_url", *env.Error.Field, u)
				require.NotContains(t, string(resp.Body), u, "the message does not quote it")
			}
		}
		var list openapi.PaymentList
		require.NoError(t, e.a.JSON(ctx, "GET", "/api/v1/payments", nil, &list))
		require.Empty(t, list.Items, "nothing was created")

		for _, u := range []string{"https://shop.example/return?x=1", "http://localhost:3000/return"} {
			resp := e.post(e.a, "/api/v1/payment-sessions", fmt.Sprintf(`{"order_id":"ok","amount_minor":100,"currency":"USD","return_url":%q}`, u))
			require.Equal(t, http.StatusCreated, resp.Status, u)
		}

		yy := (time.Now().Year() + 2) % 100
		body := strings.Replace(cardBody("4242424242424242", ""), fmt.Sprintf(`"expire_year":%d`, time.Now().Year()+2),
			fmt.Sprintf(`"expire_year":%d`, yy), 1)
		require.Contains(t, body, fmt.Sprintf(`"expire_year":%d,`, yy))
		p := e.direct(e.a, body)
		require.Equal(t, "succeeded", e.settle(e.a, p.PaymentID).Status)
		resp := e.post(e.a, "/api/v1/payments/direct", strings.Replace(body, fmt.Sprintf(`"expire_year":%d`, yy), `"expire_year":150`, 1))
		require.Equal(t, http.StatusBadRequest, resp.Status)
		require.Equal(t, "payment_method.card.expire_year", *decodeError(t, resp.Body).Error.Field)
	})
}

// TestReplayedRefusalRequestIDs: a replayed refusal is the stored body byte
// for byte, so its error.request_id names the first request, while
// X-Request-Id names the request just sent (docs/api.md, "Two request ids
// on a replay").
func TestReplayedRefusalRequestIDs(t *testing.T) {
	each(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{})
		s := e.session(t, "")
		req := client.Request{Method: "POST", Target: "/api/v1/payments/" + s.PaymentID + "/capture", IdempotencyKey: "replay-request-ids"}
		first, err := e.a.Do(context.Background(), req)
		require.NoError(t, err)
		require.Equal(t, http.StatusConflict, first.Status)
		second, err := e.a.Do(context.Background(), req)
		require.NoError(t, err)
		require.True(t, second.Replayed())
		require.Equal(t, first.Body, second.Body, "byte for byte")
		id := decodeError(t, second.Body).Error.RequestID
		require.Equal(t, first.Header.Get("X-Request-Id"), id, "the body names the first request")
		require.NotEqual(t, id, second.Header.Get("X-Request-Id"), "the header names this one")
	})
}
