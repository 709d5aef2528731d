package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/client"
	"github.com/paygate/paygate/internal/store/storetest"
)

func TestHTTPHygiene(t *testing.T) {
	each(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{})
		ctx := context.Background()

		t.Run("health needs no signature", func(t *testing.T) {
			resp, err := http.Get(e.url + "/api/v1/health")
			require.NoError(t, err)
			defer resp.Body.Close()
			require.Equal(t, http.StatusOK, resp.StatusCode)
			var h map[string]any
			require.NoError(t, json.NewDecoder(resp.Body).Decode(&h))
			// version is the interface's (info.version), service_version the build's.
			require.Equal(t, map[string]any{"status": "ok", "service": "paygate", "version": "1.2.0",
				"service_version": "test", "environment": "sandbox"}, h)
			require.NotEmpty(t, resp.Header.Get("X-Request-Id"))
		})

		t.Run("openapi document", func(t *testing.T) {
			resp, err := http.Get(e.url + "/api/v1/openapi.json")
			require.NoError(t, err)
			defer resp.Body.Close()
			var doc map[string]any
			require.NoError(t, json.NewDecoder(resp.Body).Decode(&doc))
			require.Equal(t, "3.1.0", doc["openapi"])
			require.Equal(t, "1.2.0", doc["info"].(map[string]any)["version"])
		})

		t.Run("unknown path and method", func(t *testing.T) {
			resp, err := http.Get(e.url + "/api/v1/nothing-here")
			require.NoError(t, err)
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			require.Equal(t, http.StatusNotFound, resp.StatusCode)
			env := decodeError(t, b)
			require.Equal(t, "not_found", env.Error.Code)
			require.Equal(t, resp.Header.Get("X-Request-Id"), env.Error.RequestID)

			req, _ := http.NewRequest(http.MethodDelete, e.url+"/api/v1/payment-sessions", nil)
			resp, err = http.DefaultClient.Do(req)
			require.NoError(t, err)
			b, _ = io.ReadAll(resp.Body)
			resp.Body.Close()
			require.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
			require.Equal(t, "method_not_allowed", decodeError(t, b).Error.Code)
			require.Equal(t, "POST", resp.Header.Get("Allow"))
		})

		t.Run("body over 64 KiB", func(t *testing.T) {
			big := `{"order_id":"` + strings.Repeat("x", 64<<10) + `"}`
			resp, err := e.a.Do(ctx, client.Request{Method: "POST", Target: "/api/v1/payment-sessions", Body: []byte(big)})
			require.NoError(t, err)
			require.Equal(t, http.StatusRequestEntityTooLarge, resp.Status)
			require.Equal(t, "payload_too_large", decodeError(t, resp.Body).Error.Code)
		})

		t.Run("content type", func(t *testing.T) {
			resp, err := e.a.Do(ctx, client.Request{Method: "POST", Target: "/api/v1/payment-sessions", Body: []byte(sessionBody),
				Header: http.Header{"Content-Type": {"text/plain"}}})
			require.NoError(t, err)
			require.Equal(t, http.StatusUnsupportedMediaType, resp.Status)
			require.Equal(t, "unsupported_media_type", decodeError(t, resp.Body).Error.Code)
			resp, err = e.a.Do(ctx, client.Request{Method: "POST", Target: "/api/v1/payment-sessions", Body: []byte(sessionBody),
				Header: http.Header{"Content-Type": {"application/json; charset=utf-8"}}})
			require.NoError(t, err)
			require.Equal(t, http.StatusCreated, resp.Status)
		})

		t.Run("bad bodies", func(t *testing.T) {
			for _, tc := range []struct{ body, code, field string }{
				{``, "invalid_json", ""},
				{`{`, "invalid_json", ""},
				{`[1]`, "invalid_json", ""},
				{`"x"`, "invalid_json", ""},
				{`{"order_id":"o","amount_minor":5,"currency":"USD","nick":"4242424242424242"}`, "unknown_field", "nick"},
				{`{"order_id":"o","amount_minor":5,"currency":"USD","customer":{"nick":1}}`, "unknown_field", "customer.nick"},
				{`{"amount_minor":5,"currency":"USD"}`, "validation_error", "order_id"},
				{`{"order_id":"o","amount_minor":0,"currency":"USD"}`, "validation_error", "amount_minor"},
				{`{"order_id":"o","amount_minor":"5","currency":"USD"}`, "validation_error", "amount_minor"},
				{`{"order_id":"o","amount_minor":9223372036854775808,"currency":"USD"}`, "validation_error", "amount_minor"},
				{`{"order_id":"o","amount_minor":5,"currency":"usd"}`, "validation_error", "currency"},
				{`{"order_id":"o","amount_minor":5,"currency":"USD","expires_in_seconds":299}`, "validation_error", "expires_in_seconds"},
				{`{"order_id":"o","amount_minor":5,"currency":"USD","locale":"de"}`, "validation_error", "locale"},
				{`{"order_id":"o","amount_minor":5,"currency":"USD","customer":{"email":"nope"}}`, "validation_error", "customer.email"},
				{`{"order_id":"o","amount_minor":5,"currency":"USD","metadata":{"1":1,"2":2,"3":3,"4":4,"5":5,"6":6,"7":7,"8":8,"9":9,"10":10,"11":11,"12":12,"13":13,"14":14,"15":15,"16":16,"17":17,"18":18,"19":19,"20":20,"21":21}}`, "validation_error", "metadata"},
				{`{"order_id":"o","amount_minor":5,"currency":"USD","subscription":{"interval_unit":"month"}}`, "validation_error", "subscription.disclosure_version"},
			} {
				resp, err := e.a.Do(ctx, client.Request{Method: "POST", Target: "/api/v1/payment-sessions", Body: []byte(tc.body)})
				require.NoError(t, err)
				require.Equal(t, http.StatusBadRequest, resp.Status, tc.body)
				env := decodeError(t, resp.Body)
				require.Equal(t, tc.code, env.Error.Code, tc.body)
				if tc.field == "" {
					require.Nil(t, env.Error.Field, tc.body)
				} else {
					require.NotNil(t, env.Error.Field, tc.body)
					require.Equal(t, tc.field, *env.Error.Field, tc.body)
				}
				require.NotContains(t, string(resp.Body), "4242424242424242")
			}
		})

		t.Run("metrics", func(t *testing.T) {
			resp, err := http.Get(e.url + "/metrics")
			require.NoError(t, err)
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			require.Contains(t, string(b), `paygate_http_requests_total{route="GET /api/v1/health",status="200"}`)
			require.Contains(t, string(b), "paygate_http_request_duration_seconds_bucket")
			require.Contains(t, string(b), `go_sql_open_connections{db_name="paygate"}`, "the pool")
			require.Contains(t, string(b), "paygate_store_batch_commits_total", "SQLite's group commit")
		})
	})
}
