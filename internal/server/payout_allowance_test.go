package server_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/allowance"
	"github.com/paygate/paygate/internal/store/storetest"
)

// TestPayoutAllowanceUnderConcurrency fires 200 payouts at once against a
// daily payout allowance that admits 50, on both databases and, on
// PostgreSQL, through two API processes: exactly 50 are accepted, the
// others answer 422 limit_exceeded, the day's sum never passes the limit,
// and the collection allowance is untouched (docs/design/decisions.md
// section 12; docs/limits.md).
func TestPayoutAllowanceUnderConcurrency(t *testing.T) {
	const n, fits, amount = 200, 50, 2500
	each(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{})
		urls := []string{e.url}
		if db.Name == "postgres" {
			urls = append(urls, e.apiProcess())
		}
		cs := e.clients("payout-allowance-race", "", urls...)
		keyID := e.setAllowance(cs[0], allowance.Payout, nil, minor(fits*amount))
		e.setAllowance(cs[0], allowance.Collection, nil, minor(1_000_000))

		reqs := make([]post, n)
		for i := range reqs {
			reqs[i] = post{"/api/v1/payouts", payoutBody("4242424242424242", "")}
		}
		rs := race(t, cs, reqs)
		require.Equal(t, map[string]int{"201": fits, "422 limit_exceeded": n - fits}, countAnswers(t, rs))
		for _, r := range rs {
			if r.Status != http.StatusUnprocessableEntity {
				continue
			}
			d := decodeError(t, r.Body).Error.Details
			require.Equal(t, "payout", d["allowance"])
			require.EqualValues(t, fits*amount, d["used_minor"].(float64)+d["reserved_minor"].(float64), "the sum never over")
		}
		var payouts int
		require.NoError(t, e.store.DB().QueryRow(`SELECT count(*) FROM payouts WHERE access_key_id = $1`, keyID).Scan(&payouts))
		require.Equal(t, fits, payouts, "a refused request creates nothing")
		for _, l := range e.limits(cs[0]).Items {
			if l.Allowance == "collection" {
				require.Zero(t, l.ReservedMinor+l.UsedMinor, "the collection allowance is untouched")
			}
		}
	})
}

// TestPayoutAllowanceRelease: a declined payout releases its reservation,
// so the next one fits; a succeeded one consumes it.
func TestPayoutAllowanceRelease(t *testing.T) {
	each(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{work: true})
		c := e.clients("payout-allowance-life", "", e.url)[0]
		e.setAllowance(c, allowance.Payout, nil, minor(2500))

		// The first payout waits for the payee's 3DS step, holding its
		// reservation, until the payee denies it: the second is refused
		// while it waits, whatever the workers' speed.
		declined := e.createPayout(c, payoutBody("4000000000003220", ""))
		ra := e.settlePayout(c, declined.PayoutID)
		require.Equal(t, "requires_action", ra.Status)
		over := e.post(c, "/api/v1/payouts", payoutBody("4242424242424242", ""))
		require.Equal(t, http.StatusUnprocessableEntity, over.Status, string(over.Body))
		require.Equal(t, "limit_exceeded", decodeError(t, over.Body).Error.Code)

		challenge(t, ra.NextAction.URL, "deny")
		resp := e.post(c, "/api/v1/payouts/"+declined.PayoutID+"/confirm", "")
		require.Equal(t, http.StatusOK, resp.Status, "%s", resp.Body)
		require.Equal(t, "declined", e.settlePayout(c, declined.PayoutID).Status)
		ok := e.createPayout(c, payoutBody("4242424242424242", ""))
		require.Equal(t, "succeeded", e.settlePayout(c, ok.PayoutID).Status)
		for _, l := range e.limits(c).Items {
			if l.Allowance == "payout" {
				require.Equal(t, int64(2500), l.UsedMinor)
				require.Zero(t, l.ReservedMinor)
			}
		}
		again := e.post(c, "/api/v1/payouts", payoutBody("4242424242424242", ""))
		require.Equal(t, http.StatusUnprocessableEntity, again.Status, "the day is used")
	})
}
