package server_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/store/storetest"
)

// TestCabinetHostileInput sends the pages what no form of theirs writes:
// ids, links and filters that are not text (invalid UTF-8, NUL) or too
// long. PostgreSQL refuses such text, so each must be answered before the
// database, on both databases, as a 4xx page or a page that leaves the
// filter out, never a 500 (docs/cabinet.md, "The other lists").
func TestCabinetHostileInput(t *testing.T) {
	each(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{})
		e.direct(e.a, orderBody("hostile", "hostile-payer"))
		bob := e.signedInAdmin(t, "bob@example.com", e.aKey.ID)
		_, _, csrf := bob.get(e.url + "/cabinet/payments")
		require.NotEmpty(t, csrf)
		bad := []string{"%FF", "%00", "a%00b", "%C3%28"}
		long := make([]byte, 300)
		for i := range long {
			long[i] = 'a'
		}
		bad = append(bad, string(long))
		for _, b := range bad {
			for _, path := range []string{
				"/cabinet/payments/" + b, "/cabinet/verifications/" + b, "/cabinet/payouts/" + b,
				"/cabinet/subscriptions/" + b, "/cabinet/events/" + b,
				"/cabinet/payments?after=1700000000000000_" + b, "/cabinet/cards?after=1_" + b,
				"/cabinet/events?after=1_" + b, "/cabinet/subscriptions?after=1_" + b, "/cabinet/payouts?after=1_" + b,
				"/cabinet/payments?q=" + b, "/cabinet/payments/export?q=" + b, "/cabinet/payments/totals?q=" + b,
				"/cabinet/cards?customer_reference=" + b, "/cabinet/events?resource_id=" + b, "/cabinet/events?type=" + b,
			} {
				status, body, _ := bob.get(e.url + path)
				require.Less(t, status, 500, "%s: %s", path, body)
			}
			for _, path := range []string{"/cabinet/cards/" + b + "/delete", "/cabinet/subscriptions/" + b + "/pause",
				"/cabinet/events/" + b + "/resend"} {
				status, body, _ := bob.post(e.url+path, url.Values{"csrf_token": {csrf}})
				require.Less(t, status, 500, "%s: %s", path, body)
				require.NotEqual(t, http.StatusSeeOther, status, path)
			}
		}
	})
}
