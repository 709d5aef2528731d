package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/client"
	"github.com/paygate/paygate/internal/openapi"
	"github.com/paygate/paygate/internal/store/storetest"
)

// The canaries: a Luhn-valid Visa number no test table knows, a CVV, the
// sandbox's mobile number, and a marker inside a wallet payload.
const (
	canaryCard   = "4000056655665556"
	canaryCVV    = "8317"
	canaryPhone  = "2025550100"
	canaryWallet = "wallet-canary-5d1e"
	canaryCode   = "7305918246"       // a wrong verification code
	payoutCode   = "6402718359"       // a wrong code for a challenged payout
	payout3DS    = "4000000000003220" // the sandbox's challenged payout card (docs/sandbox.md)
)

// TestPCICanary runs payments, a card verification and payouts with canary
// data through every path that carries card data or a code, then scans the database, the logs (debug level), the
// job arguments and every answer: none of it appears anywhere
// (docs/design/decisions.md section 8).
func TestPCICanary(t *testing.T) {
	for _, db := range storetest.Databases(t) {
		t.Run(db.Name, func(t *testing.T) {
			ctx := context.Background()
			env := dbEnv(t, db, t.TempDir())
			srv := start(t, env)
			c := client.New(srv.url, srv.accessKey, srv.secret)
			var answers strings.Builder
			do := func(method, target, body string) openapi.Payment {
				resp, err := c.Do(ctx, client.Request{Method: method, Target: target, Body: []byte(body)})
				require.NoError(t, err)
				answers.Write(resp.Body)
				var p openapi.Payment
				_ = json.Unmarshal(resp.Body, &p)
				return p
			}
			year := time.Now().Year() + 1
			customer := `"customer":{"first_name":"A","last_name":"B","email":"a@b.example","phone":"+44 20 7946 0000","billing_address":{"country":"GB","line1":"1 St"}}`
			card := func(mode string) string {
				return fmt.Sprintf(`{"order_id":"pci","amount_minor":100,"currency":"USD",%s,"operation_mode":%q,"customer_reference":"pci-payer","save_payment_method":true,
					"payment_method":{"type":"card","card":{"number":%q,"expire_month":11,"expire_year":%d,"cvv":%q,"cardholder":"A B"}}}`,
					customer, mode, canaryCard, year, canaryCVV)
			}
			var ids []string
			ids = append(ids, do("POST", "/api/v1/payments/direct", card("charge")).PaymentID)
			ids = append(ids, do("POST", "/api/v1/payments/direct", card("authorize")).PaymentID)
			ids = append(ids, do("POST", "/api/v1/payments/direct",
				`{"order_id":"pci-m","amount_minor":100,"currency":"USD","payment_method":{"type":"mobile","mobile":{"phone":"+1 202-555-0100"}}}`).PaymentID)
			ids = append(ids, do("POST", "/api/v1/payments/direct", fmt.Sprintf(
				`{"order_id":"pci-w","amount_minor":100,"currency":"USD","payment_method":{"type":"apple_pay","wallet":{"token":"sandbox_success","extra":%q}}}`, canaryWallet)).PaymentID)
			// A card number sent where it does not belong, and an invalid one.
			do("POST", "/api/v1/payments/direct", strings.Replace(card("charge"), `"order_id":"pci"`, `"order_id":"pci","nick":"`+canaryCard+`"`, 1))
			do("POST", "/api/v1/payments/direct", strings.Replace(card("charge"), canaryCard, canaryCard[:15]+"1", 1))

			// The hosted page: the payer types the canary card into the form.
			ids = append(ids, payOnPage(t, c, &answers, year))

			// Drive every payment to the end: confirm the mobile one, capture the hold.
			for _, id := range ids {
				var p openapi.Payment
				require.Eventually(t, func() bool {
					p = do("GET", "/api/v1/payments/"+id, "")
					return p.Status != "processing"
				}, 30*time.Second, 20*time.Millisecond)
				switch p.Status {
				case "requires_action":
					do("POST", "/api/v1/payments/"+id+"/confirm", `{"value":"123456"}`)
				case "authorized":
					do("POST", "/api/v1/payments/"+id+"/capture", ``)
				}
				require.Eventually(t, func() bool { return do("GET", "/api/v1/payments/"+id, "").Final }, 30*time.Second, 20*time.Millisecond, id)
			}
			do("GET", "/api/v1/payments", "")

			// A card verification of the canary card, and a canary code
			// (docs/verifications.md): sealed until the provider saw them.
			var vid struct {
				ID     string `json:"verification_id"`
				Status string `json:"status"`
			}
			verification := func(method, target, body string) string {
				resp, err := c.Do(ctx, client.Request{Method: method, Target: target, Body: []byte(body)})
				require.NoError(t, err)
				answers.Write(resp.Body)
				require.NoError(t, json.Unmarshal(resp.Body, &vid))
				return vid.Status
			}
			verification("POST", "/api/v1/card-verifications", fmt.Sprintf(`{"order_id":"pci-v","currency":"USD",
				"card":{"number":%q,"expire_month":11,"expire_year":%d,"cvv":%q}}`, canaryCard, year, canaryCVV))
			get := func() string { return verification("GET", "/api/v1/card-verifications/"+vid.ID, "") }
			require.Eventually(t, func() bool { return get() == "code_sent" }, 30*time.Second, 20*time.Millisecond)
			do("POST", "/api/v1/card-verifications/"+vid.ID+"/verify", `{"code":"`+canaryCode+`"}`)
			do("POST", "/api/v1/card-verifications/"+vid.ID+"/verify", `{"code":"`+canaryCard[12:]+`"}`)
			require.Eventually(t, func() bool { return get() == "verified" }, 30*time.Second, 20*time.Millisecond)

			// Payouts (docs/payouts.md): one to the canary card, one to the
			// challenged card confirmed with a canary code (a wrong one: it
			// declines), both driven to the end so the provider saw them.
			var po struct {
				ID     string `json:"payout_id"`
				Status string `json:"status"`
			}
			payout := func(method, target, body string) string {
				resp, err := c.Do(ctx, client.Request{Method: method, Target: target, Body: []byte(body)})
				require.NoError(t, err)
				answers.Write(resp.Body)
				require.NoError(t, json.Unmarshal(resp.Body, &po), "%s", resp.Body)
				return po.Status
			}
			payoutUntil := func(want ...string) string {
				require.Eventually(t, func() bool { return slices.Contains(want, payout("GET", "/api/v1/payouts/"+po.ID, "")) },
					30*time.Second, 20*time.Millisecond, "payout %s is %s", po.ID, po.Status)
				return po.Status
			}
			payoutBody := func(order, number string) string {
				return fmt.Sprintf(`{"order_id":%q,"amount_minor":100,"currency":"USD","account":"pci",
					"customer":{"first_name":"A","last_name":"B","email":"a@b.example","billing_address":{"country":"GB","line1":"1 St"}},
					"payout_method":{"type":"card","card":{"number":%q,"expire_month":11,"expire_year":%d,"cvv":%q,"cardholder":"A B"}}}`,
					order, number, year, canaryCVV)
			}
			require.Equal(t, "processing", payout("POST", "/api/v1/payouts", payoutBody("pci-p", canaryCard)))
			require.Equal(t, "succeeded", payoutUntil("succeeded", "declined", "failed"))
			require.Equal(t, "processing", payout("POST", "/api/v1/payouts", payoutBody("pci-p3", payout3DS)))
			payoutUntil("requires_action")
			require.Equal(t, "processing", payout("POST", "/api/v1/payouts/"+po.ID+"/confirm", `{"value":"`+payoutCode+`"}`))
			require.Equal(t, "declined", payoutUntil("succeeded", "declined", "failed"))
			require.NoError(t, srv.stop()) // flush everything to disk

			dump := databaseText(t, db.Name, env)
			for name, text := range map[string]string{"database": dump, "logs": srv.stderr.String(), "answers": answers.String()} {
				for _, canary := range []string{canaryCard, canaryCard[:15] + "1", canaryPhone, canaryWallet, canaryCode, payoutCode, payout3DS} {
					require.NotContains(t, text, canary, "%s holds a canary", name)
				}
			}
			// A 4-digit CVV can occur by chance inside a random id: look for it
			// as a whole JSON value, the way it would leak.
			require.NotContains(t, srv.stderr.String(), `"`+canaryCVV+`"`)
			require.NotContains(t, answers.String(), `"`+canaryCVV+`"`)
			require.NotContains(t, strings.ToLower(dump), `"cvv"`, "no CVV field is stored, even sealed data is gone")
			require.Contains(t, answers.String(), "400005******5556", "the mask is what remains")
			// Controls: the scans do see what is stored and logged in clear.
			require.Contains(t, dump, "pci-payer")
			require.Contains(t, dump, "400005******5556")
			// River's jobs are part of the scan: an operation's job is deleted
			// with its outcome (internal/handoff), a session's expiry stays.
			require.Contains(t, dump, "payment.expire_session", "River's jobs are part of the scan")
			require.Contains(t, dump, "400000******3220", "the payouts are part of the scan")
			require.Contains(t, srv.stderr.String(), `"route":"POST /api/v1/payments/direct"`)
		})
	}
}

// databaseText is everything the database holds, as text: the SQLite files
// byte for byte, or every PostgreSQL table row as text (River's jobs too).
func databaseText(t *testing.T, dbName string, env map[string]string) string {
	t.Helper()
	var b strings.Builder
	if dbName == "sqlite" {
		files, err := filepath.Glob(filepath.Join(env["PAYGATE_DATA_DIR"], "*"))
		require.NoError(t, err)
		for _, f := range files {
			data, err := os.ReadFile(f)
			require.NoError(t, err)
			b.Write(data)
		}
		return b.String()
	}
	db, err := sql.Open("pgx", env["PAYGATE_DATABASE_URL"])
	require.NoError(t, err)
	defer db.Close()
	rows, err := db.Query(`SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`)
	require.NoError(t, err)
	var tables []string
	for rows.Next() {
		var n string
		require.NoError(t, rows.Scan(&n))
		tables = append(tables, n)
	}
	rows.Close()
	require.Contains(t, tables, "river_job")
	for _, table := range tables {
		var text sql.NullString
		require.NoError(t, db.QueryRow(`SELECT string_agg(t::text, E'\n') FROM "`+table+`" t`).Scan(&text))
		b.WriteString(text.String)
	}
	return b.String()
}

// payOnPage opens a hosted session and posts the checkout form with the
// canary card, as a browser without JavaScript does; every page it is
// shown goes into answers.
func payOnPage(t *testing.T, c *client.Client, answers *strings.Builder, year int) string {
	t.Helper()
	var s openapi.Payment
	require.NoError(t, c.JSON(context.Background(), "POST", "/api/v1/payment-sessions",
		json.RawMessage(`{"order_id":"pci-h","amount_minor":100,"currency":"USD","customer":{"email":"a@b.example"}}`), &s))
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	browser := &http.Client{Jar: jar}
	resp, err := browser.Get(s.CheckoutURL)
	require.NoError(t, err)
	page, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	answers.Write(page)
	m := regexp.MustCompile(`name="csrf_token" value="([^"]+)"`).FindSubmatch(page)
	require.NotNil(t, m, "the form carries its anti-forgery field")
	resp, err = browser.PostForm(s.CheckoutURL, url.Values{"csrf_token": {string(m[1])}, "method": {"card"},
		"number": {canaryCard}, "expire_month": {"11"}, "expire_year": {fmt.Sprint(year)}, "cvv": {canaryCVV},
		"cardholder": {"A B"}, "first_name": {"A"}, "last_name": {"B"}, "country": {"GB"}, "line1": {"1 St"}})
	require.NoError(t, err)
	page, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	answers.Write(page)
	answers.WriteString(resp.Request.URL.String()) // no card data in any URL either
	return s.PaymentID
}
