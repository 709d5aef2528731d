package server

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/paygate/paygate/internal/fault"
	"github.com/paygate/paygate/internal/logging"
	"github.com/paygate/paygate/internal/merchant"
	"github.com/paygate/paygate/internal/signature"
	"github.com/paygate/paygate/internal/store"
)

// authenticate checks a request's signature (docs/design/decisions.md section
// 1) and returns the key that signed it and its nonce. The nonce is consumed
// later, by admit, in the same transaction as the work the request does.
func (s *Server) authenticate(ctx context.Context, r *http.Request, body []byte) (merchant.Key, string, *fault.Error) {
	h := r.Header
	for _, name := range []string{"X-Access-Key", "X-Timestamp", "X-Nonce", "X-Signature"} {
		if h.Get(name) == "" {
			return merchant.Key{}, "", fault.OnField(fault.AuthenticationRequired, name, "the request must carry this header")
		}
	}
	access, ts, nonce, sig := h.Get("X-Access-Key"), h.Get("X-Timestamp"), h.Get("X-Nonce"), h.Get("X-Signature")
	if !accessKeyShape(access) {
		// Refused before the lookup: a byte no key can hold (0x80-0xFF
		// among them) must not reach a text column (docs/api.md, "Text and
		// query strings"); PostgreSQL answers such a query with an error.
		return merchant.Key{}, "", fault.OnField(fault.AuthenticationRequired, "X-Access-Key",
			"must be an access key: A-Z, a-z, 0-9, _ and -")
	}
	if !signature.ValidNonce(nonce) {
		return merchant.Key{}, "", fault.OnField(fault.AuthenticationRequired, "X-Nonce",
			"must be 16 to 128 characters of A-Z, a-z, 0-9, _ and -")
	}
	if !timestampOK(ts, s.now()) {
		return merchant.Key{}, "", fault.OnField(fault.TimestampOutOfRange, "X-Timestamp",
			"must be the current Unix time in whole seconds, within 300 seconds of the server's clock")
	}
	canonical := signature.Canonical(r.Method, r.RequestURI, access, ts, nonce, body)
	bad := func() *fault.Error {
		f := fault.OnField(fault.InvalidSignature, "X-Signature", "the signature does not match the request, or the key is unknown or revoked")
		if s.cfg.Environment == merchant.Sandbox {
			// Sandbox only: what the server signed, to debug a client (never
			// the secret). A card number sent in the query is masked here too.
			f.Details = map[string]any{"canonical_string": logging.MaskCardNumbers(canonical)}
		}
		return f
	}
	key, secret, f := s.lookupKey(ctx, access)
	if f != nil {
		return merchant.Key{}, "", f
	}
	if key.ID == "" {
		return merchant.Key{}, "", bad()
	}
	// Verify before looking at revocation, so a revoked key costs the same
	// time as a live one and the two are not told apart.
	if !signature.Verify(secret, canonical, sig) || !key.Active() {
		return merchant.Key{}, "", bad()
	}
	return key, nonce, nil
}

// lookupKey returns an access key and its secret, from the cache when it
// was read less than the cache's time ago (docs/signing.md, "Revoking a
// key"); a zero key when there is none.
func (s *Server) lookupKey(ctx context.Context, access string) (merchant.Key, string, *fault.Error) {
	if key, secret, ok := s.keys.get(access); ok {
		return key, secret, nil
	}
	key, err := s.store.FindKeyByAccessKey(ctx, access)
	if errors.Is(err, store.ErrNotFound) {
		return merchant.Key{}, "", nil
	}
	if err != nil {
		return merchant.Key{}, "", s.internal(err)
	}
	secret, err := s.merchants.Secret(key)
	if err != nil {
		return merchant.Key{}, "", s.internal(err)
	}
	s.keys.put(key, secret)
	return key, secret, nil
}

// internal wraps an unexpected error so failErr logs it and answers 500 or 503.
func (s *Server) internal(err error) *fault.Error {
	f := fault.New(fault.Internal, "an internal error occurred; retry later")
	if store.Unreachable(err) {
		f = fault.New(fault.Unavailable, "the service is temporarily unavailable; retry later")
	}
	s.log.Error("internal error", "error", err)
	return f
}

// admit consumes the request's nonce and applies the per-key rate limit,
// through q: the database for reads and rejected requests, or the
// transaction of a write so that the nonce is spent exactly when the
// write commits.
func (s *Server) admit(ctx context.Context, q admitter, key merchant.Key, nonce string) error {
	fresh, recent, err := q.Admit(ctx, key.ID, nonce, s.now(), s.cfg.RateLimit > 0)
	if err != nil {
		return err
	}
	if !fresh {
		return fault.OnField(fault.NonceReused, "X-Nonce", "this nonce was already used with this key")
	}
	if s.cfg.RateLimit > 0 && recent >= s.cfg.RateLimit {
		return fault.New(fault.RateLimited, "too many requests for this key; retry after the time in Retry-After")
	}
	return nil
}

type admitter interface {
	Admit(ctx context.Context, keyID, nonce string, now time.Time, countRate bool) (bool, int, error)
}

// accessKeyShape reports whether k is written like an access key
// (merchant.Service.Create: a prefix such as ak_sandbox_ and base64url
// characters), at most 128 bytes. The lookup says whether it exists.
func accessKeyShape(k string) bool {
	if len(k) > 128 {
		return false
	}
	for i := 0; i < len(k); i++ {
		switch c := k[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// timestampOK: a malformed timestamp is as out of range as a stale one.
func timestampOK(ts string, now time.Time) bool {
	inRange, wellFormed := signature.CheckTimestamp(ts, now)
	return inRange && wellFormed
}
