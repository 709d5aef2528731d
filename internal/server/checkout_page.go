package server

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"encoding/hex"
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
//go:embed checkout/page.html checkout/checkout.css checkout/checkout.js
var checkoutFiles embed.FS

var (
	pageTemplate = template.Must(template.ParseFS(checkoutFiles, "checkout/page.html"))
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
		b, err := checkoutFiles.ReadFile("checkout/" + n)
		if err != nil {
			panic(err)
		}
		out[n] = asset{body: b, kind: mime.TypeByExtension(path.Ext(n))}
		h.Write(b)
	}
	return out, hex.EncodeToString(h.Sum(nil))[:12]
}

// checkoutAsset is GET /assets/{file}: the checkout's CSS and JavaScript.
func (s *Server) checkoutAsset() http.Handler {
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
func (s *Server) renderPage(w http.ResponseWriter, r *http.Request, status int, v pageView) {
	v.Sandbox, v.Asset = s.cfg.Environment == merchant.Sandbox, assetVersion
	if v.Script {
		v.Nonce = newSecret(16)
	}
	var b bytes.Buffer
	if err := pageTemplate.ExecuteTemplate(&b, "page", v); err != nil {
		s.log.Error("checkout: page could not be drawn", "request_id", requestID(r.Context()), "error", err)
		http.Error(w, "The page could not be drawn.", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", s.pagePolicy(v))
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
func (s *Server) pagePolicy(v pageView) string {
	script := "'self'"
	if v.Nonce != "" {
		script += " 'nonce-" + v.Nonce + "'"
	}
	form := []string{"'self'"}
	for _, t := range append(append([]string(nil), s.cfg.ProviderOrigins...), v.formTargets...) {
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

// Anti-forgery (issue 4). The payer's browser holds a random secret in an
// HttpOnly, SameSite=Lax cookie; each form carries
// HMAC-SHA256(secret, session id) in its hidden csrf_token field. A POST is
// accepted only when the field matches the cookie (constant-time). Another
// site can neither read the cookie nor have it sent with a cross-site POST,
// so it cannot forge a submission; the token of one session is worthless
// for another. Nothing is stored on the server, so every Paygate process
// of a cluster can check any form. On https (__Host- prefix, Secure) a
// sibling domain cannot plant the cookie either.
const (
	csrfField   = "csrf_token"
	csrfCookie  = "paygate_checkout"
	maxFormBody = 16 << 10
)

func (s *Server) secureCookie(r *http.Request) bool {
	if r.TLS != nil {
		return true
	}
	u, err := url.Parse(s.cfg.PublicURL)
	return err == nil && u.Scheme == "https" && strings.EqualFold(u.Host, r.Host)
}

func (s *Server) csrfCookieName(r *http.Request) string {
	if s.secureCookie(r) {
		return "__Host-" + csrfCookie
	}
	return csrfCookie
}

// formToken returns the token for the session's forms, setting the cookie
// when the browser has none yet.
func (s *Server) formToken(w http.ResponseWriter, r *http.Request, sessionID string) string {
	name := s.csrfCookieName(r)
	secret := ""
	if c, err := r.Cookie(name); err == nil && len(c.Value) == 43 {
		secret = c.Value
	} else {
		secret = newSecret(32)
		http.SetCookie(w, &http.Cookie{Name: name, Value: secret, Path: "/", MaxAge: 4 * 3600,
			HttpOnly: true, Secure: s.secureCookie(r), SameSite: http.SameSiteLaxMode})
	}
	return formMAC(secret, sessionID)
}

// validFormToken checks a POST's csrf_token against the cookie.
func (s *Server) validFormToken(r *http.Request, sessionID string) bool {
	c, err := r.Cookie(s.csrfCookieName(r))
	if err != nil || len(c.Value) != 43 {
		return false
	}
	return hmac.Equal([]byte(r.PostFormValue(csrfField)), []byte(formMAC(c.Value, sessionID)))
}

func formMAC(secret, sessionID string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte("paygate checkout form\x00" + sessionID))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// newSecret returns n random bytes, URL-safe base64.
func newSecret(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return base64.RawURLEncoding.EncodeToString(b)
}
