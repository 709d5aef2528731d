package checkout

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"net/http"

	"github.com/paygate/paygate/internal/formtoken"
)

// Anti-forgery (docs/checkout.md, "Security").
//
// The payer's browser holds a random browser id in an HttpOnly,
// SameSite=Lax cookie; each form carries, in its hidden csrf_token field,
// HMAC-SHA256 keyed by the server's form key over the browser id and the
// session id. A POST is accepted only when the field is the MAC of its
// cookie and its session (constant-time) under one of the form keys.
//
//   - The key is the server's, not the cookie's: a client that sets a cookie
//     of its own choosing (a sibling subdomain on http, a script of its own)
//     cannot compute the token for it. The cookie is therefore not signed:
//     anybody may get a genuine (id, token) pair by opening a page, which a
//     signature would not prevent; what stops it being pushed into another
//     browser is the __Host- cookie below.
//   - The token is bound to the session: one session's token is refused on
//     another.
//   - The form keys derive from the master keys (vault.Keyring.DeriveKeys,
//     label formKeyLabel), which every process of a cluster already shares,
//     so any process checks any form and nothing is stored. A server signs
//     with the active master key's derivation and accepts any key of its
//     ring, so forms issued before a master-key rotation still pass after
//     it, until the old key is removed from the ring.
//   - On https (the request reached us over TLS, or at the https public URL's
//     host, or through a trusted proxy that says https) the cookie is
//     __Host-paygate_checkout, Secure, Path=/ and no Domain: a sibling domain
//     cannot plant or overwrite it, and only that name is read then.
const (
	csrfField   = "csrf_token"
	csrfCookie  = "paygate_checkout"
	maxFormBody = 16 << 10
	// formKeyLabel names the anti-forgery key among the keys derived from
	// the master keys; changing it invalidates every open form.
	formKeyLabel = "paygate checkout anti-forgery v1"
)

// KeyDeriver derives secrets from the master keys; *vault.Keyring is one.
// DeriveKeys returns one key per master key, the active one first.
type KeyDeriver interface {
	DeriveKeys(label string) [][]byte
}

// formKeys derives the anti-forgery keys. Pages without them would have to
// make up a key of their own, which the other processes of a cluster would
// not share, so New refuses instead.
func formKeys(d KeyDeriver) ([][]byte, error) {
	if d == nil {
		return nil, errors.New("checkout: Deps.Keys is required: the checkout's anti-forgery key derives from the master keys")
	}
	keys := d.DeriveKeys(formKeyLabel)
	if len(keys) == 0 {
		return nil, errors.New("checkout: the master keyring derived no anti-forgery key")
	}
	return keys, nil
}

// secureCookie reports whether the payer reached this page over https
// (forwarded.Proxies.Secure). Otherwise the cookie cannot be Secure: a
// browser on plain http would drop it and every form would fail.
func (pg *Pages) secureCookie(r *http.Request) bool {
	return pg.cfg.Proxies.Secure(r, pg.cfg.PublicURL)
}

func (pg *Pages) csrfCookieName(r *http.Request) string {
	if pg.secureCookie(r) {
		return "__Host-" + csrfCookie
	}
	return csrfCookie
}

// formToken returns the token for the session's forms, setting the cookie
// when the browser has none yet.
func (pg *Pages) formToken(w http.ResponseWriter, r *http.Request, sessionID string) string {
	name := pg.csrfCookieName(r)
	id := ""
	if c, err := r.Cookie(name); err == nil && len(c.Value) == formtoken.BrowserIDLen {
		id = c.Value
	} else {
		id = formtoken.NewBrowserID()
		// Path=/ and no Domain: what a __Host- cookie must have.
		http.SetCookie(w, &http.Cookie{Name: name, Value: id, Path: "/", MaxAge: 4 * 3600,
			HttpOnly: true, Secure: pg.secureCookie(r), SameSite: http.SameSiteLaxMode})
	}
	return pg.forms().Token(id, sessionID)
}

// validFormToken checks a POST's csrf_token against its cookie and session
// under every form key (the active master key's and those kept since a
// rotation).
func (pg *Pages) validFormToken(r *http.Request, sessionID string) bool {
	c, err := r.Cookie(pg.csrfCookieName(r))
	return err == nil && pg.forms().Valid(c.Value, r.PostFormValue(csrfField), sessionID)
}

// forms signs and checks the checkout's tokens: HMAC-SHA256 over the label,
// the browser id and the session id.
func (pg *Pages) forms() formtoken.Signer {
	return formtoken.Signer{Label: "paygate checkout form v2", Keys: pg.formKeys}
}

// newSecret returns n random bytes, URL-safe base64.
func newSecret(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return base64.RawURLEncoding.EncodeToString(b)
}
