// Package client is a Go client for Paygate's API: it signs every request
// (docs/design/decisions.md section 1) and gives every POST an
// Idempotency-Key, reusing it when it retries, so a retry never does the work
// twice. `paygate call` and the end-to-end tests use it.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/paygate/paygate/internal/signature"
)

// Client calls one Paygate with one key.
type Client struct {
	BaseURL   string // e.g. http://127.0.0.1:8080
	AccessKey string
	Secret    string
	HTTP      *http.Client
	// Now is the clock used for X-Timestamp (tests move it).
	Now func() time.Time
	// Retries is how often a request is sent again after a network error or
	// an answer marked retryable (409 in progress, 429, 500, 503). Zero: once.
	Retries int
	// MaxRetryWait bounds how long a retry waits for an answer's
	// Retry-After: an answer that asks for longer (a card's fourth
	// verification of a day asks for 86400 s) is returned as it is, not
	// retried. Zero: no bound.
	MaxRetryWait time.Duration
	// OnRetry, when set, is told before each retry how long it waits and
	// why (the answer's status and code, or the network error).
	OnRetry func(wait time.Duration, why string)
}

// New returns a client with a 30 s timeout and two retries.
func New(baseURL, accessKey, secret string) *Client {
	return &Client{BaseURL: strings.TrimRight(baseURL, "/"), AccessKey: accessKey, Secret: secret,
		HTTP: &http.Client{Timeout: 30 * time.Second}, Now: time.Now, Retries: 2}
}

// Request is one call.
type Request struct {
	Method string
	Target string // path and query, e.g. /api/v1/cards/information?bin=42424242
	Body   []byte
	// IdempotencyKey for a POST; empty: a new random one (kept across retries).
	IdempotencyKey string
	Header         http.Header // extra headers
}

// Response is the server's answer.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// Replayed reports whether the answer is a stored one
// (docs/design/decisions.md section 2).
func (r *Response) Replayed() bool { return r.Header.Get("Idempotent-Replayed") == "true" }

// Error is an API error answer.
type Error struct {
	Status    int
	Code      string         `json:"code"`
	Message   string         `json:"message"`
	Field     *string        `json:"field"`
	RequestID string         `json:"request_id"`
	Retryable bool           `json:"retryable"`
	Details   map[string]any `json:"details"`
}

func (e *Error) Error() string {
	field := ""
	if e.Field != nil {
		field = " (" + *e.Field + ")"
	}
	return fmt.Sprintf("%d %s: %s%s", e.Status, e.Code, e.Message, field)
}

// Err returns the answer as an *Error when it is not a 2xx, else nil.
func (r *Response) Err() error {
	if r.Status >= 200 && r.Status < 300 {
		return nil
	}
	var env struct {
		Error *Error `json:"error"`
	}
	if json.Unmarshal(r.Body, &env) != nil || env.Error == nil {
		return &Error{Status: r.Status, Code: "unexpected_answer", Message: http.StatusText(r.Status)}
	}
	env.Error.Status = r.Status
	return env.Error
}

func (r Request) hasBody() bool { return len(r.Body) > 0 }

// Do sends the request, signed, retrying with the same Idempotency-Key.
func (c *Client) Do(ctx context.Context, req Request) (*Response, error) {
	req.Method = strings.ToUpper(req.Method)
	if req.Method == http.MethodPost && req.IdempotencyKey == "" {
		req.IdempotencyKey = uuid.NewString()
	}
	var (
		lastErr error
		wait    time.Duration // the Retry-After of the last answer
	)
	for attempt := 0; attempt <= c.Retries; attempt++ {
		if attempt > 0 {
			if err := sleep(ctx, wait+backoff(attempt)); err != nil {
				return nil, err
			}
		}
		wait = 0
		resp, err := c.once(ctx, req)
		if err != nil {
			if ctx.Err() != nil {
				return nil, err
			}
			lastErr = err
			c.retrying(attempt, backoff(attempt+1), err.Error())
			continue
		}
		apiErr, isErr := resp.Err().(*Error)
		if isErr && apiErr.Code == "nonce_reused" && !req.hasBody() && attempt < c.Retries {
			// Every attempt has a fresh nonce, so this was net/http resending
			// a GET on a broken connection after the server took the first
			// copy. A read can simply be asked again.
			lastErr = apiErr
			continue
		}
		if isErr && apiErr.Retryable && attempt < c.Retries {
			if d, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && d > 0 {
				wait = time.Duration(d) * time.Second
			}
			if c.MaxRetryWait > 0 && wait > c.MaxRetryWait {
				return resp, nil // not worth waiting for: the caller sees the answer
			}
			lastErr = apiErr
			c.retrying(attempt, wait+backoff(attempt+1), fmt.Sprintf("%d %s", resp.Status, apiErr.Code))
			continue
		}
		return resp, nil
	}
	return nil, lastErr
}

// retrying tells OnRetry of the retry after attempt, if there is one.
func (c *Client) retrying(attempt int, wait time.Duration, why string) {
	if c.OnRetry != nil && attempt < c.Retries {
		c.OnRetry(wait, why)
	}
}

func (c *Client) once(ctx context.Context, req Request) (*Response, error) {
	var body io.Reader
	if len(req.Body) > 0 {
		body = bytes.NewReader(req.Body)
	}
	r, err := http.NewRequestWithContext(ctx, req.Method, c.BaseURL+req.Target, body)
	if err != nil {
		return nil, err
	}
	for k, vs := range req.Header {
		for _, v := range vs {
			r.Header.Add(k, v)
		}
	}
	if len(req.Body) > 0 && r.Header.Get("Content-Type") == "" {
		r.Header.Set("Content-Type", "application/json")
	}
	if req.IdempotencyKey != "" {
		r.Header.Set("Idempotency-Key", req.IdempotencyKey)
	}
	c.Sign(r, req.Body)
	// net/http resends a request with an Idempotency-Key by itself when a
	// reused connection breaks, with the same nonce: the server may have
	// taken the first copy and would refuse the second as a replay. Only
	// Do's own retries resend, each signed afresh.
	r.GetBody = nil
	resp, err := c.HTTP.Do(r)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	return &Response{Status: resp.StatusCode, Header: resp.Header, Body: b}, nil
}

// Sign adds the four signature headers to r, whose body is body. The target
// signed is r.URL.RequestURI(), what net/http sends.
func (c *Client) Sign(r *http.Request, body []byte) {
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	ts := strconv.FormatInt(now().Unix(), 10)
	nonce := signature.NewNonce()
	canonical := signature.Canonical(r.Method, r.URL.RequestURI(), c.AccessKey, ts, nonce, body)
	r.Header.Set(signature.HeaderAccessKey, c.AccessKey)
	r.Header.Set(signature.HeaderTimestamp, ts)
	r.Header.Set(signature.HeaderNonce, nonce)
	r.Header.Set(signature.HeaderSignature, signature.Sign(c.Secret, canonical))
}

// JSON sends in (nil for no body) and decodes a 2xx answer into out (may be
// nil). A non-2xx answer is returned as *Error.
func (c *Client) JSON(ctx context.Context, method, target string, in, out any) error {
	var body []byte
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			return err
		}
	}
	resp, err := c.Do(ctx, Request{Method: method, Target: target, Body: body})
	if err != nil {
		return err
	}
	if err := resp.Err(); err != nil {
		return err
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(resp.Body, out)
}

// IsCode reports whether err is an API error with that code.
func IsCode(err error, code string) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == code
}

func backoff(attempt int) time.Duration {
	return time.Duration(200*(1<<(attempt-1))) * time.Millisecond
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
