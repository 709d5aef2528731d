package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"time"

	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/sandbox/wire"
)

// maxAnswer bounds what the adapter reads of an answer.
const maxAnswer = 1 << 20

// do sends one request to the sandbox and decodes a 2xx answer into out.
// Every other outcome becomes a *provider.Error whose kind says what
// Paygate may do next (provider.ErrorKind). Card data travels only in the
// JSON body; paths carry ids; nothing here logs.
func (a *Adapter) do(ctx context.Context, method, path, profile, key string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return &provider.Error{Kind: provider.Invalid, Message: "cannot encode the request", Err: err}
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, a.base+path, body)
	if err != nil {
		return &provider.Error{Kind: provider.Invalid, Message: "cannot build the request", Err: err}
	}
	h := req.Header
	h.Set("Authorization", "Bearer "+a.key)
	h.Set("Accept", "application/json")
	h.Set("User-Agent", "paygate-sandbox-adapter")
	if in != nil {
		h.Set("Content-Type", "application/json")
	}
	if key != "" {
		// Paygate's operation id is the idempotency key (provider.go), and
		// net/http retries a request with this header on a stale keep-alive
		// connection, which is safe for the same reason.
		h.Set("Idempotency-Key", key)
	}
	if profile != "" {
		h.Set(wire.ProfileHeader, profile)
	}
	if ctx.Err() != nil { // never sent: safe to send again
		return &provider.Error{Kind: provider.Transient, Message: "not sent: the context is done", Err: ctx.Err()}
	}
	resp, err := a.client.Do(req)
	if err != nil {
		return transportError(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return &provider.Error{Kind: provider.OutcomeUnknown, Message: "the answer was cut off", Err: err}
	}
	if resp.StatusCode/100 == 2 {
		// The decoder's error is not wrapped: it may quote the answer.
		if json.Unmarshal(data, out) != nil {
			return provider.Errorf(provider.Unreadable, "the sandbox's answer (%d) could not be read", resp.StatusCode)
		}
		return nil
	}
	return a.statusError(resp, data)
}

// transportError: a request that never left (refused, no route, DNS) may be
// sent again; one that may have arrived (timeout, cut connection) has an
// unknown outcome.
func transportError(err error) error {
	var op *net.OpError
	var dns *net.DNSError
	if (errors.As(err, &op) && op.Op == "dial") || errors.As(err, &dns) {
		return &provider.Error{Kind: provider.Transient, Message: "sandbox unreachable", Err: err, Unsent: true}
	}
	return &provider.Error{Kind: provider.OutcomeUnknown, Message: "no answer from the sandbox", Err: err}
}

// statusError maps an error answer. The sandbox answers 5xx only before
// processing (docs/sandbox.md), except a gateway timeout (504), which says
// nothing about what happened behind it.
func (a *Adapter) statusError(resp *http.Response, data []byte) error {
	st := resp.StatusCode
	code := errorCode(data)
	switch {
	case st == http.StatusTooManyRequests:
		e := provider.Errorf(provider.RateLimited, "the sandbox asks to slow down")
		e.RetryAfter = retryAfter(resp.Header.Get("Retry-After"), a.now())
		return e
	case st == http.StatusNotFound:
		return provider.Errorf(provider.NotFound, "not found at the sandbox (%s)", orWord(code, "no code"))
	case code == "capability_not_supported":
		return provider.Errorf(provider.Unsupported, "the sandbox profile lacks the capability")
	case st == http.StatusConflict && code == "idempotency_request_in_progress":
		return provider.Errorf(provider.Transient, "the same operation is still in progress")
	case st == http.StatusGatewayTimeout:
		return provider.Errorf(provider.OutcomeUnknown, "gateway timeout")
	case st == http.StatusServiceUnavailable:
		// Before processing: nothing happened (docs/sandbox.md, faults).
		e := provider.Errorf(provider.Transient, "the sandbox is unavailable (503)")
		e.Unsent = true
		return e
	case st >= 500:
		return provider.Errorf(provider.Transient, "the sandbox is unavailable (%d)", st)
	case st >= 400:
		return provider.Errorf(provider.Invalid, "the sandbox refused the request (%d %s)", st, orWord(code, "no code"))
	}
	return provider.Errorf(provider.Unreadable, "unexpected answer status %d", st)
}

// codeRe is what an error code may look like to be repeated in a message:
// a machine word, never free text from the answer.
var codeRe = regexp.MustCompile(`^[a-z0-9_]{1,64}$`)

func errorCode(data []byte) string {
	var v wire.ErrorView
	if json.Unmarshal(data, &v) != nil || !codeRe.MatchString(v.Error.Code) {
		return ""
	}
	return v.Error.Code
}

func orWord(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// retryAfter reads Retry-After (seconds or an HTTP date); one second when
// it is missing or unreadable.
func retryAfter(h string, now time.Time) time.Duration {
	if s, err := strconv.Atoi(h); err == nil && s >= 0 {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(h); err == nil {
		return max(t.Sub(now), 0)
	}
	return time.Second
}
