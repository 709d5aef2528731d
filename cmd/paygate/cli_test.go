package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// runAll runs one command line through run() and returns its stdout,
// stderr and error.
func runAll(env map[string]string, args ...string) (string, string, error) {
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), args, getenvFrom(env), strings.NewReader(""), &stdout, &stderr)
	return stdout.String(), stderr.String(), err
}

// TestHelpAndVersion: --version and version print the version; -h and
// --help on every command print its usage on stdout and exit 0, each flag
// on one line; the overall usage names every command that takes the
// database flags (docs/cli.md).
func TestHelpAndVersion(t *testing.T) {
	for _, v := range []string{"version", "--version"} {
		out, _, err := runAll(nil, v)
		require.NoError(t, err)
		require.Regexp(t, `^paygate \d+\.\d+\.\d+ \(API \d+\.\d+\.\d+\)\n$`, out)
	}
	flagLine := regexp.MustCompile(`^  --?[a-zA-Z][a-zA-Z0-9-]*( [A-Z_]+)? +\S`)
	for _, cmd := range [][]string{{"serve"}, {"migrate"}, {"keys", "create"}, {"keys", "list"}, {"keys", "revoke"},
		{"channels", "list"}, {"limits", "set"}, {"users", "create"}, {"bins", "import"}, {"webhooks", "add"},
		{"master-key", "rotate"}, {"backup"}, {"call"}, {"listen"}, {"trigger"}, {"providers", "add"}, {"channels", "create"},
		{"sandbox-acquirer"}} {
		for _, h := range []string{"-h", "--help"} {
			out, stderr, err := runAll(nil, append(append([]string{}, cmd...), h)...)
			require.NoError(t, err, "%v %s", cmd, h)
			require.Empty(t, stderr, "%v %s", cmd, h)
			require.True(t, strings.HasPrefix(out, "Usage:\n  paygate "+cmd[0]), "%v %s:\n%s", cmd, h, out)
			_, flags, ok := strings.Cut(out, "\nFlags:\n")
			require.True(t, ok, "%v %s:\n%s", cmd, h, out)
			flags, _, _ = strings.Cut(flags, "\n\n")
			for _, l := range strings.Split(strings.TrimRight(flags, "\n"), "\n") {
				if l != "  (none)" {
					require.Regexp(t, flagLine, l, "%v: one line per flag", cmd)
				}
			}
		}
	}
	out, _, err := runAll(nil, "trigger", "--help")
	require.NoError(t, err)
	require.Contains(t, out, "payment.succeeded")
	out, _, err = runAll(nil, "keys", "-h")
	require.NoError(t, err)
	require.Contains(t, out, "paygate keys       revoke")

	out, _, err = runAll(nil, "--help")
	require.NoError(t, err)
	for _, c := range []string{"serve", "migrate", "keys", "channels", "providers", "limits", "users", "bins", "webhooks", "master-key"} {
		require.Regexp(t, `Database flags \([^)]*\b`+c+`\b`, out)
	}
}

// TestCallRetryBound: `paygate call` waits for a retryable answer only
// within --max-wait, says that it waits, and otherwise prints the answer
// and exits non-zero at once (docs/cli.md, "call").
func TestCallRetryBound(t *testing.T) {
	var calls atomic.Int32
	day := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("Retry-After", "86400")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = w.Write([]byte(`{"error":{"code":"rate_limited","message":"try tomorrow","retryable":true}}`))
	}))
	defer day.Close()
	env := map[string]string{"PAYGATE_URL": day.URL, "PAYGATE_ACCESS_KEY": "ak_sandbox_x", "PAYGATE_SECRET": "sk_x"}
	started := time.Now()
	out, stderr, err := runAll(env, "call", "POST", "/api/v1/card-verifications", "-d", `{}`)
	require.Error(t, err)
	require.Less(t, time.Since(started), 10*time.Second, "no wait for a day")
	require.Equal(t, int32(1), calls.Load())
	require.Contains(t, out, `"rate_limited"`)
	require.Contains(t, stderr, "86400 s, more than --max-wait 30s")

	// A short wait is waited for, and said.
	calls.Store(0)
	soon := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if calls.Add(1) == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(`{"error":{"code":"unavailable","message":"a moment","retryable":true}}`))
			return
		}
		_, _ = w.Write([]byte(`{"ok":true}`))
	}))
	defer soon.Close()
	env["PAYGATE_URL"] = soon.URL
	out, stderr, err = runAll(env, "call", "GET", "/api/v1/health")
	require.NoError(t, err)
	require.Contains(t, out, `"ok": true`)
	require.Regexp(t, `paygate call: 503 unavailable; trying again in \S+`, stderr)
}
