package server_test

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/allowance"
	"github.com/paygate/paygate/internal/money"
	"github.com/paygate/paygate/internal/openapi"
	"github.com/paygate/paygate/internal/store/storetest"
)

var (
	allowanceRowRE = regexp.MustCompile(`<tr data-allowance="([a-z]+)" data-currency="([A-Z]+)">(.*?)</tr>`)
	settingsCellRE = regexp.MustCompile(`<td[^>]*>(.*?)</td>`)
	channelRowRE   = regexp.MustCompile(`<tr data-channel="([^"]+)">(.*?)</tr>`)
)

func settingsCells(row string) []string {
	var out []string
	for _, m := range settingsCellRE.FindAllStringSubmatch(row, -1) {
		out = append(out, m[1])
	}
	return out
}

// TestCabinetAllowances: the allowances page (docs/cabinet.md,
// "Allowances") shows the shown key's allowances with the figures of the
// key's own day, exactly as GET /api/v1/limits answers them, and never
// another key's.
func TestCabinetAllowances(t *testing.T) {
	each(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{work: true})
		ctx := context.Background()
		e.setAllowance(e.a, allowance.Collection, minor(9000), minor(10000))
		require.NoError(t, e.store.PutAllowance(ctx, allowance.Setting{KeyID: e.aKey.ID, Allowance: allowance.Payout,
			Currency: "EUR", DailyMinor: minor(2000), UpdatedAt: e.clock.Now()}))

		// Key A's clock runs three days ahead: its day is not the real one.
		e.advance(e.a, e.clock.Now().Add(3*24*time.Hour))
		day := e.keyNow(e.a).UTC().Format(time.DateOnly)
		require.NotEqual(t, e.clock.Now().UTC().Format(time.DateOnly), day)

		// One payment succeeds (used), one waits for its 3DS challenge
		// (reserved).
		paid := e.direct(e.a, cardBody("4242424242424242", ""))
		require.Equal(t, "succeeded", e.settle(e.a, paid.PaymentID).Status)
		held := e.direct(e.a, cardBody("4000000000003220", ""))
		require.Equal(t, "requires_action", e.settle(e.a, held.PaymentID).Status)

		vic := e.signedInStaff(t, "vic@example.com", e.aKey.ID)
		status, body, _ := vic.get(e.url + "/cabinet/allowances")
		require.Equal(t, http.StatusOK, status, body)
		require.Contains(t, body, `data-day="`+day+`"`, "the key's day")
		rows := allowanceRowRE.FindAllStringSubmatch(body, -1)
		api := e.limits(e.a).Items
		require.Len(t, rows, len(api))
		require.Len(t, rows, 2)
		format := func(n *int64, currency string) string {
			if n == nil {
				return "unlimited"
			}
			return money.Format(*n, currency)
		}
		for i, l := range api {
			require.Equal(t, []string{l.Allowance, l.Currency}, rows[i][1:3])
			require.Equal(t, []string{l.Allowance, l.Currency, format(l.PerTransactionMinor, l.Currency),
				format(l.DailyMinor, l.Currency), money.Format(l.UsedMinor, l.Currency),
				money.Format(l.ReservedMinor, l.Currency), format(l.RemainingMinor, l.Currency)}, settingsCells(rows[i][3]))
		}
		byKind := map[string]openapi.Limit{}
		for _, l := range api {
			byKind[l.Allowance] = l
		}
		require.Equal(t, int64(1000), byKind["collection"].UsedMinor)
		require.Equal(t, int64(1000), byKind["collection"].ReservedMinor)
		require.Equal(t, []string{"collection", "USD", "USD 90.00", "USD 100.00", "USD 10.00", "USD 10.00", "USD 80.00"},
			settingsCells(allowanceRowRE.FindStringSubmatch(body)[3]))
		require.Contains(t, body, "<td>payout</td><td>EUR</td><td class=\"num\">unlimited</td><td class=\"num\">EUR 20.00</td>")
		require.NotContains(t, body, "<form method=\"post\" class=\"inline\"", "read-only")

		// Another key: 404 for a user of A; its own figures for a user of
		// both (B has none set).
		status, _, _ = vic.get(e.url + "/cabinet/allowances?key=" + e.bKey.ID)
		require.Equal(t, http.StatusNotFound, status)
		ann := e.signedInAdmin(t, "ann@example.com", e.aKey.ID, e.bKey.ID)
		status, body, _ = ann.get(e.url + "/cabinet/allowances?key=" + e.bKey.ID)
		require.Equal(t, http.StatusOK, status)
		require.Empty(t, allowanceRowRE.FindAllString(body, -1))
		require.Contains(t, body, "None set: this key is unlimited.")
		require.Contains(t, body, `data-day="`+e.clock.Now().UTC().Format(time.DateOnly)+`"`, "B's clock did not move")

		// Without a session: to the sign-in page.
		status, _, _ = newStaffBrowser(t).get(e.url + "/cabinet/allowances")
		require.Equal(t, http.StatusSeeOther, status)
	})
}

// TestCabinetChannels: the channels page (docs/cabinet.md, "Channels")
// lists the shown key's channels in routing order as GET
// /api/v1/payment-channels does, with their profile's capabilities, and
// never a secret or another key's channel.
func TestCabinetChannels(t *testing.T) {
	each(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{})
		ctx := context.Background()
		refunds, err := e.store.FindChannelByAlias(ctx, "sandbox-refunds")
		require.NoError(t, err)
		require.NoError(t, e.store.AssignChannel(ctx, e.aKey.ID, refunds.ID, e.clock.Now().Add(time.Second)))

		var api openapi.PaymentChannelList
		require.NoError(t, e.a.JSON(ctx, "GET", "/api/v1/payment-channels", nil, &api))
		require.Len(t, api.Items, 2)

		vic := e.signedInStaff(t, "vic@example.com", e.aKey.ID)
		status, body, _ := vic.get(e.url + "/cabinet/channels")
		require.Equal(t, http.StatusOK, status, body)
		rows := channelRowRE.FindAllStringSubmatch(body, -1)
		require.Len(t, rows, len(api.Items))
		for i, ch := range api.Items {
			require.Equal(t, ch.ID, rows[i][1], "routing order")
			c := settingsCells(rows[i][2])
			require.Len(t, c, 5)
			require.True(t, strings.HasPrefix(c[0], ch.Alias+"<br>"), c[0])
			require.Equal(t, strings.Join(ch.PaymentMethods, ", "), c[1])
			require.Equal(t, strings.Join(ch.Currencies, ", "), c[2])
			require.Equal(t, ch.CheckoutMode, c[3])
			require.Contains(t, c[4], "saved_cards")
			if ch.Alias == "sandbox-refunds" {
				require.Contains(t, c[4], "refund")
			} else {
				require.NotContains(t, c[4], "refund")
			}
		}
		require.NotContains(t, body, "sk_sandbox_", "never the provider's secret")
		require.NotContains(t, body, e.acquirer.APIKey())

		status, _, _ = vic.get(e.url + "/cabinet/channels?key=" + e.bKey.ID)
		require.Equal(t, http.StatusNotFound, status)
		ann := e.signedInAdmin(t, "ann@example.com", e.aKey.ID, e.bKey.ID)
		status, body, _ = ann.get(e.url + "/cabinet/channels?key=" + e.bKey.ID)
		require.Equal(t, http.StatusOK, status)
		rows = channelRowRE.FindAllStringSubmatch(body, -1)
		require.Len(t, rows, 1, "B has only the default channel")
		require.NotContains(t, body, refunds.ID)
	})
}
