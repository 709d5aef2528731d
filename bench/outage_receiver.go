package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/paygate/paygate/internal/client"
	"github.com/paygate/paygate/internal/openapi"
)

// hookReceiver is a merchant's webhook endpoint in the bench process: while
// down it answers 503 to everything; while up it verifies each message
// with the endpoint's secret, as docs/webhooks.md tells merchants to (the
// signature over the raw body, a timestamp within 5 minutes of its clock,
// which is Paygate's moved clock), and records the event ids it took.
type hookReceiver struct {
	url  string
	clk  *outageClock
	http *http.Server
	done chan error

	mu   sync.Mutex
	hook *standardwebhooks.Webhook
	down bool
	seen hookCounts
	raw  strings.Builder // the headers and body of every message taken
}

// hookCounts is what a receiver saw.
type hookCounts struct {
	refused      int            // attempts answered 503 while down
	delivered    map[string]int // event id → messages taken (more than 1: duplicates)
	badSignature int            // refused: no valid signature, or a body of another id
	offClock     int            // refused: a timestamp more than 5 minutes off
}

// registerHookReceiver starts a receiver and registers it as an endpoint of
// cl's key, taking its secret to verify signatures with.
func registerHookReceiver(ctx context.Context, cl *client.Client, clk *outageClock) (*hookReceiver, openapi.CreatedWebhookEndpoint, error) {
	var ep openapi.CreatedWebhookEndpoint
	rcv, err := startHookReceiver(clk)
	if err != nil {
		return nil, ep, err
	}
	err = cl.JSON(ctx, "POST", "/api/v1/webhook-endpoints", openapi.CreateWebhookEndpoint{URL: rcv.url + "/hooks"}, &ep)
	if err == nil {
		err = rcv.setSecret(ep.Secret)
	}
	if err != nil {
		rcv.close()
		return nil, ep, fmt.Errorf("register the endpoint: %w", err)
	}
	return rcv, ep, nil
}

func startHookReceiver(clk *outageClock) (*hookReceiver, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &hookReceiver{url: "http://" + ln.Addr().String(), clk: clk, done: make(chan error, 1),
		seen: hookCounts{delivered: map[string]int{}}}
	r.http = &http.Server{Handler: r, ReadHeaderTimeout: 10 * time.Second}
	go func() { r.done <- r.http.Serve(ln) }()
	return r, nil
}

func (r *hookReceiver) setSecret(secret string) error {
	hook, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.hook = hook
	r.mu.Unlock()
	return nil
}

func (r *hookReceiver) setDown(down bool) {
	r.mu.Lock()
	r.down = down
	r.mu.Unlock()
}

// counts returns a copy of what the receiver saw so far.
func (r *hookReceiver) counts() hookCounts {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.seen
	c.delivered = maps.Clone(c.delivered)
	return c
}

// body is every message taken, headers and body, as text.
func (r *hookReceiver) body() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.raw.String()
}

func (r *hookReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	if err != nil {
		http.Error(w, "unreadable body", http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.down || r.hook == nil {
		r.seen.refused++
		http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
		return
	}
	id := req.Header.Get("webhook-id")
	var ev struct {
		ID string `json:"id"`
	}
	if r.hook.VerifyIgnoringTimestamp(body, req.Header) != nil || json.Unmarshal(body, &ev) != nil || ev.ID != id {
		r.seen.badSignature++
		http.Error(w, "bad signature", http.StatusBadRequest)
		return
	}
	sent, err := strconv.ParseInt(req.Header.Get("webhook-timestamp"), 10, 64)
	if err != nil || r.clk.now().Sub(time.Unix(sent, 0)).Abs() > 5*time.Minute {
		r.seen.offClock++
		http.Error(w, "timestamp too far from now", http.StatusBadRequest)
		return
	}
	r.seen.delivered[id]++
	for name, vs := range req.Header {
		fmt.Fprintf(&r.raw, "%s: %s\n", name, strings.Join(vs, ", "))
	}
	r.raw.Write(body)
	r.raw.WriteByte('\n')
	w.WriteHeader(http.StatusNoContent)
}

func (r *hookReceiver) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if r.http.Shutdown(ctx) != nil {
		r.http.Close()
	}
	<-r.done
}
