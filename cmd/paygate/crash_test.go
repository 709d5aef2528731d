package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/client"
	"github.com/paygate/paygate/internal/openapi"
	"github.com/paygate/paygate/internal/provider/sandbox"
	"github.com/paygate/paygate/internal/provider/sandbox/acquirer"
	"github.com/paygate/paygate/internal/store/storetest"
)

// buildBinary builds paygate once per test binary run.
func buildBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "paygate")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Stderr = os.Stderr
	require.NoError(t, build.Run())
	return bin
}

// spawn starts the binary and waits for a line matching pattern.
func spawn(t *testing.T, bin string, env []string, pattern string, args ...string) (*exec.Cmd, *output, string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	out := newOutput(pattern)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = out, &stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	select {
	case m := <-out.found:
		return cmd, out, m
	case <-time.After(60 * time.Second):
		t.Fatalf("%v did not start:\n%s\n%s", args, out.String(), stderr.String())
	}
	return nil, nil, ""
}

// TestCrashes kills the real binary (SIGKILL, from inside, at an exact
// point) after the payment's commit and before the provider call, and after
// the provider call before Paygate records the outcome. After a restart
// each payment has exactly one charge in the acquirer's ledger and the right
// final status.
func TestCrashes(t *testing.T) {
	t.Parallel() // mostly waits (restarts, River's rescue window): runs beside the other binary tests
	if testing.Short() {
		t.Skip("builds and kills the binary")
	}
	bin := buildBinary(t)
	_, acqOut, acqURL := spawn(t, bin, nil, `listening on (http://\S+)`, "sandbox-acquirer", "--addr", "127.0.0.1:0")
	acqKey := regexp.MustCompile(`api key (\S+)`).FindStringSubmatch(acqOut.String())[1]
	ledger := sandbox.NewAdapter(acqURL, acqKey, http.DefaultClient)

	for _, db := range storetest.Databases(t) {
		t.Run(db.Name, func(t *testing.T) {
			for i, point := range []string{"before_call", "after_call"} {
				amount := int64(4200 + i) // tells the payments apart in the ledger
				if db.Name == "postgres" {
					amount += 100
				}
				t.Run(point, func(t *testing.T) {
					// On PostgreSQL River's rescuer takes the dead worker's job
					// over (it looks every 30 s): short windows, run side by side.
					t.Parallel()
					args := []string{"serve", "--addr", "127.0.0.1:0", "--data-dir", t.TempDir(),
						"--sandbox-url", acqURL, "--sandbox-key", acqKey,
						"--provider-timeout", "1s", "--job-timeout", "2s", "--rescue-after", "3s"}
					if db.Name == "postgres" {
						args = append(args, "--database-url", storetest.NewPostgresDatabase(t))
					}
					crashOnce(t, bin, args, point, amount, ledger)
				})
			}
		})
	}
}

// crashOnce takes one payment through a crash at point and a restart.
func crashOnce(t *testing.T, bin string, args []string, point string, amount int64, ledger *sandbox.Adapter) {
	listening := `listening on (http://\S+)`
	cmd, out, url := spawn(t, bin, []string{"PAYGATE_CRASH_AT=" + point}, listening, args...)
	m := regexp.MustCompile(`access key\s+(ak_\S+)\s+secret\s+(sk_\S+)`).FindStringSubmatch(out.String())
	require.NotNil(t, m)
	c := client.New(url, m[1], m[2])
	var p openapi.Payment
	body := fmt.Sprintf(`{"order_id":"crash-%s","amount_minor":%d,"currency":"USD","customer":{"email":"a@b.example"},
		"payment_method":{"type":"card","card":{"number":"5555555555554444","expire_month":12,"expire_year":%d,"cvv":"123"}}}`,
		point, amount, time.Now().Year()+1)
	post := postThroughCrash(t, "/api/v1/payments/direct", body, &p)
	post(c)

	// The process kills itself at the point; wait for it to be gone.
	require.Error(t, cmd.Wait(), "the process was killed")

	_, _, url = spawn(t, bin, nil, listening, args...)
	c = client.New(url, m[1], m[2])
	post(c)
	require.Equal(t, "processing", p.Status)
	var got openapi.Payment
	require.Eventually(t, func() bool {
		got = openapi.Payment{}
		require.NoError(t, c.JSON(context.Background(), "GET", "/api/v1/payments/"+p.PaymentID, nil, &got))
		return got.Final
	}, 120*time.Second, 100*time.Millisecond)
	require.Equal(t, "succeeded", got.Status)

	entries, err := ledger.Ledger(context.Background())
	require.NoError(t, err)
	charges := 0
	for _, e := range entries {
		if e.Kind == acquirer.EntryCharge && e.AmountMinor == amount {
			charges++
		}
	}
	require.Equal(t, 1, charges, "exactly one charge for the payment")
}

// postThroughCrash returns a POST of body to target, decoded into out, to
// be sent before the crash and again after the restart with the same
// Idempotency-Key. The process runs an operation itself as soon as its
// transaction commits (internal/handoff), so a crash point before the
// provider call may come before the answer is written: the merchant's
// retry with the same key gets the stored answer. Once answered, it sends
// nothing more.
func postThroughCrash(t *testing.T, target, body string, out any) func(c *client.Client) {
	key, answered := uuid.NewString(), false
	return func(c *client.Client) {
		t.Helper()
		if answered {
			return
		}
		resp, err := c.Do(context.Background(), client.Request{Method: http.MethodPost, Target: target,
			Body: []byte(body), IdempotencyKey: key})
		if err != nil {
			return // the process died first: the next call sends it again
		}
		require.NoError(t, resp.Err())
		require.NoError(t, json.Unmarshal(resp.Body, out))
		answered = true
	}
}
