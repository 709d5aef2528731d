package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/client"
	"github.com/paygate/paygate/internal/openapi"
	"github.com/paygate/paygate/internal/store/storetest"
)

// output is a concurrency-safe writer that tells when a pattern appears.
type output struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	wait  *regexp.Regexp
	found chan string
}

func newOutput(pattern string) *output {
	return &output{wait: regexp.MustCompile(pattern), found: make(chan string, 1)}
}

func (o *output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.buf.Write(p)
	if o.wait != nil {
		if m := o.wait.FindStringSubmatch(o.buf.String()); m != nil {
			o.found <- m[1]
			o.wait = nil
		}
	}
	return len(p), nil
}

func (o *output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}

// instance is a running `paygate serve`.
type instance struct {
	url, accessKey, secret string
	stdout, stderr         *output
	stop                   func() error
}

// dbEnv is the environment of a process on db with its data folder at
// dataDir: on PostgreSQL, a fresh database of its own.
func dbEnv(t *testing.T, db storetest.Database, dataDir string) map[string]string {
	t.Helper()
	env := map[string]string{"PAYGATE_DATA_DIR": dataDir}
	if db.Name == "postgres" {
		env["PAYGATE_DATABASE_URL"] = storetest.NewPostgresDatabase(t)
	}
	return env
}

func getenvFrom(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// start runs serve through run() on port 0 and waits until it listens.
func start(t *testing.T, env map[string]string) *instance {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out := newOutput(`listening on (http://\S+)`)
	done := make(chan error, 1)
	errOut := &output{}
	go func() {
		done <- run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--log-level", "debug"}, getenvFrom(env), nil, out, errOut)
	}()
	var url string
	select {
	case url = <-out.found:
	case err := <-done:
		cancel()
		t.Fatalf("serve ended: %v\n%s", err, out.String())
	case <-time.After(60 * time.Second):
		cancel()
		t.Fatalf("serve did not start:\n%s", out.String())
	}
	in := &instance{url: url, stdout: out, stderr: errOut}
	if m := regexp.MustCompile(`access key\s+(ak_\S+)\s+secret\s+(sk_\S+)`).FindStringSubmatch(out.String()); m != nil {
		in.accessKey, in.secret = m[1], m[2]
	}
	stopped := false
	in.stop = func() error {
		if stopped {
			return nil
		}
		stopped = true
		cancel()
		return <-done
	}
	t.Cleanup(func() { _ = in.stop() })
	return in
}

// cli runs one command through run() and returns its stdout.
func cli(t *testing.T, env map[string]string, args ...string) (string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), args, getenvFrom(env), strings.NewReader(""), &stdout, &stderr)
	return stdout.String(), err
}

func TestEndToEnd(t *testing.T) {
	for _, db := range storetest.Databases(t) {
		t.Run(db.Name, func(t *testing.T) {
			ctx := context.Background()
			env := dbEnv(t, db, t.TempDir())
			srv := start(t, env)
			require.NotEmpty(t, srv.accessKey, "a first start prints a sandbox key:\n%s", srv.stdout.String())
			require.Contains(t, srv.stdout.String(), "paygate call POST /api/v1/payment-sessions")

			info, err := os.Stat(filepath.Join(env["PAYGATE_DATA_DIR"], "master.key"))
			require.NoError(t, err)
			require.Equal(t, os.FileMode(0o600), info.Mode().Perm())

			c := client.New(srv.url, srv.accessKey, srv.secret)
			var p openapi.Payment
			require.NoError(t, c.JSON(ctx, "POST", "/api/v1/payment-sessions",
				json.RawMessage(`{"order_id":"e2e-1","amount_minor":1999,"currency":"USD"}`), &p))
			require.Equal(t, "created", p.Status)
			require.True(t, strings.HasPrefix(p.CheckoutURL, srv.url+"/checkout/"), p.CheckoutURL)

			// paygate call, with the keys from the environment.
			callEnv := map[string]string{"PAYGATE_URL": srv.url, "PAYGATE_ACCESS_KEY": srv.accessKey, "PAYGATE_SECRET": srv.secret}
			out, err := cli(t, callEnv, "call", "GET", "/api/v1/payment-sessions/"+p.SessionID)
			require.NoError(t, err)
			require.Contains(t, out, `"session_id": "`+p.SessionID+`"`)
			out, err = cli(t, callEnv, "call", "POST", "/api/v1/payment-sessions", "-d", `{"order_id":"x"}`)
			require.Error(t, err, "a 400 exits non-zero")
			require.Contains(t, out, "validation_error")

			// Keys made by the command line while the server runs work at once.
			out, err = cli(t, env, "keys", "create", "--name", "second", "--json")
			require.NoError(t, err)
			var issued struct {
				AccessKey string `json:"access_key"`
				Secret    string `json:"secret"`
			}
			require.NoError(t, json.Unmarshal([]byte(out), &issued))
			second := client.New(srv.url, issued.AccessKey, issued.Secret)
			var channels openapi.PaymentChannelList
			require.NoError(t, second.JSON(ctx, "GET", "/api/v1/payment-channels", nil, &channels))
			require.Len(t, channels.Items, 1)
			err = second.JSON(ctx, "GET", "/api/v1/payment-sessions/"+p.SessionID, nil, nil)
			require.True(t, client.IsCode(err, "not_found"), "%v", err)

			out, err = cli(t, env, "keys", "list")
			require.NoError(t, err)
			require.Contains(t, out, issued.AccessKey)
			require.NotContains(t, out, issued.Secret)

			_, err = cli(t, env, "channels", "unassign", "--key", issued.AccessKey, "--channel", "sandbox")
			require.NoError(t, err)
			err = second.JSON(ctx, "POST", "/api/v1/payment-sessions", json.RawMessage(`{"order_id":"o","amount_minor":5,"currency":"USD"}`), nil)
			require.True(t, client.IsCode(err, "channel_not_available"), "%v", err)
			_, err = cli(t, env, "channels", "assign", "--key", issued.AccessKey, "--channel", "sandbox-redirect")
			require.NoError(t, err)
			out, err = cli(t, env, "channels", "list", "--key", issued.AccessKey, "--json")
			require.NoError(t, err)
			require.Contains(t, out, `"alias":"sandbox-redirect"`)

			_, err = cli(t, env, "keys", "revoke", issued.AccessKey)
			require.NoError(t, err)
			// At once: a sandbox process keeps no key (docs/signing.md,
			// "Revoking a key").
			err = second.JSON(ctx, "GET", "/api/v1/payment-channels", nil, nil)
			require.True(t, client.IsCode(err, "invalid_signature"), "%v", err)

			_, err = cli(t, env, "keys", "revoke", "ak_sandbox_nobody")
			require.Error(t, err)
			_, err = cli(t, env, "keys", "frobnicate")
			var u usageError
			require.True(t, errors.As(err, &u))

			// Graceful stop, then a restart on the same data finds everything.
			require.NoError(t, srv.stop())
			again := start(t, env)
			require.Empty(t, again.accessKey, "no new key on a second start")
			c = client.New(again.url, srv.accessKey, srv.secret)
			var got openapi.Payment
			require.NoError(t, c.JSON(ctx, "GET", "/api/v1/payment-sessions/"+p.SessionID, nil, &got))
			require.Equal(t, p.PaymentID, got.PaymentID)

			out, err = cli(t, env, "migrate")
			require.NoError(t, err)
			require.Contains(t, out, "at migration")
		})
	}
}

// TestKillNine: an answered 201 survives SIGKILL of the process (SQLite,
// durable by default). It builds and runs the real binary.
func TestKillNine(t *testing.T) {
	t.Parallel() // mostly waits (restarts, River's rescue window): runs beside the other binary tests
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "paygate")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Stderr = os.Stderr
	require.NoError(t, build.Run())
	dataDir := t.TempDir()

	launch := func() (*exec.Cmd, *output) {
		cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--data-dir", dataDir)
		out := newOutput(`listening on (http://\S+)`)
		cmd.Stdout, cmd.Stderr = out, &bytes.Buffer{}
		require.NoError(t, cmd.Start())
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		return cmd, out
	}
	cmd, out := launch()
	var url string
	select {
	case url = <-out.found:
	case <-time.After(60 * time.Second):
		t.Fatalf("did not start:\n%s", out.String())
	}
	m := regexp.MustCompile(`access key\s+(ak_\S+)\s+secret\s+(sk_\S+)`).FindStringSubmatch(out.String())
	require.NotNil(t, m)
	c := client.New(url, m[1], m[2])
	var ids []string
	for i := range 20 {
		var p openapi.Payment
		require.NoError(t, c.JSON(context.Background(), "POST", "/api/v1/payment-sessions",
			json.RawMessage(`{"order_id":"kill-`+string(rune('a'+i))+`","amount_minor":5,"currency":"USD"}`), &p))
		ids = append(ids, p.SessionID)
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()

	_, out = launch()
	select {
	case url = <-out.found:
	case <-time.After(60 * time.Second):
		t.Fatalf("did not restart:\n%s", out.String())
	}
	c = client.New(url, m[1], m[2])
	for _, id := range ids {
		require.NoError(t, c.JSON(context.Background(), "GET", "/api/v1/payment-sessions/"+id, nil, nil), "session %s lost", id)
	}
}
