package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/paygate/paygate/internal/clock"
	"github.com/paygate/paygate/internal/fault"
	"github.com/paygate/paygate/internal/merchant"
	"github.com/paygate/paygate/internal/openapi"
	"github.com/paygate/paygate/internal/store"
)

// maxBody is the largest request body accepted (docs/design/decisions.md
// section 3: 64 KiB).
const maxBody = 64 << 10

// call is one authenticated request on its way through a handler.
type call struct {
	r     *http.Request
	key   merchant.Key
	nonce string
	body  []byte
	query url.Values // the parameters the endpoint takes, read by queryParams
}

// answer is what a handler returns: a status and a value to encode.
type answer struct {
	status int
	body   any
}

// front reads the body (413 past maxBody) and authenticates the request.
func (s *Server) front(w http.ResponseWriter, r *http.Request) (*call, bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			w.Header().Set("Connection", "close")
			s.fail(w, r, fault.Newf(fault.PayloadTooLarge, "the request body must be at most %d bytes", maxBody))
		} else {
			s.fail(w, r, fault.New(fault.InvalidJSON, "the request body could not be read"))
		}
		return nil, false
	}
	key, nonce, f := s.authenticate(r.Context(), r, body)
	if f != nil {
		s.fail(w, r, f)
		return nil, false
	}
	// Everything the request decides by time reads the key's own clock
	// (docs/design/decisions.md section 14): a sandbox key's offset, none
	// in production.
	offset := key.ClockOffset
	if key.Environment != merchant.Sandbox {
		offset = 0
	}
	r = r.WithContext(clock.With(r.Context(), offset))
	return &call{r: r, key: key, nonce: nonce, body: body}, true
}

// read serves an authenticated request that changes nothing and takes no
// query parameter.
func (s *Server) read(fn func(ctx context.Context, c *call) (answer, error)) http.Handler {
	return s.readQuery(nil, fn)
}

// readQuery is read for an endpoint that takes the query parameters
// params, found in c.query (queryParams says how they are read).
func (s *Server) readQuery(params []string, fn func(ctx context.Context, c *call) (answer, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, ok := s.front(w, r)
		if !ok {
			return
		}
		if err := s.admit(r.Context(), s.store, c.key, c.nonce); err != nil {
			s.failErr(w, r, err)
			return
		}
		q, f := queryParams(r, params)
		if f != nil {
			s.fail(w, r, f)
			return
		}
		c.query = q
		a, err := fn(c.r.Context(), c)
		if err != nil {
			s.failErr(w, r, err)
			return
		}
		writeJSON(w, a.status, mustJSON(a.body))
	})
}

// remove serves an authenticated DELETE. It needs no Idempotency-Key
// (removing twice answers 404 the second time) and takes no body beyond an
// empty object; success is 204 without a body.
func (s *Server) remove(fn func(ctx context.Context, c *call) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, ok := s.front(w, r)
		if !ok {
			return
		}
		if err := s.admit(r.Context(), s.store, c.key, c.nonce); err != nil {
			s.failErr(w, r, err)
			return
		}
		if _, f := queryParams(r, nil); f != nil {
			s.fail(w, r, f)
			return
		}
		if len(bytes.TrimSpace(c.body)) > 0 {
			if f := emptyObject(c.body); f != nil {
				s.fail(w, r, f)
				return
			}
		}
		if err := fn(c.r.Context(), c); err != nil {
			s.failErr(w, r, err)
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusNoContent)
	})
}

// writeSpec describes a mutating endpoint's body.
type writeSpec struct {
	schema   string // schema of the body in the OpenAPI document; "" for none
	optional bool   // the body may be absent (empty)
	// sealAnswer keeps the stored answer encrypted: it shows a secret once
	// (a webhook endpoint's), which must not sit in the clear for the 24
	// hours an answer is kept for replay.
	sealAnswer bool
}

// write serves a mutating request with the checks of docs/design/decisions.md
// section 3 in their order and the idempotency of docs/design/decisions.md
// section 2. T is the body's wire type.
//
// One transaction carries the nonce, the idempotency claim, the change, the
// jobs it queues and the stored answer, so an answered 2xx is durable and a
// crash at any point leaves either all of it or none.
func write[T any](s *Server, spec writeSpec, fn func(ctx context.Context, tx *store.Tx, c *call, in *T) (answer, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, ok := s.front(w, r)
		if !ok {
			return
		}
		in := new(T)
		idemKey, f := s.checkWrite(r, c, spec, in)
		if f != nil {
			// Rejected before changing anything: spend the nonce, store no answer.
			if err := s.admit(r.Context(), s.store, c.key, c.nonce); err != nil {
				s.failErr(w, r, err)
				return
			}
			s.fail(w, r, f)
			return
		}
		status, body, replayed, err := s.execute(c.r.Context(), c, idemKey, spec.sealAnswer, func(ctx context.Context, tx *store.Tx) (answer, error) {
			return fn(ctx, tx, c, in)
		})
		if err != nil {
			s.failErr(w, r, err)
			return
		}
		if replayed {
			w.Header().Set("Idempotent-Replayed", "true")
		}
		writeJSON(w, status, body)
	})
}

// checkWrite runs the checks that need no database: query string (no
// write takes a parameter), content type, Idempotency-Key, JSON, schema
// (docs/design/decisions.md section 3 order).
func (s *Server) checkWrite(r *http.Request, c *call, spec writeSpec, in any) (string, *fault.Error) {
	if _, f := queryParams(r, nil); f != nil {
		return "", f
	}
	if len(c.body) > 0 || r.Header.Get("Content-Type") != "" {
		mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if err != nil || mt != "application/json" {
			return "", fault.OnField(fault.UnsupportedMediaType, "Content-Type", "the request body must be application/json")
		}
	}
	idemKey := r.Header.Get("Idempotency-Key")
	if idemKey == "" {
		return "", fault.OnField(fault.IdempotencyKeyRequired, "Idempotency-Key", "every POST needs an Idempotency-Key header")
	}
	if !validIdempotencyKey(idemKey) {
		return "", fault.OnField(fault.InvalidIdempotencyKey, "Idempotency-Key",
			"must be 8 to 200 characters of UTF-8 text without control characters")
	}
	if spec.optional && len(bytes.TrimSpace(c.body)) == 0 {
		return idemKey, nil
	}
	if spec.schema == "" {
		return idemKey, emptyObject(c.body)
	}
	if f := s.validator.Decode(spec.schema, c.body, in); f != nil {
		return "", f
	}
	return idemKey, nil
}

// validIdempotencyKey: the key is stored (docs/design/decisions.md section
// 2), so it follows the rule for text (docs/api.md, "Text and query
// strings"): UTF-8, and here no control character at all; its length is
// counted in characters.
func validIdempotencyKey(k string) bool {
	if !openapi.ValidText(k) || strings.IndexFunc(k, unicode.IsControl) >= 0 {
		return false
	}
	n := utf8.RuneCountInString(k)
	return n >= 8 && n <= 200
}

// emptyObject accepts the body of an endpoint that takes none when it is
// "{}"; anything else is refused like an unknown field.
func emptyObject(body []byte) *fault.Error {
	if f := openapi.CheckText(body); f != nil {
		return f
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil || m == nil {
		return fault.New(fault.InvalidJSON, "the request body must be a JSON object, or absent")
	}
	if len(m) > 0 {
		return fault.New(fault.UnknownField, "this endpoint takes no body")
	}
	return nil
}

// fingerprint identifies a request for idempotency: method, target, body.
func fingerprint(r *http.Request, body []byte) string {
	b := sha256.Sum256(body)
	f := sha256.Sum256([]byte(r.Method + "\n" + r.RequestURI + "\n" + hex.EncodeToString(b[:])))
	return hex.EncodeToString(f[:])
}

// execute runs fn once per (key, Idempotency-Key): it answers a finished
// request's stored answer again, 409 while one is executing, 422 for the
// same key with another request. With seal the answer is stored sealed.
func (s *Server) execute(ctx context.Context, c *call, idemKey string, seal bool, fn func(context.Context, *store.Tx) (answer, error)) (status int, body []byte, replayed bool, err error) {
	fp := fingerprint(c.r, c.body)
	// One transaction; on SQLite it may share its commit with concurrent
	// requests (store.Batch). Returning nil commits; an error undoes all.
	err = s.store.Batch(ctx, func(ctx context.Context, tx *store.Tx) error {
		status, body, replayed = 0, nil, false
		if err := s.admit(ctx, tx, c.key, c.nonce); err != nil {
			return err
		}
		// From here on the nonce is spent whatever the answer: commit it.
		answerWith := func(f *fault.Error) error {
			status, body = errorBody(f, requestID(ctx))
			return nil
		}
		claimed, err := tx.LockIdempotencyKey(ctx, c.key.ID, idemKey)
		if err != nil {
			return err
		}
		if !claimed {
			return answerWith(fault.OnField(fault.IdempotencyRequestInProgress, "Idempotency-Key",
				"a request with this Idempotency-Key is still executing; retry later"))
		}
		prior, err := tx.FindIdempotentResponse(ctx, c.key.ID, idemKey)
		switch {
		case err == nil && prior.Fingerprint != fp:
			return answerWith(fault.OnField(fault.IdempotencyKeyReused, "Idempotency-Key",
				"this Idempotency-Key was used with another request"))
		case err == nil:
			if seal {
				// The same fingerprint means the same endpoint: its answers are sealed.
				if prior.Body, err = s.merchants.Sealer.Open(prior.Body, answerAAD(c.key.ID, idemKey)); err != nil {
					return err
				}
			}
			status, body, replayed = prior.StatusCode, prior.Body, true
			return nil
		case !errors.Is(err, store.ErrNotFound):
			return err
		}

		if err := tx.Savepoint(ctx, "request"); err != nil {
			return err
		}
		a, err := fn(ctx, tx)
		if err != nil {
			f, ok := fault.As(err)
			if !ok || statusOf(f.Code) >= 500 || f.Retryable || retryable[f.Code] {
				// Not stored: a retry runs again (a fault of ours, or a
				// refusal that passes with time, such as rate_limited).
				return err
			}
			// A refusal after the point of no return is stored like a success
			// (docs/design/decisions.md section 2), without whatever the
			// handler wrote.
			if err := tx.RollbackTo(ctx, "request"); err != nil {
				return err
			}
			status, body = errorBody(f, requestID(ctx))
		} else {
			status, body = a.status, mustJSON(a.body)
		}
		stored := store.StoredResponse{Fingerprint: fp, StatusCode: status, Body: body, CreatedAt: s.now()}
		if seal {
			if stored.Body, err = s.merchants.Sealer.Seal(body, answerAAD(c.key.ID, idemKey)); err != nil {
				return err
			}
		}
		return tx.SaveIdempotentResponse(ctx, c.key.ID, idemKey, stored)
	})
	if err != nil {
		return 0, nil, false, err
	}
	return status, body, replayed, nil
}

// answerAAD binds a sealed stored answer to its key and Idempotency-Key.
func answerAAD(keyID, idemKey string) []byte {
	return []byte("idempotent_answer:" + keyID + ":" + idemKey)
}

// queryParams is the one reader of query strings (docs/api.md, "Text and
// query strings"), so every endpoint answers a query alike: strictly
// parsed (a malformed escape such as %zz, or a ";" separator, is 400
// validation_error on "query"), only the parameters the endpoint takes
// (any other is 400 unknown_field, named as a body's unknown property is:
// openapi.EchoableName, else on "query"), each at
// most once, and values that are text (UTF-8 without NUL) else 400
// validation_error on the parameter. Problems are answered in parameter
// name order, so the answer does not depend on map order.
func queryParams(r *http.Request, params []string) (url.Values, *fault.Error) {
	if r.URL.RawQuery == "" {
		return url.Values{}, nil
	}
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, fault.OnField(fault.ValidationError, "query", "the query string is not well formed")
	}
	names := make([]string, 0, len(q))
	for name := range q {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if !slices.Contains(params, name) {
			if openapi.EchoableName(name) {
				return nil, fault.OnField(fault.UnknownField, name, "unknown query parameter")
			}
			return nil, fault.OnField(fault.UnknownField, "query", "unknown query parameter")
		}
		if len(q[name]) > 1 {
			return nil, fault.OnField(fault.ValidationError, name, "may be given once")
		}
		if !openapi.ValidText(q[name][0]) {
			return nil, fault.OnField(fault.ValidationError, name, "must be UTF-8 text without the NUL character")
		}
	}
	return q, nil
}
