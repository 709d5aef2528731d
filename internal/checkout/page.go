package checkout

import (
	"bytes"
	"crypto/sha256"
	"embed"
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
	for _, t := range append(pg.origins(), v.formTargets...) {
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
