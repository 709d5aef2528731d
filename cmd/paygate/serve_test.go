package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/client"
	"github.com/paygate/paygate/internal/openapi"
	"github.com/paygate/paygate/internal/provider/sandbox/acquirer"
	"github.com/paygate/paygate/internal/store/storetest"
)

func TestProductionRefusesTheSandboxAcquirer(t *testing.T) {
	var stdout, stderr strings.Builder
	err := run(context.Background(), []string{"serve", "--addr", "127.0.0.1:0", "--data-dir", t.TempDir(),
		"--environment", "production", "--sandbox-url", "http://127.0.0.1:1"}, getenvFrom(nil), nil, &stdout, &stderr)
	require.ErrorContains(t, err, "cannot be used in production")
}

// TestRoles: an API process and a worker process on one PostgreSQL database
// (serve --role api / worker, docs/operations.md, "Several processes"): the
// API accepts a payment and only queues it; the worker completes it. The
// worker serves no API.
func TestRoles(t *testing.T) {
	url := storetest.NewPostgresDatabase(t)
	acq, err := acquirer.Start(acquirer.Config{})
	require.NoError(t, err)
	defer acq.Close()
	// Every process of a cluster shares the master key: here the same data
	// folder's key file (on PostgreSQL it holds nothing else).
	base := map[string]string{"PAYGATE_DATABASE_URL": url, "PAYGATE_SANDBOX_URL": acq.URL, "PAYGATE_SANDBOX_KEY": acq.APIKey,
		"PAYGATE_DATA_DIR": t.TempDir()}
	with := func(role string) map[string]string {
		env := map[string]string{"PAYGATE_ROLE": role}
		for k, v := range base {
			env[k] = v
		}
		return env
	}
	api := start(t, with("api"))
	require.NotEmpty(t, api.accessKey)
	require.Contains(t, api.stdout.String(), "role api")
	c := client.New(api.url, api.accessKey, api.secret)
	var p openapi.Payment
	body := fmt.Sprintf(`{"order_id":"roles","amount_minor":700,"currency":"USD","customer":{"email":"a@b.example"},
		"payment_method":{"type":"card","card":{"number":"5555555555554444","expire_month":12,"expire_year":%d}}}`, time.Now().Year()+1)
	require.NoError(t, c.JSON(context.Background(), "POST", "/api/v1/payments/direct", json.RawMessage(body), &p))

	db, err := sql.Open("pgx", url)
	require.NoError(t, err)
	defer db.Close()
	var state string
	require.NoError(t, db.QueryRow(`SELECT state FROM river_job WHERE kind = 'operation.run'`).Scan(&state))
	require.Equal(t, "available", state, "the API process queued the operation and ran nothing")

	worker := start(t, with("worker"))
	require.Empty(t, worker.accessKey, "a worker issues no key")
	require.Eventually(t, func() bool {
		var got openapi.Payment
		require.NoError(t, c.JSON(context.Background(), "GET", "/api/v1/payments/"+p.PaymentID, nil, &got))
		return got.Status == "succeeded"
	}, 60*time.Second, 50*time.Millisecond, "the worker completes what the API accepted")

	resp, err := http.Get(worker.url + "/api/v1/health")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	resp, err = http.Get(worker.url + "/api/v1/payment-channels")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusNotFound, resp.StatusCode, "a worker serves no API")

	_, err = cli(t, map[string]string{"PAYGATE_DATA_DIR": t.TempDir(), "PAYGATE_ROLE": "api"}, "serve", "--addr", "127.0.0.1:0")
	require.ErrorContains(t, err, "need PostgreSQL")
}

// TestMetricsAddr: --metrics-addr serves /metrics on an address of its
// own and takes it off the API's; production never serves it on the API's
// address, and warns when it has no channel on an acquirer
// (docs/operations.md, "Metrics").
func TestMetricsAddr(t *testing.T) {
	get := func(url string) int {
		resp, err := http.Get(url)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	metricsURL := regexp.MustCompile(`"msg":"metrics","url":"(http://[^"]+)"`)

	sandbox := start(t, map[string]string{"PAYGATE_DATA_DIR": t.TempDir()})
	require.Equal(t, http.StatusOK, get(sandbox.url+"/metrics"), "the sandbox's default: on the API's address")
	require.NotContains(t, sandbox.stderr.String(), "WARNING")

	apart := start(t, map[string]string{"PAYGATE_DATA_DIR": t.TempDir(), "PAYGATE_METRICS_ADDR": "127.0.0.1:0"})
	m := metricsURL.FindStringSubmatch(apart.stderr.String())
	require.NotNil(t, m, apart.stderr.String())
	require.Equal(t, http.StatusOK, get(m[1]))
	require.Equal(t, http.StatusNotFound, get(apart.url+"/metrics"))

	prodEnv := map[string]string{"PAYGATE_DATA_DIR": t.TempDir(), "PAYGATE_ENVIRONMENT": "production"}
	prod := start(t, prodEnv)
	require.Equal(t, http.StatusNotFound, get(prod.url+"/metrics"))
	require.Contains(t, prod.stderr.String(), "WARNING: production has no payment channel on an acquirer")
	require.Contains(t, prod.stderr.String(), "paygate providers add --name NAME --kind stripe --secret-key-file FILE")
	require.Contains(t, prod.stderr.String(), "paygate channels create --alias ALIAS --provider NAME --methods card --currencies USD --auto-assign")

	// The commands it names, then a restart: no warning.
	keyFile := filepath.Join(t.TempDir(), "sk")
	require.NoError(t, os.WriteFile(keyFile, []byte("sk_live_"+strings.Repeat("x", 24)), 0o600))
	_, err := cli(t, prodEnv, "providers", "add", "--name", "acq", "--kind", "stripe", "--secret-key-file", keyFile)
	require.NoError(t, err)
	_, err = cli(t, prodEnv, "channels", "create", "--alias", "card-usd", "--provider", "acq", "--methods", "card",
		"--currencies", "USD", "--auto-assign")
	require.NoError(t, err)
	require.NoError(t, prod.stop())
	again := start(t, prodEnv)
	require.NotContains(t, again.stderr.String(), "WARNING")
}
