package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/client"
	"github.com/paygate/paygate/internal/openapi"
)

// TestListen: paygate listen forwards the events that happen after it
// starts, signed with its secret, and prints a line for each.
func TestListen(t *testing.T) {
	env := map[string]string{"PAYGATE_DATA_DIR": t.TempDir()}
	srv := start(t, env)
	api := map[string]string{"PAYGATE_URL": srv.url, "PAYGATE_ACCESS_KEY": srv.accessKey, "PAYGATE_SECRET": srv.secret}
	out, err := cli(t, api, "trigger", "payment.succeeded")
	require.NoError(t, err)
	before := triggered.FindStringSubmatch(out)[1]
	c := client.New(srv.url, srv.accessKey, srv.secret)
	require.Eventually(t, func() bool {
		var page openapi.EventList
		require.NoError(t, c.JSON(context.Background(), "GET", "/api/v1/events?type=payment.succeeded&resource_id="+before, nil, &page))
		return len(page.Items) == 1
	}, 30*time.Second, 20*time.Millisecond)

	h := newHook(t, false)
	secret := "whsec_" + strings.Repeat("QUJD", 8)
	ctx, cancel := context.WithCancel(context.Background())
	lines, ready := newOutput(`(payment\.succeeded\s+\S+\s+-> \[200\])`), newOutput(`(Ready)`)
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"listen", "--forward-to", h.URL + "/hooks", "--secret", secret, "--interval", "50ms"},
			getenvFrom(api), nil, lines, ready)
	}()
	select {
	case <-ready.found:
	case err := <-done:
		t.Fatalf("listen ended: %v\n%s", err, ready.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("listen did not start:\n%s", ready.String())
	}
	out, err = cli(t, api, "trigger", "payment.succeeded")
	require.NoError(t, err)
	pay := triggered.FindStringSubmatch(out)[1]
	select {
	case <-lines.found:
	case <-time.After(60 * time.Second):
		t.Fatalf("no line for payment.succeeded:\n%s", lines.String())
	}
	require.Contains(t, lines.String(), pay)
	for _, r := range h.requests() {
		require.NotEqual(t, before, r.payment, "only events after the start")
		verifies(t, secret, r)
	}
	succeeded := h.find(t, func(r hookRequest) bool { return r.payment == pay && r.event.Type == "payment.succeeded" })
	require.Equal(t, succeeded.event.ID, succeeded.header.Get("webhook-id"))
	cancel()
	require.NoError(t, <-done)
}

// TestTriggerAtAnyClock: trigger picks the card's expiry by the key's
// clock, so it works after the clock has moved years ahead (the README's
// subscriptions walk-through moves it to 2030).
func TestTriggerAtAnyClock(t *testing.T) {
	env := map[string]string{"PAYGATE_DATA_DIR": t.TempDir()}
	srv := start(t, env)
	api := map[string]string{"PAYGATE_URL": srv.url, "PAYGATE_ACCESS_KEY": srv.accessKey, "PAYGATE_SECRET": srv.secret}
	c := client.New(srv.url, srv.accessKey, srv.secret)
	for range 2 { // five years at most a call
		require.NoError(t, c.JSON(context.Background(), "POST", "/api/v1/sandbox/clock/advance",
			json.RawMessage(`{"seconds":126144000}`), nil))
	}
	out, err := cli(t, api, "trigger", "payment.succeeded")
	require.NoError(t, err)
	require.Regexp(t, triggered, out)
}
