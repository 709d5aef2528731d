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

	"github.com/paygate/paygate/internal/allowance"
	"github.com/paygate/paygate/internal/client"
	"github.com/paygate/paygate/internal/openapi"
	"github.com/paygate/paygate/internal/store/storetest"
)

// setAllowance gives the key of c a collection or payout allowance in USD.
func (e *env) setAllowance(c *client.Client, kind allowance.Kind, perTx, daily *int64) string {
	e.t.Helper()
	k, err := e.store.FindKeyByAccessKey(context.Background(), c.AccessKey)
	require.NoError(e.t, err)
	require.NoError(e.t, e.store.PutAllowance(context.Background(), allowance.Setting{KeyID: k.ID, Allowance: kind,
		Currency: "USD", PerTransactionMinor: perTx, DailyMinor: daily, UpdatedAt: e.clock.Now()}))
	return k.ID
}

func (e *env) limits(c *client.Client) openapi.LimitList {
	e.t.Helper()
	var out openapi.LimitList
	require.NoError(e.t, c.JSON(context.Background(), "GET", "/api/v1/limits", nil, &out))
	return out
}

func minor(v int64) *int64 { return &v }

// countAnswers counts the answers by status, and 4xx by code.
func countAnswers(t *testing.T, rs []*client.Response) map[string]int {
	t.Helper()
	n := map[string]int{}
	for _, r := range rs {
		key := fmt.Sprint(r.Status)
		if r.Status >= 400 {
			key += " " + decodeError(t, r.Body).Error.Code
		}
		n[key]++
	}
	return n
}

// TestCollectionAllowanceUnderConcurrency fires 200 direct payments at once
// against a daily collection allowance that admits 50, on both databases
// and, on PostgreSQL, through two API processes: exactly 50 are accepted,
// the others answer 422 limit_exceeded with the figures, and the day's sum
// never passes the limit (docs/design/decisions.md section 12).
func TestCollectionAllowanceUnderConcurrency(t *testing.T) {
	const n, fits = 200, 50
	each(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{})
		urls := []string{e.url}
		if db.Name == "postgres" {
			urls = append(urls, e.apiProcess())
		}
		cs := e.clients("allowance-race", "", urls...)
		keyID := e.setAllowance(cs[0], allowance.Collection, nil, minor(fits*1000))

		rs := race(t, cs, posts(n, "/api/v1/payments/direct", cardBody("4242424242424242", "")))
		require.Equal(t, map[string]int{"201": fits, "422 limit_exceeded": n - fits}, countAnswers(t, rs))
		for _, r := range rs {
			if r.Status != http.StatusUnprocessableEntity {
				continue
			}
			d := decodeError(t, r.Body).Error.Details
			require.Equal(t, "collection", d["allowance"])
			require.Equal(t, "USD", d["currency"])
			require.Equal(t, "daily", d["setting"])
			require.EqualValues(t, fits*1000, d["limit_minor"])
			require.EqualValues(t, fits*1000, d["used_minor"].(float64)+d["reserved_minor"].(float64), "the sum never over")
			require.EqualValues(t, 0, d["remaining_minor"])
			require.Equal(t, allowance.ResetsAt(e.clock.Now()).Format(time.RFC3339), d["resets_at"])
		}
		var payments int
		require.NoError(t, e.store.DB().QueryRow(`SELECT count(*) FROM payments WHERE access_key_id = $1`, keyID).Scan(&payments))
		require.Equal(t, fits, payments, "a refused request creates nothing")

		l := e.limits(cs[0])
		require.Len(t, l.Items, 1)
		require.Equal(t, int64(fits*1000), l.Items[0].ReservedMinor+l.Items[0].UsedMinor)
		require.Equal(t, int64(0), *l.Items[0].RemainingMinor)
	})
}

// TestCollectionAllowanceLifeCycle: a declined payment releases its
// reservation, so the next one fits again; a succeeded one consumes it; the
// per-transaction limit refuses alone; the payout allowance and another
// key are untouched; GET /limits shows the figures.
func TestCollectionAllowanceLifeCycle(t *testing.T) {
	each(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{work: true})
		c := e.clients("allowance-life", "", e.url)[0]
		e.setAllowance(c, allowance.Collection, minor(1500), minor(1000))
		e.setAllowance(c, allowance.Payout, nil, minor(7000))

		// A payment waiting for its payer's 3DS step holds its reservation
		// for as long as it takes (the workers answer in milliseconds: a
		// card that declines at once would be settled before the next
		// request).
		declined := e.settle(c, e.direct(c, cardBody("4000000000003220", "")).PaymentID)
		require.Equal(t, "requires_action", declined.Status)
		over := e.post(c, "/api/v1/payments/direct", cardBody("4242424242424242", ""))
		require.Equal(t, http.StatusUnprocessableEntity, over.Status, string(over.Body))
		d := decodeError(t, over.Body).Error.Details
		require.EqualValues(t, 1000, d["reserved_minor"])
		require.EqualValues(t, 0, d["remaining_minor"])

		challenge(t, declined.NextAction.URL, "deny")
		require.Equal(t, "declined", e.settle(c, declined.PaymentID, "requires_action").Status)
		ok := e.direct(c, cardBody("4242424242424242", ""))
		require.Equal(t, "succeeded", e.settle(c, ok.PaymentID).Status)

		// 1000 used: full for the day; and 2000 is over the per-transaction
		// limit, which is checked first.
		big := e.post(c, "/api/v1/payments/direct", strings.Replace(cardBody("4242424242424242", ""),
			`"amount_minor":1000`, `"amount_minor":2000`, 1))
		require.Equal(t, http.StatusUnprocessableEntity, big.Status, string(big.Body))
		d = decodeError(t, big.Body).Error.Details
		require.Equal(t, "per_transaction", d["setting"])
		require.EqualValues(t, 1500, d["limit_minor"])

		l := e.limits(c)
		require.Len(t, l.Items, 2)
		col, pay := l.Items[0], l.Items[1]
		require.Equal(t, "collection", col.Allowance)
		require.Equal(t, openapi.Limit{Allowance: "collection", Currency: "USD", PerTransactionMinor: minor(1500),
			DailyMinor: minor(1000), UsedMinor: 1000, ReservedMinor: 0, RemainingMinor: minor(0),
			ResetsAt: openapi.Time(allowance.ResetsAt(e.clock.Now()))}, col)
		require.Equal(t, openapi.Limit{Allowance: "payout", Currency: "USD", DailyMinor: minor(7000),
			RemainingMinor: minor(7000), ResetsAt: openapi.Time(allowance.ResetsAt(e.clock.Now()))}, pay,
			"payments leave the payout allowance alone")

		// Another key has no allowance: nothing listed, nothing refused.
		require.Empty(t, e.limits(e.b).Items)
		var raw map[string]any
		resp, err := e.b.Do(context.Background(), client.Request{Method: "GET", Target: "/api/v1/limits"})
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(resp.Body, &raw))
		require.Equal(t, []any{}, raw["items"])
	})
}
