package acquirer

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/sandbox"
	"github.com/paygate/paygate/internal/provider/sandbox/wire"
)

// clock is the injected Config.Now: tests move it instead of waiting.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2030, 1, 15, 12, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// exchange is one request and answer as the adapter's client saw them.
type exchange struct {
	url, reqBody, respBody string
}

// recorder is a RoundTripper that keeps every exchange, to check that card
// data never shows up in a URL or an answer.
type recorder struct {
	mu   sync.Mutex
	seen []exchange
}

func (rec *recorder) RoundTrip(r *http.Request) (*http.Response, error) {
	var reqBody []byte
	if r.Body != nil {
		reqBody, _ = io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(reqBody))
	}
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	rec.mu.Lock()
	rec.seen = append(rec.seen, exchange{r.URL.String(), string(reqBody), string(body)})
	rec.mu.Unlock()
	return resp, err
}

func (rec *recorder) exchanges() []exchange {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]exchange(nil), rec.seen...)
}

// env is a sandbox on a real socket with an adapter talking to it.
type env struct {
	t     *testing.T
	clock *clock
	run   *Running
	srv   *Server
	a     *sandbox.Adapter
	rec   *recorder
	// pages is a payer's browser that does not follow redirects, so tests
	// see each 303.
	pages *http.Client
}

func newEnv(t *testing.T, opts ...func(*Config)) *env {
	t.Helper()
	clk := newClock()
	cfg := Config{APIKey: "sk_test_sandbox", Now: clk.Now, MaxHang: 10 * time.Second}
	for _, o := range opts {
		o(&cfg)
	}
	run, err := Start(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, run.Close()) })
	rec := &recorder{}
	return &env{
		t: t, clock: clk, run: run, srv: run.Server, rec: rec,
		a: sandbox.NewAdapter(run.URL, run.APIKey, &http.Client{Transport: rec, Timeout: 5 * time.Second}),
		pages: &http.Client{Timeout: 5 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		}},
	}
}

func op() string { return "op_" + uuid.NewString() }

func testCard(number string) *provider.Card {
	return &provider.Card{Number: number, ExpMonth: 12, ExpYear: 2032, CVV: "987", Holder: "Ada Lovelace"}
}

func payReq(number string) provider.PayRequest {
	return provider.PayRequest{OperationID: op(), AmountMinor: 1999, Currency: "USD", OrderID: "order-1",
		Instrument: provider.Instrument{Card: testCard(number)}, Locale: "en"}
}

func (e *env) pay(r provider.PayRequest) provider.PayResult {
	e.t.Helper()
	res, err := e.a.Pay(context.Background(), r)
	require.NoError(e.t, err)
	return res
}

// kind asserts err is a *provider.Error of kind k.
func kind(t *testing.T, err error, k provider.ErrorKind) {
	t.Helper()
	require.Error(t, err)
	require.Equal(t, k, provider.KindOf(err), "error: %v", err)
}

// raw sends a request straight to the sandbox's API, as a foreign client.
func (e *env) raw(method, path, key, profile, body string) (*http.Response, string) {
	e.t.Helper()
	req, err := http.NewRequest(method, e.run.URL+path, strings.NewReader(body))
	require.NoError(e.t, err)
	req.Header.Set("Authorization", "Bearer "+e.run.APIKey)
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	if profile != "" {
		req.Header.Set(wire.ProfileHeader, profile)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(e.t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// get fetches a page as a payer.
func (e *env) get(u string) (*http.Response, string) {
	e.t.Helper()
	resp, err := e.pages.Get(u)
	require.NoError(e.t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// submit posts a page's form as a payer.
func (e *env) submit(u string, form url.Values) (*http.Response, string) {
	e.t.Helper()
	resp, err := e.pages.PostForm(u, form)
	require.NoError(e.t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func errCode(t *testing.T, body string) string {
	t.Helper()
	var v wire.ErrorView
	require.NoError(t, json.Unmarshal([]byte(body), &v), body)
	return v.Error.Code
}
