package checkout

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"html/template"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/paygate/paygate/internal/merchant"
)

// The checkout's template, style sheet and script are embedded: the page
// loads nothing from anywhere else.
//
//go:embed assets/page.html assets/checkout.css assets/checkout.js
var checkoutFiles embed.FS

var (
	pageTemplate = template.Must(template.ParseFS(checkoutFiles, "assets/page.html"))
	// assets are the files under /assets/, by name, with a version (a hash
	// of their content) that page links carry so caches never serve a stale one.
	assets, assetVersion = loadAssets("checkout.css", "checkout.js")
)

type asset struct {
	body []byte
	kind string
}

func loadAssets(names ...string) (map[string]asset, string) {
	out := map[string]asset{}
	h := sha256.New()
	for _, n := range names {
		b, err := checkoutFiles.ReadFile("assets/" + n)
		if err != nil {
			panic(err)
		}
		out[n] = asset{body: b, kind: mime.TypeByExtension(path.Ext(n))}
		h.Write(b)
	}
	return out, hex.EncodeToString(h.Sum(nil))[:12]
}

// Asset is GET /assets/{file}: the checkout's CSS and JavaScript.
func (pg *Pages) Asset() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a, ok := assets[r.PathValue("file")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		h := w.Header()
		h.Set("Content-Type", a.kind)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("ETag", `"`+assetVersion+`"`)
		if r.URL.Query().Get("v") == assetVersion {
			h.Set("Cache-Control", "public, max-age=31536000, immutable")
		} else {
			h.Set("Cache-Control", "no-cache")
		}
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(a.body))
	})
}

// renderPage writes a checkout page with the headers every one carries.
func (pg *Pages) renderPage(w http.ResponseWriter, r *http.Request, status int, v pageView) {
	v.Sandbox, v.Asset = pg.cfg.Environment == merchant.Sandbox, assetVersion
	if v.Script {
		v.Nonce = newSecret(16)
	}
	var b bytes.Buffer
	if err := pageTemplate.ExecuteTemplate(&b, "page", v); err != nil {
		pg.log.Error("checkout: page could not be drawn", "request_id", pg.requestID(r.Context()), "error", err)
		http.Error(w, "The page could not be drawn.", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", pg.pagePolicy(v))
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	w.WriteHeader(status)
	_, _ = w.Write(b.Bytes())
}

// pagePolicy is the page's Content-Security-Policy: its own files only, no
// inline script but the nonce'd one-liner that marks JavaScript as on, never
// framed. Forms may lead to Paygate itself and, through the redirects that
// follow a submission, to the provider's pages (3DS, the provider's
// checkout) and the merchant's return_url.
func (pg *Pages) pagePolicy(v pageView) string {
	script := "'self'"
	if v.Nonce != "" {
		script += " 'nonce-" + v.Nonce + "'"
	}
	form := []string{"'self'"}
	for _, t := range append(append([]string(nil), pg.cfg.ProviderOrigins...), v.formTargets...) {
		if o := origin(t); o != "" && !strings.Contains(strings.Join(form, " "), o) {
			form = append(form, o)
		}
	}
	return "default-src 'self'; script-src " + script + "; style-src 'self'; img-src 'self' data:; " +
		"connect-src 'none'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action " +
		strings.Join(form, " ")
}

// origin is the scheme://host[:port] of an http(s) URL, as a CSP source;
// "" for anything else.
func origin(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return ""
	}
	for _, c := range u.Host {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune(".-:[]", c)) {
			return ""
		}
	}
	return u.Scheme + "://" + u.Host
}

// Anti-forgery (issue 4; issue 10 item 6; docs/checkout.md, Security).
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
	// browserIDLen is the length of a browser id: 32 random bytes, base64url.
	browserIDLen = 43
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

// secureCookie reports whether the payer reached this page over https: the
// request came over TLS, or it names the https public URL's host (a
// TLS-terminating proxy that keeps the Host header), or a trusted proxy
// says so (X-Forwarded-Proto; forwarded headers only from trusted proxies,
// client API). Otherwise the cookie cannot be Secure: a browser on plain
// http would drop it and every form would fail.
func (pg *Pages) secureCookie(r *http.Request) bool {
	if r.TLS != nil {
		return true
	}
	u, err := url.Parse(pg.cfg.PublicURL)
	if err != nil || u.Scheme != "https" {
		return false
	}
	if strings.EqualFold(u.Host, r.Host) {
		return true
	}
	// Only the trusted proxy's own X-Forwarded-Proto entry counts
	// (forwarded.Proxies.HTTPS).
	return pg.cfg.Proxies.HTTPS(r)
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
	if c, err := r.Cookie(name); err == nil && len(c.Value) == browserIDLen {
		id = c.Value
	} else {
		id = newSecret(32)
		// Path=/ and no Domain: what a __Host- cookie must have.
		http.SetCookie(w, &http.Cookie{Name: name, Value: id, Path: "/", MaxAge: 4 * 3600,
			HttpOnly: true, Secure: pg.secureCookie(r), SameSite: http.SameSiteLaxMode})
	}
	return formMAC(pg.formKeys[0], id, sessionID)
}

// validFormToken checks a POST's csrf_token against its cookie and session
// under every form key (the active master key's and those kept since a
// rotation).
func (pg *Pages) validFormToken(r *http.Request, sessionID string) bool {
	c, err := r.Cookie(pg.csrfCookieName(r))
	if err != nil || len(c.Value) != browserIDLen {
		return false
	}
	got := []byte(r.PostFormValue(csrfField))
	ok := false
	for _, k := range pg.formKeys {
		ok = hmac.Equal(got, []byte(formMAC(k, c.Value, sessionID))) || ok
	}
	return ok
}

// formMAC is the token: HMAC-SHA256(key, label, browser id, session id),
// each part length-prefixed so that no two different pairs read the same.
func formMAC(key []byte, browserID, sessionID string) string {
	m := hmac.New(sha256.New, key)
	for _, part := range []string{"paygate checkout form v2", browserID, sessionID} {
		var n [4]byte
		binary.BigEndian.PutUint32(n[:], uint32(len(part)))
		m.Write(n[:])
		m.Write([]byte(part))
	}
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// newSecret returns n random bytes, URL-safe base64.
func newSecret(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return base64.RawURLEncoding.EncodeToString(b)
}
