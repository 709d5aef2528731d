package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/paygate/paygate/internal/client"
)

// finalTypes are the events the receiver subscribes to: a payment's outcome.
var finalTypes = []string{"payment.succeeded", "payment.declined", "payment.failed"}

// receiver is a merchant's webhook endpoint on loopback in the bench
// process. It checks every delivery's signature and notes when each
// payment's outcome first arrived.
type receiver struct {
	srv  *http.Server
	url  string
	wh   *standardwebhooks.Webhook
	mu   sync.Mutex
	outc map[string]receivedOutcome // payment id → its first outcome delivery
	// deliveries counts every POST, bad those refused (bad signature or body).
	deliveries, bad int
}

type receivedOutcome struct {
	typ string
	at  time.Time
}

func startReceiver() (*receiver, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &receiver{url: "http://" + ln.Addr().String() + "/hooks/paygate", outc: map[string]receivedOutcome{}}
	r.srv = &http.Server{Handler: r, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = r.srv.Serve(ln) }()
	return r, nil
}

func (r *receiver) close() { _ = r.srv.Close() }

// register adds the receiver as a webhook endpoint of the client's key.
func (r *receiver) register(ctx context.Context, cl *client.Client) error {
	var ep struct {
		Secret string `json:"secret"`
	}
	in := map[string]any{"url": r.url, "event_types": finalTypes}
	if err := cl.JSON(ctx, "POST", "/api/v1/webhook-endpoints", in, &ep); err != nil {
		return fmt.Errorf("register the webhook receiver: %w", err)
	}
	wh, err := standardwebhooks.NewWebhook(ep.Secret)
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.wh = wh
	r.mu.Unlock()
	return nil
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.deliveries++
	var ev struct {
		Type string `json:"type"`
		Data struct {
			Object struct {
				PaymentID string `json:"payment_id"`
			} `json:"object"`
		} `json:"data"`
	}
	if err != nil || r.wh == nil || r.wh.Verify(body, req.Header) != nil || json.Unmarshal(body, &ev) != nil {
		r.bad++
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	if _, seen := r.outc[ev.Data.Object.PaymentID]; !seen {
		r.outc[ev.Data.Object.PaymentID] = receivedOutcome{typ: ev.Type, at: now}
	}
	w.WriteHeader(http.StatusNoContent)
}

// completion is how the payments of a run ended, as delivered.
type completion struct {
	delivered  int // payments whose outcome was delivered
	succeeded  int
	last       time.Time // the last of those deliveries
	deliveries int
	bad        int
}

// wait waits until every payment of ids has had its outcome delivered, or
// timeout passes, and reports what arrived.
func (r *receiver) wait(ctx context.Context, ids []string, timeout time.Duration) (completion, error) {
	deadline := time.Now().Add(timeout)
	for {
		r.mu.Lock()
		c := completion{deliveries: r.deliveries, bad: r.bad}
		for _, id := range ids {
			o, ok := r.outc[id]
			if !ok {
				continue
			}
			c.delivered++
			if o.typ == "payment.succeeded" {
				c.succeeded++
			}
			if o.at.After(c.last) {
				c.last = o.at
			}
		}
		r.mu.Unlock()
		if c.delivered == len(ids) {
			return c, nil
		}
		if time.Now().After(deadline) {
			return c, fmt.Errorf("%d of %d payments' outcomes delivered within %s", c.delivered, len(ids), timeout)
		}
		select {
		case <-ctx.Done():
			return c, ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}
