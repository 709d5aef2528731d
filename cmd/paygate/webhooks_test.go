package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/app"
	"github.com/paygate/paygate/internal/client"
	"github.com/paygate/paygate/internal/merchant"
	"github.com/paygate/paygate/internal/openapi"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/store"
	"github.com/paygate/paygate/internal/store/storetest"
	"github.com/paygate/paygate/internal/webhook"
)

// hook is a merchant's endpoint on the test machine. While held, requests
// wait (in flight) until released; afterwards each is answered 200.
type hook struct {
	*httptest.Server
	mu      sync.Mutex
	got     []hookRequest
	held    int
	release chan struct{}
}

type hookRequest struct {
	header  http.Header
	body    []byte
	event   openapi.Event
	late    bool // arrived after release
	payment string
}

func newHook(t *testing.T, hold bool) *hook {
	h := &hook{release: make(chan struct{})}
	if !hold {
		close(h.release)
	}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		req := hookRequest{header: r.Header.Clone(), body: body}
		_ = json.Unmarshal(body, &req.event)
		var obj struct {
			PaymentID string `json:"payment_id"`
		}
		_ = json.Unmarshal(req.event.Data.Object, &obj)
		req.payment = obj.PaymentID
		h.mu.Lock()
		select {
		case <-h.release:
			req.late = true
		default:
			h.held++
		}
		h.got = append(h.got, req)
		h.mu.Unlock()
		select {
		case <-h.release:
		case <-r.Context().Done():
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(h.Close)
	t.Cleanup(h.open)
	return h
}

func (h *hook) open() {
	h.mu.Lock()
	defer h.mu.Unlock()
	select {
	case <-h.release:
	default:
		close(h.release)
	}
}

func (h *hook) requests() []hookRequest {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]hookRequest(nil), h.got...)
}

// find waits (up to 60 s) for a request matching ok.
func (h *hook) find(t *testing.T, ok func(hookRequest) bool) hookRequest {
	t.Helper()
	var found hookRequest
	require.Eventually(t, func() bool {
		for _, r := range h.requests() {
			if ok(r) {
				found = r
				return true
			}
		}
		return false
	}, 60*time.Second, 20*time.Millisecond)
	return found
}

func verifies(t *testing.T, secret string, r hookRequest) {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(secret)
	require.NoError(t, err)
	require.NoError(t, wh.Verify(r.body, r.header))
}

var triggered = regexp.MustCompile(`payment ([0-9a-f-]{36})`)

func TestWebhooksCommand(t *testing.T) {
	for _, db := range storetest.Databases(t) {
		t.Run(db.Name, func(t *testing.T) {
			env := dbEnv(t, db, t.TempDir())
			srv := start(t, env)
			api := map[string]string{"PAYGATE_URL": srv.url, "PAYGATE_ACCESS_KEY": srv.accessKey, "PAYGATE_SECRET": srv.secret}
			h := newHook(t, false)

			out, err := cli(t, env, "webhooks", "add", "--key", srv.accessKey, "--url", h.URL+"/hooks",
				"--event-types", "payment.succeeded,payment.declined", "--json")
			require.NoError(t, err)
			var added struct {
				ID         string   `json:"id"`
				Secret     string   `json:"secret"`
				EventTypes []string `json:"event_types"`
			}
			require.NoError(t, json.Unmarshal([]byte(out), &added))
			require.Equal(t, []string{"payment.succeeded", "payment.declined"}, added.EventTypes)
			out, err = cli(t, env, "webhooks", "list")
			require.NoError(t, err)
			require.Contains(t, out, added.ID)
			require.Contains(t, out, "payment.succeeded,payment.declined")
			require.NotContains(t, out, added.Secret)

			out, err = cli(t, api, "trigger", "payment.succeeded")
			require.NoError(t, err)
			pay := triggered.FindStringSubmatch(out)[1]
			r := h.find(t, func(r hookRequest) bool { return r.payment == pay && r.event.Type == "payment.succeeded" })
			verifies(t, added.Secret, r)
			require.Equal(t, r.event.ID, r.header.Get("webhook-id"))

			out, err = cli(t, env, "webhooks", "rotate-secret", added.ID, "--overlap", "1h", "--json")
			require.NoError(t, err)
			var rotated struct {
				Secret string `json:"secret"`
			}
			require.NoError(t, json.Unmarshal([]byte(out), &rotated))
			out, err = cli(t, env, "webhooks", "list")
			require.NoError(t, err)
			require.Contains(t, out, "old secret signs until")
			out, err = cli(t, api, "trigger", "payment.declined")
			require.NoError(t, err)
			pay = triggered.FindStringSubmatch(out)[1]
			r = h.find(t, func(r hookRequest) bool { return r.payment == pay && r.event.Type == "payment.declined" })
			verifies(t, added.Secret, r)
			verifies(t, rotated.Secret, r)

			_, err = cli(t, env, "webhooks", "remove", added.ID)
			require.NoError(t, err)
			out, err = cli(t, env, "webhooks", "list", "--key", srv.accessKey, "--json")
			require.NoError(t, err)
			require.Equal(t, "[]\n", out)

			var u usageError
			_, err = cli(t, env, "webhooks", "add", "--url", h.URL)
			require.True(t, errors.As(err, &u), "no --key: %v", err)
			_, err = cli(t, env, "webhooks", "remove", added.ID)
			require.ErrorContains(t, err, "no webhook endpoint")
			_, err = cli(t, env, "webhooks", "remove", uuid.NewString())
			require.ErrorContains(t, err, "no webhook endpoint")
			_, err = cli(t, env, "webhooks", "add", "--key", srv.accessKey, "--url", "ftp://x.example/")
			require.ErrorContains(t, err, "url")
			_, err = cli(t, api, "trigger", "payment.exploded")
			require.True(t, errors.As(err, &u))
		})
	}
}

// TestWebhooksSurviveSIGKILL: the real binary is killed while deliveries
// are in flight (the endpoint holds every request); after a restart every
// event reaches the endpoint, and no delivery is left behind.
func TestWebhooksSurviveSIGKILL(t *testing.T) {
	t.Parallel() // mostly waits (restarts, River's rescue window): runs beside the other binary tests
	if testing.Short() {
		t.Skip("builds and kills the binary")
	}
	bin := buildBinary(t)
	for _, db := range storetest.Databases(t) {
		t.Run(db.Name, func(t *testing.T) {
			args := []string{"serve", "--addr", "127.0.0.1:0", "--data-dir", t.TempDir(), "--rescue-after", "3s", "--job-timeout", "2s",
				"--provider-timeout", "1s", "--webhook-timeout", "2s"}
			if db.Name == "postgres" {
				args = append(args, "--database-url", storetest.NewPostgresDatabase(t))
			}
			listening := `listening on (http://\S+)`
			cmd, out, url := spawn(t, bin, nil, listening, args...)
			m := regexp.MustCompile(`access key\s+(ak_\S+)\s+secret\s+(sk_\S+)`).FindStringSubmatch(out.String())
			require.NotNil(t, m)
			c := client.New(url, m[1], m[2])
			h := newHook(t, true)
			var ep openapi.CreatedWebhookEndpoint
			require.NoError(t, c.JSON(context.Background(), "POST", "/api/v1/webhook-endpoints",
				openapi.CreateWebhookEndpoint{URL: h.URL}, &ep))
			for i := range 8 {
				body := fmt.Sprintf(`{"order_id":"kill-%d","amount_minor":%d,"currency":"USD","customer":{"email":"a@b.example"},
					"payment_method":{"type":"card","card":{"number":"5555555555554444","expire_month":12,"expire_year":%d,"cvv":"123"}}}`,
					i, 100+i, time.Now().Year()+1)
				require.NoError(t, c.JSON(context.Background(), "POST", "/api/v1/payments/direct", json.RawMessage(body), nil))
			}
			require.Eventually(t, func() bool {
				h.mu.Lock()
				defer h.mu.Unlock()
				return h.held >= 4
			}, 60*time.Second, 20*time.Millisecond, "deliveries in flight")
			require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
			_ = cmd.Wait()
			h.open()

			_, _, url = spawn(t, bin, nil, listening, args...)
			c = client.New(url, m[1], m[2])
			var events []openapi.Event
			require.Eventually(t, func() bool {
				events = allEvents(t, c)
				if len(events) < 16 {
					return false // every payment's processing and succeeded
				}
				for _, ev := range events {
					var d openapi.EventDetails
					require.NoError(t, c.JSON(context.Background(), "GET", "/api/v1/events/"+ev.ID, nil, &d))
					if len(d.Deliveries) != 1 || d.Deliveries[0].Status != "succeeded" {
						return false
					}
				}
				return true
			}, 120*time.Second, 100*time.Millisecond, "every event delivered after the restart")
			for _, ev := range events {
				r := h.find(t, func(r hookRequest) bool { return r.late && r.header.Get("webhook-id") == ev.ID })
				verifies(t, ep.Secret, r)
			}
		})
	}
}

func allEvents(t *testing.T, c *client.Client) []openapi.Event {
	var out []openapi.Event
	query := "?limit=100"
	for {
		var page openapi.EventList
		require.NoError(t, c.JSON(context.Background(), "GET", "/api/v1/events"+query, nil, &page))
		out = append(out, page.Items...)
		if page.NextCursor == nil {
			return out
		}
		query = "?limit=100&cursor=" + *page.NextCursor
	}
}

// TestMeasureWebhooks measures, with serve's wiring (River polling every
// 100 ms, 20 webhook workers) and a local receiver that answers at once,
// the delay from an event's commit to its first attempt on an idle system,
// and deliveries per second for a burst of events. Run by hand:
//
//	PAYGATE_MEASURE_WEBHOOKS=1 go test ./cmd/paygate -run TestMeasureWebhooks -v
func TestMeasureWebhooks(t *testing.T) {
	if os.Getenv("PAYGATE_MEASURE_WEBHOOKS") == "" {
		t.Skip("set PAYGATE_MEASURE_WEBHOOKS=1 to measure")
	}
	for _, db := range storetest.Databases(t) {
		t.Run(db.Name, func(t *testing.T) {
			ctx := context.Background()
			flags := dbFlags{dataDir: t.TempDir(), environment: "sandbox", logLevel: "error"}
			if db.Name == "postgres" {
				flags.databaseURL = storetest.NewPostgresDatabase(t)
			}
			a, err := flags.open(ctx, io.Discard)
			require.NoError(t, err)
			defer a.close()
			var mu sync.Mutex
			arrived := map[string]time.Time{}
			signal := make(chan struct{}, 1)
			rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				mu.Lock()
				if _, ok := arrived[r.Header.Get("webhook-id")]; !ok {
					arrived[r.Header.Get("webhook-id")] = time.Now()
				}
				mu.Unlock()
				select {
				case signal <- struct{}{}:
				default:
				}
			}))
			defer rc.Close()
			cfg := a.config(provider.Registry{})
			cfg.Work = true
			p, err := app.New(cfg)
			require.NoError(t, err)
			k, err := p.Merchants.Create(ctx, merchant.NewKey{Name: "measure"})
			require.NoError(t, err)
			_, _, err = p.Webhooks.Create(ctx, a.store, k.Key.ID, webhook.NewEndpoint{URL: rc.URL})
			require.NoError(t, err)
			require.NoError(t, p.Start(ctx))
			defer p.Stop(ctx)
			record := func(n int) []string {
				var ids []string
				require.NoError(t, a.store.InTx(ctx, func(tx *store.Tx) error {
					for range n {
						ev := webhook.Event{ID: newID(), AccessKeyID: k.Key.ID, Type: "payment.succeeded", ResourceType: "payment",
							ResourceID: newID(), Object: []byte(`{"payment_id":"x","status":"succeeded"}`), CreatedAt: a.now()}
						if err := webhook.Record(ctx, tx, ev); err != nil {
							return err
						}
						ids = append(ids, ev.ID)
					}
					return nil
				}))
				return ids
			}
			waitAll := func(ids []string) time.Time {
				deadline := time.After(120 * time.Second)
				for {
					mu.Lock()
					var last time.Time
					all := true
					for _, id := range ids {
						at, ok := arrived[id]
						if !ok {
							all = false
							break
						}
						if at.After(last) {
							last = at
						}
					}
					mu.Unlock()
					if all {
						return last
					}
					select {
					case <-signal:
					case <-time.After(50 * time.Millisecond):
					case <-deadline:
						t.Fatal("deliveries did not arrive")
					}
				}
			}

			var delays []time.Duration
			for range 40 {
				committed := time.Now()
				ids := record(1)
				delays = append(delays, waitAll(ids).Sub(committed))
				time.Sleep(150 * time.Millisecond) // idle between samples, not synchronisation
			}
			slices.Sort(delays)
			t.Logf("%s: commit to first attempt over %d events: p50 %s, p90 %s, max %s", db.Name, len(delays),
				delays[len(delays)/2].Round(time.Millisecond), delays[len(delays)*9/10].Round(time.Millisecond),
				delays[len(delays)-1].Round(time.Millisecond))

			const burst, batch = 2000, 100
			start := time.Now()
			var ids []string
			for range burst / batch {
				ids = append(ids, record(batch)...)
			}
			committed := time.Since(start)
			last := waitAll(ids)
			t.Logf("%s: %d events committed in %s; all delivered after %s: %.0f deliveries/s", db.Name, burst,
				committed.Round(time.Millisecond), last.Sub(start).Round(time.Millisecond),
				float64(burst)/last.Sub(start).Seconds())
		})
	}
}
