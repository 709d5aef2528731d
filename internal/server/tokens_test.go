package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/client"
	"github.com/paygate/paygate/internal/openapi"
	"github.com/paygate/paygate/internal/provider/sandbox"
	"github.com/paygate/paygate/internal/savedcard"
	"github.com/paygate/paygate/internal/store/storetest"
)

// savedCard stores a saved card of the key for customerRef as a payment's
// outcome does (sealed token, mask, scheme, expiry), for tests that need
// one without running a payment.
func savedCard(t testing.TB, e *env, keyID, customerRef string) *savedcard.Card {
	t.Helper()
	id := uuid.NewString()
	c, err := savedcard.New(e.cfg.Keyring, savedcard.Card{ID: id, AccessKeyID: keyID, CustomerReference: customerRef,
		Provider: sandbox.Name, MaskedCard: "424242******4242", Scheme: "visa", ExpMonth: 12,
		ExpYear: e.clock.Now().Year() + 2, CreatedAt: e.clock.Now()}, "tok_"+id)
	require.NoError(t, err)
	require.NoError(t, e.store.CreateSavedCard(context.Background(), c))
	return c
}

// tokens GETs a page of the key's saved cards and answers it with the raw
// body.
func tokens(t *testing.T, c *client.Client, query string) (openapi.PaymentMethodTokenList, string) {
	t.Helper()
	resp, err := c.Do(context.Background(), client.Request{Method: "GET", Target: "/cabinet/v1/payment-method-tokens" + query})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.Status, "%s", resp.Body)
	var page openapi.PaymentMethodTokenList
	require.NoError(t, json.Unmarshal(resp.Body, &page))
	return page, string(resp.Body)
}

func deleteToken(t *testing.T, c *client.Client, id string) *client.Response {
	t.Helper()
	resp, err := c.Do(context.Background(), client.Request{Method: "DELETE", Target: "/cabinet/v1/payment-method-tokens/" + id})
	require.NoError(t, err)
	return resp
}

func tokenIDs(items []openapi.PaymentMethodToken) []string {
	out := []string{}
	for _, it := range items {
		out = append(out, it.ID)
	}
	return out
}

// TestPaymentMethodTokens drives the cabinet's stored cards
// (docs/design/decisions.md section 13) through the HTTP API on both
// databases: cards saved by real payments are listed newest first, with
// and without a payer, a page at a time, never with a card number; another
// key sees none of them and cannot delete them; a deleted card is 404 the
// second time, no longer listed nor offered by the hosted page, and a
// checkout that names it answers 422 saved_card_not_found.
func TestPaymentMethodTokens(t *testing.T) {
	each(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{work: true})
		ctx := context.Background()
		save := func(c *client.Client, number, customerRef string) (paymentID, cardID string) {
			p := e.direct(c, cardBody(number, `,"customer_reference":"`+customerRef+`","save_payment_method":true`))
			got := e.settle(c, p.PaymentID)
			require.Equal(t, "succeeded", got.Status)
			require.NotEmpty(t, got.SavedCardID)
			return p.PaymentID, got.SavedCardID
		}
		firstPayment, first := save(e.a, "4242424242424242", "cust-1")
		_, second := save(e.a, "5555555555554444", "cust-2")
		_, third := save(e.a, "4242424242424242", "cust-1")
		_, theirs := save(e.b, "4242424242424242", "cust-1")

		t.Run("the key's cards, newest first, never a number", func(t *testing.T) {
			page, raw := tokens(t, e.a, "")
			require.Equal(t, []string{third, second, first}, tokenIDs(page.Items))
			require.Nil(t, page.NextCursor)
			for _, number := range []string{"4242424242424242", "5555555555554444"} {
				require.NotContains(t, raw, number)
			}
			require.NotContains(t, raw, "tok_")
			var wire struct {
				Items []map[string]json.RawMessage `json:"items"`
			}
			require.NoError(t, json.Unmarshal([]byte(raw), &wire))
			for _, f := range wire.Items {
				var names []string
				for k := range f {
					names = append(names, k)
				}
				sort.Strings(names)
				require.Equal(t, []string{"created_at", "customer_reference", "expire_month", "expire_year", "id", "masked_card", "scheme"}, names)
			}
			it := page.Items[2]
			require.Equal(t, "cust-1", it.CustomerReference)
			require.Equal(t, "424242******4242", it.MaskedCard)
			require.Equal(t, "visa", it.Scheme)
			require.Equal(t, 12, it.ExpireMonth)
			require.Equal(t, e.clock.Now().Year()+2, it.ExpireYear)
			require.Equal(t, "555555******4444", page.Items[1].MaskedCard)
		})

		t.Run("one payer's cards", func(t *testing.T) {
			page, _ := tokens(t, e.a, "?customer_reference=cust-1")
			require.Equal(t, []string{third, first}, tokenIDs(page.Items))
			page, _ = tokens(t, e.a, "?customer_reference=nobody")
			require.Empty(t, page.Items)
			require.NotNil(t, page.Items, "items is never null")
		})

		t.Run("pages", func(t *testing.T) {
			var seen []string
			cursor := ""
			for pages := 0; ; pages++ {
				require.Less(t, pages, 4)
				q := "?limit=1"
				if cursor != "" {
					q += "&cursor=" + url.QueryEscape(cursor)
				}
				page, _ := tokens(t, e.a, q)
				require.LessOrEqual(t, len(page.Items), 1)
				seen = append(seen, tokenIDs(page.Items)...)
				if page.NextCursor == nil {
					break
				}
				cursor = *page.NextCursor
			}
			require.Equal(t, []string{third, second, first}, seen, "newest first, each once")
			page, _ := tokens(t, e.a, "?customer_reference=cust-1&limit=1")
			require.Equal(t, []string{third}, tokenIDs(page.Items))
			require.NotNil(t, page.NextCursor)
			page, _ = tokens(t, e.a, "?customer_reference=cust-1&limit=1&cursor="+url.QueryEscape(*page.NextCursor))
			require.Equal(t, []string{first}, tokenIDs(page.Items))
			require.Nil(t, page.NextCursor)
		})

		t.Run("a bad query is 400", func(t *testing.T) {
			for _, tc := range []struct{ query, code, field string }{
				{"?status=succeeded", "unknown_field", "status"},
				{"?limit=0", "validation_error", "limit"},
				{"?limit=101", "validation_error", "limit"},
				{"?cursor=not-a-cursor", "validation_error", "cursor"},
				{"?customer_reference=", "validation_error", "customer_reference"},
				{"?customer_reference=" + strings.Repeat("r", 129), "validation_error", "customer_reference"},
				{"?limit=1&limit=2", "validation_error", "limit"},
			} {
				resp, err := e.a.Do(ctx, client.Request{Method: "GET", Target: "/cabinet/v1/payment-method-tokens" + tc.query})
				require.NoError(t, err)
				require.Equal(t, http.StatusBadRequest, resp.Status, tc.query)
				env := decodeError(t, resp.Body)
				require.Equal(t, tc.code, env.Error.Code, tc.query)
				require.Equal(t, tc.field, *env.Error.Field, tc.query)
			}
		})

		t.Run("unsigned is 401", func(t *testing.T) {
			for _, method := range []string{"GET", "DELETE"} {
				target := e.url + "/cabinet/v1/payment-method-tokens"
				if method == "DELETE" {
					target += "/" + first
				}
				req, err := http.NewRequest(method, target, nil)
				require.NoError(t, err)
				resp, err := http.DefaultClient.Do(req)
				require.NoError(t, err)
				resp.Body.Close()
				require.Equal(t, http.StatusUnauthorized, resp.StatusCode, method)
			}
		})

		t.Run("another key's cards are invisible and 404", func(t *testing.T) {
			page, _ := tokens(t, e.b, "")
			require.Equal(t, []string{theirs}, tokenIDs(page.Items))
			resp := deleteToken(t, e.b, first)
			require.Equal(t, http.StatusNotFound, resp.Status)
			require.Equal(t, "not_found", decodeError(t, resp.Body).Error.Code)
			resp = deleteToken(t, e.a, theirs)
			require.Equal(t, http.StatusNotFound, resp.Status)
			page, _ = tokens(t, e.a, "?customer_reference=cust-1")
			require.Equal(t, []string{third, first}, tokenIDs(page.Items), "nothing was deleted")
			require.Equal(t, http.StatusNotFound, deleteToken(t, e.a, uuid.NewString()).Status)
			require.Equal(t, http.StatusNotFound, deleteToken(t, e.a, "not-a-uuid").Status)
		})

		t.Run("a deleted card can no longer be used", func(t *testing.T) {
			// Before: the hosted page offers both of cust-1's cards.
			s := e.session(t, `,"customer_reference":"cust-1"`)
			pr := newPayer(t, e)
			pg := pr.get(e.url + "/checkout/" + s.SessionID)
			require.Contains(t, pg.body, `name="saved_card_id" value="`+first+`"`)

			resp := deleteToken(t, e.a, first)
			require.Equal(t, http.StatusNoContent, resp.Status, "%s", resp.Body)
			require.Empty(t, resp.Body)
			resp = deleteToken(t, e.a, first)
			require.Equal(t, http.StatusNotFound, resp.Status, "deleted twice")
			require.Equal(t, "not_found", decodeError(t, resp.Body).Error.Code)

			page, _ := tokens(t, e.a, "")
			require.Equal(t, []string{third, second}, tokenIDs(page.Items))

			// The page opened before the deletion: choosing the card now is refused.
			r := pr.submit(pg, url.Values{"method": {"card"}, "saved_card_id": {first}})
			require.Equal(t, http.StatusUnprocessableEntity, r.status)
			require.Equal(t, "awaiting_payment_data", e.payment(t, s.PaymentID).Status, "nothing was charged")

			// A new page offers the other card only.
			s2 := e.session(t, `,"customer_reference":"cust-1"`)
			pg2 := newPayer(t, e).get(e.url + "/checkout/" + s2.SessionID)
			require.NotContains(t, pg2.body, first)
			require.Contains(t, pg2.body, `name="saved_card_id" value="`+third+`"`)

			// The payment that saved it keeps naming it.
			require.Equal(t, first, e.payment(t, firstPayment).SavedCardID)
		})

		t.Run("concurrent deletions: one succeeds", func(t *testing.T) {
			var (
				wg       sync.WaitGroup
				mu       sync.Mutex
				statuses = map[int]int{}
			)
			for range 20 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					resp, err := e.a.Do(ctx, client.Request{Method: "DELETE", Target: "/cabinet/v1/payment-method-tokens/" + second})
					mu.Lock()
					defer mu.Unlock()
					if err != nil {
						t.Error(err)
						return
					}
					statuses[resp.Status]++
				}()
			}
			wg.Wait()
			require.Equal(t, map[int]int{http.StatusNoContent: 1, http.StatusNotFound: 19}, statuses)
		})
	})
}
