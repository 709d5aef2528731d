package acquirer

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/sandbox/wire"
)

// maxBody bounds a request body; nothing the adapter sends comes close.
const maxBody = 64 << 10

// call is what a handler needs of a request beyond its path.
type call struct {
	key  string // Idempotency-Key: Paygate's operation id
	body []byte
	caps provider.Capabilities
	base string // public base URL, for links
}

// answer is a handler's result before the fault layer decides how (and
// whether) it reaches the client.
type answer struct {
	status     int
	body       []byte
	ref        ref  // the resource the answer shows
	late       bool // withhold it: first answer of the late test card
	garble     bool // send it unreadable
	replayed   bool
	retryAfter time.Duration
}

// ref names a resource: Kind is payment, verification, payout or session.
type ref struct {
	Kind string `json:"kind"`
	ID   string `json:"id"`
}

// keyRecord is a finished operation under an idempotency key: its
// fingerprint, the answer as first given, and what it acted on.
type keyRecord struct {
	Fingerprint string    `json:"fingerprint"`
	Status      int       `json:"status"`
	Body        []byte    `json:"body"`
	Ref         ref       `json:"ref"`
	At          time.Time `json:"at"`
}

// handler runs with s.mu held.
type handler func(r *http.Request, c *call) answer

// post wraps a mutating handler: the same Idempotency-Key with the same
// request replays the first answer; with another request it is refused.
func (s *Server) post(h handler) http.Handler { return s.api(h, true) }

// get wraps a query. Queries are what the unreadable test card counts.
func (s *Server) get(h handler) http.Handler { return s.api(h, false) }

// api is the pipeline of every /v1 call but the ledger: authentication,
// profile, injected faults before processing (latency, 503, 429), the
// handler, then faults after it (timeout, unreadable body).
func (s *Server) api(h handler, mutating bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.authorized(r) {
			writeAnswer(w, errAnswer(http.StatusUnauthorized, "unauthorized", "a valid bearer key is required"))
			return
		}
		profile := r.Header.Get(wire.ProfileHeader)
		if profile == "" {
			profile = wire.ProfileDefault
		}
		caps, ok := s.cfg.Profiles[profile]
		if !ok {
			writeAnswer(w, errAnswer(http.StatusBadRequest, "unknown_profile", "no such profile"))
			return
		}
		f := s.dice.roll(s.cfg.Faults)
		if f.latency && !s.pause(r, s.cfg.Faults.Latency) {
			return
		}
		switch f.kind {
		case faultServerError:
			writeAnswer(w, errAnswer(http.StatusServiceUnavailable, "unavailable", "try again later"))
			return
		case faultRateLimit:
			a := errAnswer(http.StatusTooManyRequests, "rate_limited", "slow down")
			a.retryAfter = s.cfg.Faults.retryAfter()
			writeAnswer(w, a)
			return
		}
		c := &call{caps: caps, base: s.base(r)}
		var a answer
		if mutating {
			a = s.runPost(r, c, h)
		} else {
			a = s.runGet(r, c, h)
		}
		if f.kind == faultUnreadable {
			a.garble = true
		}
		if a.late || f.kind == faultTimeout {
			s.hang(r)
		}
		writeAnswer(w, a)
	})
}

func (s *Server) runPost(r *http.Request, c *call, h handler) answer {
	c.key = r.Header.Get("Idempotency-Key")
	switch {
	case c.key == "":
		return errAnswer(http.StatusBadRequest, "idempotency_key_required", "Idempotency-Key is required")
	case len(c.key) > 200:
		return errAnswer(http.StatusBadRequest, "invalid_idempotency_key", "Idempotency-Key is too long")
	}
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, maxBody))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return errAnswer(http.StatusRequestEntityTooLarge, "payload_too_large", "body too large")
		}
		return errAnswer(http.StatusBadRequest, "invalid_json", "body could not be read")
	}
	c.body = body
	fp := fingerprint(r, body)

	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweepLocked()
	defer s.saveLocked()
	if rec, ok := s.st.Keys[c.key]; ok {
		if rec.Fingerprint != fp {
			return errAnswer(http.StatusUnprocessableEntity, "idempotency_key_reused",
				"this Idempotency-Key was used with another request")
		}
		a := answer{status: rec.Status, body: rec.Body, ref: rec.Ref, replayed: true}
		a.garble = s.unreadableLocked(a.ref, false)
		return a
	}
	a := h(r, c)
	// Only answers that did something are kept: an error changed nothing,
	// so a retry may as well be judged afresh.
	if a.status/100 == 2 {
		s.st.Keys[c.key] = &keyRecord{Fingerprint: fp, Status: a.status, Body: a.body, Ref: a.ref, At: s.now()}
		s.touch(ref{Kind: "key", ID: c.key})
		s.touch(a.ref)
	}
	a.garble = s.unreadableLocked(a.ref, false)
	return a
}

func (s *Server) runGet(r *http.Request, c *call, h handler) answer {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweepLocked()
	defer s.saveLocked()
	a := h(r, c)
	if a.status/100 == 2 {
		a.garble = s.unreadableLocked(a.ref, true)
	}
	return a
}

// fingerprint identifies a request for idempotency: method, path, profile
// and body.
func fingerprint(r *http.Request, body []byte) string {
	h := sha256.New()
	io.WriteString(h, r.Method+" "+r.URL.Path+"\n"+r.Header.Get(wire.ProfileHeader)+"\n")
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}

// unreadableLocked reports whether an answer showing resource x must be
// unreadable (the unreadable test card): every answer is, until queries
// have used up the resource's count of unreadable answers.
func (s *Server) unreadableLocked(x ref, query bool) bool {
	b := s.baseOf(x)
	if b == nil || b.Unreadable <= 0 {
		return false
	}
	if query {
		b.Unreadable--
		s.touch(x)
	}
	return true
}

// writeAnswer sends an answer. An unreadable one is cut in half: the status
// is right, the JSON never parses, and no byte of it is new.
func writeAnswer(w http.ResponseWriter, a answer) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	if a.replayed {
		h.Set("Idempotent-Replayed", "true")
	}
	if a.retryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(int((a.retryAfter+time.Second-1)/time.Second)))
	}
	body := a.body
	if a.garble {
		body = body[:len(body)/2]
	}
	w.WriteHeader(a.status)
	w.Write(body)
}

func jsonAnswer(status int, v any, x ref) answer {
	b, err := json.Marshal(v)
	if err != nil { // the views are plain structs: cannot happen
		return errAnswer(http.StatusInternalServerError, "internal_error", "internal error")
	}
	return answer{status: status, body: append(b, '\n'), ref: x}
}

// errAnswer builds the sandbox's error envelope. Messages are fixed text,
// never an echo of input, so card data cannot leak into them.
func errAnswer(status int, code, message string) answer {
	return fieldError(status, code, message, "")
}

func fieldError(status int, code, message, field string) answer {
	var v wire.ErrorView
	v.Error.Code, v.Error.Message, v.Error.Field = code, message, field
	return jsonAnswer(status, v, ref{})
}

func invalid(field, message string) answer {
	return fieldError(http.StatusBadRequest, "invalid_request", message, field)
}

func notFound() answer {
	return errAnswer(http.StatusNotFound, "not_found", "no such resource")
}

func invalidState() answer {
	return errAnswer(http.StatusConflict, "invalid_state", "not allowed in the current status")
}

func unsupported(c provider.Capability) answer {
	return errAnswer(http.StatusUnprocessableEntity, "capability_not_supported",
		"the profile lacks the capability "+string(c))
}

// decode reads a JSON object strictly: unknown fields are refused, as a
// real acquirer's schema would. An empty body decodes to the zero value
// when empty is allowed.
func decode(body []byte, v any, emptyOK bool) *answer {
	if len(bytes.TrimSpace(body)) == 0 {
		if emptyOK {
			return nil
		}
		a := errAnswer(http.StatusBadRequest, "invalid_json", "a JSON body is required")
		return &a
	}
	d := json.NewDecoder(bytes.NewReader(body))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil || d.More() {
		a := errAnswer(http.StatusBadRequest, "invalid_json", "the body is not the expected JSON object")
		return &a
	}
	return nil
}

func checkMoney(amount int64, currency string) *answer {
	if amount < 1 {
		a := invalid("amount_minor", "amount_minor must be at least 1")
		return &a
	}
	if !currencyRe.MatchString(currency) {
		a := invalid("currency", "currency must be three capital letters")
		return &a
	}
	return nil
}

func checkReturnURL(raw string) *answer {
	if raw == "" {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		a := invalid("return_url", "return_url must be an absolute http(s) URL")
		return &a
	}
	return nil
}

// locale is one of the languages the sandbox's pages speak; the client
// API's default is ru.
func locale(l string) string {
	switch l {
	case "en", "ua", "ru":
		return l
	}
	return "ru"
}
