package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/paygate/paygate/internal/client"
	"github.com/paygate/paygate/internal/webhook"
)

// lookback is how far before the newest event seen listen asks again: an
// event's created_at is the moment of its change, and a transaction that
// began earlier can commit after a later one. Seen ids are skipped.
const lookback = 10 * time.Second

// listen follows a key's events through the API and forwards each one,
// signed per Standard Webhooks with a local secret, to a local URL: the
// merchant's endpoint runs on their machine without a public address
// (the way `stripe listen` is used).
func listen(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlagSet("listen", stderr)
	forward := fs.String("forward-to", "", "local URL the events are POSTed to, e.g. http://localhost:3000/hooks")
	secret := fs.String("secret", "", "signing secret (whsec_…); default: a new one, printed at start")
	types := fs.String("events", "", "comma-separated event types to forward; default all")
	every := fs.Duration("interval", time.Second, "how often to ask for new events")
	asJSON := fs.Bool("json", false, "print one JSON object per event")
	if err := fs.Parse(args); err != nil {
		return usageError{err.Error()}
	}
	if u, err := url.Parse(*forward); *forward == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || fs.NArg() > 0 {
		return usageError{"usage: paygate listen --forward-to http://localhost:3000/hooks [--secret whsec_…] [--events a,b] [--json]"}
	}
	if *secret == "" {
		*secret = webhook.NewSecret()
	} else if !webhook.ValidSecret(*secret) {
		return usageError{"--secret must be whsec_ and the base64 of 24 to 64 bytes"}
	}
	if *every <= 0 {
		return usageError{"--interval must be positive"}
	}
	c, err := apiClient(getenv)
	if err != nil {
		return err
	}
	l := &listener{api: c, forwardTo: *forward, secret: *secret, out: stdout, errOut: stderr, asJSON: *asJSON,
		http: &http.Client{Timeout: 10 * time.Second,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
		seen: map[string]time.Time{}}
	for _, t := range strings.Split(*types, ",") {
		if t = strings.TrimSpace(t); t != "" {
			l.types = append(l.types, t)
		}
	}
	// Only what happens from now on: the events already there are seen.
	if err := l.start(ctx); err != nil {
		return fmt.Errorf("read the key's events from %s: %w", c.BaseURL, err)
	}
	fmt.Fprintf(stderr, "Ready. Forwarding the events of %s from %s to %s\nSigning secret: %s (verify with it as with an endpoint's)\nStop with Ctrl-C.\n",
		c.AccessKey, c.BaseURL, *forward, *secret)
	tick := time.NewTicker(*every)
	defer tick.Stop()
	for {
		if err := l.poll(ctx, true); err != nil && ctx.Err() == nil {
			fmt.Fprintf(stderr, "paygate listen: %v (trying again)\n", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// apiClient is the client of PAYGATE_URL with PAYGATE_ACCESS_KEY's key.
func apiClient(getenv func(string) string) (*client.Client, error) {
	base, ak, sk := envOr(getenv, "PAYGATE_URL", "http://127.0.0.1:8080"), getenv("PAYGATE_ACCESS_KEY"), getenv("PAYGATE_SECRET")
	if ak == "" || sk == "" {
		return nil, usageError{"set PAYGATE_ACCESS_KEY and PAYGATE_SECRET (paygate serve prints them on first start)"}
	}
	return client.New(base, ak, sk), nil
}

// listener remembers what it has forwarded.
type listener struct {
	api       *client.Client
	http      *http.Client
	forwardTo string
	secret    string
	types     []string
	out       io.Writer
	errOut    io.Writer
	asJSON    bool
	newest    time.Time            // the newest created_at seen
	seen      map[string]time.Time // ids seen, by created_at
}

// item is what listen reads of an event; raw is the body as sent.
type item struct {
	ID        string    `json:"id"`
	Type      string    `json:"type"`
	CreatedAt time.Time `json:"created_at"`
	Data      struct {
		Object map[string]any `json:"object"`
	} `json:"data"`
	raw []byte
}

func (l *listener) start(ctx context.Context) error {
	evs, err := l.page(ctx, "?limit=1")
	if err != nil || len(evs) == 0 {
		return err
	}
	l.newest = evs[0].CreatedAt
	return l.poll(ctx, false)
}

// poll reads every event after newest-lookback, page by page, and forwards
// (or with forward false, only marks) those not seen yet.
func (l *listener) poll(ctx context.Context, forward bool) error {
	from := time.Unix(0, 0)
	if !l.newest.IsZero() {
		from = l.newest.Add(-lookback)
	}
	query := "?limit=100&since=" + url.QueryEscape(from.UTC().Format(time.RFC3339Nano))
	for {
		evs, err := l.page(ctx, query)
		if err != nil {
			return err
		}
		for _, ev := range evs {
			if _, ok := l.seen[ev.ID]; ok {
				continue
			}
			l.seen[ev.ID] = ev.CreatedAt
			if ev.CreatedAt.After(l.newest) {
				l.newest = ev.CreatedAt
			}
			if forward && (len(l.types) == 0 || slices.Contains(l.types, ev.Type)) {
				l.forward(ctx, ev)
			}
		}
		if len(evs) < 100 {
			break
		}
		query = "?limit=100&since=" + evs[len(evs)-1].ID
	}
	for id, at := range l.seen {
		if at.Before(l.newest.Add(-3 * lookback)) {
			delete(l.seen, id)
		}
	}
	return nil
}

func (l *listener) page(ctx context.Context, query string) ([]item, error) {
	resp, err := l.api.Do(ctx, client.Request{Method: "GET", Target: "/api/v1/events" + query})
	if err != nil {
		return nil, err
	}
	if err := resp.Err(); err != nil {
		return nil, err
	}
	var page struct {
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(resp.Body, &page); err != nil {
		return nil, err
	}
	out := make([]item, 0, len(page.Items))
	for _, raw := range page.Items {
		var it item
		if err := json.Unmarshal(raw, &it); err != nil {
			return nil, err
		}
		it.raw = raw
		out = append(out, it)
	}
	return out, nil
}

// forward POSTs one event, signed, and prints a line about it.
func (l *listener) forward(ctx context.Context, ev item) {
	status, errText := 0, ""
	now := time.Now()
	header, err := webhook.SignedHeaders([]string{l.secret}, ev.ID, now, ev.raw)
	if err == nil {
		var req *http.Request
		req, err = http.NewRequestWithContext(ctx, http.MethodPost, l.forwardTo, bytes.NewReader(ev.raw))
		if err == nil {
			for k, v := range header {
				req.Header.Set(k, v)
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("User-Agent", "Paygate-Listen/1")
			var resp *http.Response
			if resp, err = l.http.Do(req); err == nil {
				status = resp.StatusCode
				_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
				resp.Body.Close()
			}
		}
	}
	if err != nil {
		errText = err.Error()
	}
	rid := resourceID(ev.Data.Object)
	if l.asJSON {
		_ = json.NewEncoder(l.out).Encode(map[string]any{"time": now.UTC().Format(time.RFC3339), "id": ev.ID,
			"type": ev.Type, "resource_id": rid, "status": status, "error": errText})
		return
	}
	result := fmt.Sprintf("[%d]", status)
	if errText != "" {
		result = "error: " + errText
	}
	fmt.Fprintf(l.out, "%s  %-28s %s  -> %s\n", now.Format("2006-01-02 15:04:05"), ev.Type, rid, result)
}

// resourceID finds the id of the resource in an event's object.
func resourceID(obj map[string]any) string {
	for _, k := range []string{"payment_id", "payout_id", "verification_id", "subscription_id", "mandate_id", "id"} {
		if s, ok := obj[k].(string); ok && s != "" {
			return s
		}
	}
	return ""
}

// triggers are the event types `paygate trigger` can produce, and how: a
// sandbox test card (docs/design/decisions.md section 7) and what to do with
// the payment.
var triggers = map[string]struct {
	card, mode string
	cancel     bool // cancel once authorized
	hosted     bool // a hosted session, left unpaid
}{
	"payment.created":         {hosted: true},
	"payment.processing":      {card: "5555555555554444", mode: "charge"},
	"payment.succeeded":       {card: "5555555555554444", mode: "charge"},
	"payment.authorized":      {card: "5555555555554444", mode: "authorize"},
	"payment.canceled":        {card: "5555555555554444", mode: "authorize", cancel: true},
	"payment.declined":        {card: "4000000000000002", mode: "charge"},
	"payment.failed":          {card: "4000000000000119", mode: "charge"},
	"payment.requires_action": {card: "4000000000003220", mode: "charge"},
	"payment.manual_review":   {card: "4000000000000259", mode: "charge"},
}

// trigger creates the sandbox activity whose status changes produce an
// event type, through the API with the key of PAYGATE_ACCESS_KEY.
func trigger(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlagSet("trigger", stderr)
	var names []string
	for n := range triggers {
		names = append(names, n)
	}
	slices.Sort(names)
	fs.Usage = func() {
		printUsage(fs)
		fmt.Fprintln(fs.Output(), "\nEvent types:")
		for _, n := range names {
			fmt.Fprintln(fs.Output(), "  "+n)
		}
	}
	if err := fs.Parse(args); err != nil {
		return usageError{err.Error()}
	}
	if fs.NArg() != 1 {
		return usageError{"usage: paygate trigger EVENT_TYPE, one of " + strings.Join(names, ", ")}
	}
	how, ok := triggers[fs.Arg(0)]
	if !ok {
		return usageError{fmt.Sprintf("cannot trigger %q; try one of %s", fs.Arg(0), strings.Join(names, ", "))}
	}
	c, err := apiClient(getenv)
	if err != nil {
		return err
	}
	now, err := keyNow(ctx, c)
	if err != nil {
		return err
	}
	order := fmt.Sprintf("trigger-%d", time.Now().UnixNano())
	customer := `"customer":{"first_name":"Ada","last_name":"Lovelace","email":"ada@example.com",
		"billing_address":{"country":"GB","line1":"1 Street"}}`
	var p struct {
		PaymentID string `json:"payment_id"`
		Status    string `json:"status"`
	}
	if how.hosted {
		body := fmt.Sprintf(`{"order_id":%q,"amount_minor":1999,"currency":"USD",%s}`, order, customer)
		err = c.JSON(ctx, "POST", "/api/v1/payment-sessions", json.RawMessage(body), &p)
	} else {
		body := fmt.Sprintf(`{"order_id":%q,"amount_minor":1999,"currency":"USD","operation_mode":%q,%s,
			"payment_method":{"type":"card","card":{"number":%q,"expire_month":12,"expire_year":%d,"cvv":"123"}}}`,
			order, how.mode, customer, how.card, now.Year()+2)
		err = c.JSON(ctx, "POST", "/api/v1/payments/direct", json.RawMessage(body), &p)
	}
	if err != nil {
		return err
	}
	if how.cancel {
		if err := waitStatus(ctx, c, p.PaymentID, "authorized"); err != nil {
			return err
		}
		if err := c.JSON(ctx, "POST", "/api/v1/payments/"+p.PaymentID+"/cancel", nil, &p); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "Triggered %s: payment %s (%s now); its events follow.\n", fs.Arg(0), p.PaymentID, p.Status)
	return nil
}

// keyNow is the time by the key's clock: a sandbox key's clock may run
// years ahead (docs/subscriptions.md), and a card must not have expired by
// it. A key without one (production: 404) runs on real time.
func keyNow(ctx context.Context, c *client.Client) (time.Time, error) {
	var clk struct {
		Now time.Time `json:"now"`
	}
	err := c.JSON(ctx, "GET", "/api/v1/sandbox/clock", nil, &clk)
	var apiErr *client.Error
	if errors.As(err, &apiErr) && apiErr.Status == http.StatusNotFound {
		return time.Now(), nil
	}
	if err != nil {
		return time.Time{}, err
	}
	return clk.Now, nil
}

// waitStatus polls a payment until it reaches status (at most 30 s).
func waitStatus(ctx context.Context, c *client.Client, id, status string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		var p struct {
			Status string `json:"status"`
		}
		if err := c.JSON(ctx, "GET", "/api/v1/payments/"+id, nil, &p); err != nil {
			return err
		}
		if p.Status == status {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("payment %s did not become %s (it is %s)", id, status, p.Status)
		case <-time.After(200 * time.Millisecond):
		}
	}
}
