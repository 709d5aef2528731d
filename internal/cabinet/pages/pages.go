// Package pages serves the merchant cabinet's web pages under /cabinet/:
// setup, sign-in, sign-out and the signed-in pages (docs/design/decisions.md
// section 13; docs/cabinet.md). Server-rendered HTML without JavaScript,
// under the checkout's Content-Security-Policy discipline.
package pages

import (
	"context"
	"errors"
	"html/template"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/paygate/paygate/internal/cabinet"
	"github.com/paygate/paygate/internal/forwarded"
	"github.com/paygate/paygate/internal/merchant"
)

// Config is what the pages know of the deployment.
type Config struct {
	PublicURL string // https here makes the cookies Secure and __Host-
	Proxies   forwarded.Proxies
}

// KeyDeriver derives secrets from the master keys; *vault.Keyring is one.
// DeriveKeys returns one key per master key, the active one first.
type KeyDeriver interface {
	DeriveKeys(label string) [][]byte
}

// Deps are what the pages call.
type Deps struct {
	Users *cabinet.Service
	Keys  KeyDeriver
	Log   *slog.Logger
	// Data is what the signed-in pages read and change.
	Data
	// Export writes the payments page's CSV download; nil: the download
	// answers 404.
	Export ExportFunc
}

// Data is what the signed-in pages read and change: one interface per
// area, each declared in the area's file; internal/cabinet/data implements
// them over the store, and the composition root builds it. A nil field:
// that area's pages answer 404.
type Data struct {
	Payments      PaymentsReader    // payments.go
	Cards         CardsData         // cards.go
	Activity      ActivityData      // activity.go: verifications, payouts
	Subscriptions SubscriptionsData // subscriptions.go
	Webhooks      WebhooksData      // webhooks.go: endpoints, event log
	Settings      SettingsData      // settings.go: allowances, channels
	// Reconciliation is reconciliation.go's: the stored runs and breaks.
	Reconciliation ReconciliationData
}

// Pages serves /cabinet/.
type Pages struct {
	cfg      Config
	users    *cabinet.Service
	log      *slog.Logger
	formKeys [][]byte
	payments PaymentsReader
	d        Deps
}

// New builds the pages; the anti-forgery keys derive from the master keys,
// so Deps.Keys is required.
func New(cfg Config, d Deps) (*Pages, error) {
	if d.Users == nil {
		return nil, errors.New("cabinet pages: Deps.Users is required")
	}
	keys, err := formKeys(d.Keys)
	if err != nil {
		return nil, err
	}
	return &Pages{cfg: cfg, users: d.Users, log: d.Log, formKeys: keys, payments: d.Payments, d: d}, nil
}

const (
	sessionCookie = "paygate_cabinet"
	maxFormBody   = 16 << 10
	signInPath    = "/cabinet/sign-in"
)

func (pg *Pages) cookieName(r *http.Request, base string) string {
	if pg.secureCookie(r) {
		return "__Host-" + base
	}
	return base
}

// secureCookie: the browser reached Paygate over https, as the checkout
// decides (forwarded.Proxies.Secure).
func (pg *Pages) secureCookie(r *http.Request) bool {
	return pg.cfg.Proxies.Secure(r, pg.cfg.PublicURL)
}

func (pg *Pages) setCookie(w http.ResponseWriter, r *http.Request, base, value string, maxAge int) {
	// Path=/ and no Domain: what a __Host- cookie must have.
	http.SetCookie(w, &http.Cookie{Name: pg.cookieName(r, base), Value: value, Path: "/", MaxAge: maxAge,
		HttpOnly: true, Secure: pg.secureCookie(r), SameSite: http.SameSiteLaxMode})
}

func (pg *Pages) sessionID(r *http.Request) string {
	c, err := r.Cookie(pg.cookieName(r, sessionCookie))
	if err != nil {
		return ""
	}
	return c.Value
}

// signedIn returns the user of the request's session, or nil.
func (pg *Pages) signedIn(r *http.Request) (*cabinet.User, string, error) {
	id := pg.sessionID(r)
	u, err := pg.users.Session(r.Context(), id)
	return u, id, err
}

// view is what every page template gets.
type view struct {
	Style   template.CSS
	Title   string
	Message string
	Error   string
	CSRF    string
	Email   string
	Token   string
	User    *cabinet.User
	Keys    []merchant.Key
	// Key is the key the page shows, among Keys; the navigation keeps it.
	Key merchant.Key
}

// KeyParam is the query that keeps the shown key in links ("?key=…"), or
// "" when the user has one key.
func (v view) KeyParam() string {
	if len(v.Keys) < 2 || v.Key.ID == "" {
		return ""
	}
	return "?key=" + url.QueryEscape(v.Key.ID)
}

func (pg *Pages) render(w http.ResponseWriter, status int, name string, v view) {
	v.Style = template.CSS(style)
	pg.renderData(w, status, name, v)
}

// renderData renders a page whose data embeds a view with its Style set.
func (pg *Pages) renderData(w http.ResponseWriter, status int, name string, data any) {
	var b strings.Builder
	if err := tmpl.ExecuteTemplate(&b, name, data); err != nil {
		pg.log.Error("cabinet page", "page", name, "error", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	// No script at all; forms post only to Paygate; never framed.
	h.Set("Content-Security-Policy", "default-src 'none'; style-src '"+styleHash+"'; img-src 'self'; "+
		"form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(b.String()))
}

func (pg *Pages) fail(w http.ResponseWriter, err error) {
	pg.log.Error("cabinet page", "error", err)
	pg.render(w, http.StatusInternalServerError, "message", view{Title: "Something went wrong",
		Message: "Something went wrong on our side. Try again in a moment."})
}

func (pg *Pages) forbidden(w http.ResponseWriter, msg string) {
	pg.render(w, http.StatusForbidden, "message", view{Title: "Not allowed", Message: msg})
}

// parseForm reads a bounded form body.
func parseForm(w http.ResponseWriter, r *http.Request) bool {
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBody)
	return r.ParseForm() == nil
}

// SetupPage serves GET /cabinet/setup/{token}: choose a password.
func (pg *Pages) SetupPage() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token := r.PathValue("token")
		u, err := pg.users.SetupUser(r.Context(), token)
		if errors.Is(err, cabinet.ErrSetupInvalid) {
			pg.render(w, http.StatusNotFound, "message", view{Title: "Link not valid",
				Message: "This setup link is unknown, already used or expired. Ask for a new one."})
			return
		} else if err != nil {
			pg.fail(w, err)
			return
		}
		pg.render(w, http.StatusOK, "setup", view{Title: "Choose a password", Email: u.Email, Token: token,
			CSRF: pg.formToken(w, r, setupPurpose(token))})
	})
}

func setupPurpose(token string) string { return "setup:" + cabinet.HashSecret(token) }

// Setup serves POST /cabinet/setup/{token}: set the password, sign in.
func (pg *Pages) Setup() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token := r.PathValue("token")
		if !parseForm(w, r) || !pg.validFormToken(r, setupPurpose(token)) {
			pg.forbidden(w, "This form has expired or did not come from this site. Open the link again.")
			return
		}
		password := r.PostFormValue("password")
		if password != r.PostFormValue("password_again") {
			pg.renderSetupError(w, r, token, "The two passwords differ.")
			return
		}
		id, err := pg.users.CompleteSetup(r.Context(), token, password)
		switch {
		case errors.Is(err, cabinet.ErrShortPassword):
			pg.renderSetupError(w, r, token, "Choose a password of at least 12 characters.")
			return
		case errors.Is(err, cabinet.ErrLongPassword):
			pg.renderSetupError(w, r, token, "Choose a password of at most 1,024 bytes.")
			return
		case errors.Is(err, cabinet.ErrSetupInvalid):
			pg.render(w, http.StatusNotFound, "message", view{Title: "Link not valid",
				Message: "This setup link is unknown, already used or expired. Ask for a new one."})
			return
		case err != nil:
			pg.fail(w, err)
			return
		}
		pg.setCookie(w, r, sessionCookie, id, 0)
		http.Redirect(w, r, "/cabinet/", http.StatusSeeOther)
	})
}

func (pg *Pages) renderSetupError(w http.ResponseWriter, r *http.Request, token, msg string) {
	u, err := pg.users.SetupUser(r.Context(), token)
	if err != nil {
		pg.render(w, http.StatusNotFound, "message", view{Title: "Link not valid",
			Message: "This setup link is unknown, already used or expired. Ask for a new one."})
		return
	}
	pg.render(w, http.StatusUnprocessableEntity, "setup", view{Title: "Choose a password", Email: u.Email,
		Token: token, Error: msg, CSRF: pg.formToken(w, r, setupPurpose(token))})
}

const signInPurpose = "sign-in"

// SignInPage serves GET /cabinet/sign-in.
func (pg *Pages) SignInPage() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, _, err := pg.signedIn(r); err == nil && u != nil {
			http.Redirect(w, r, "/cabinet/", http.StatusSeeOther)
			return
		}
		pg.render(w, http.StatusOK, "sign-in", view{Title: "Sign in", CSRF: pg.formToken(w, r, signInPurpose)})
	})
}

// SignIn serves POST /cabinet/sign-in.
func (pg *Pages) SignIn() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !parseForm(w, r) || !pg.validFormToken(r, signInPurpose) {
			pg.forbidden(w, "This form has expired or did not come from this site. Open the sign-in page again.")
			return
		}
		email := r.PostFormValue("email")
		id, err := pg.users.SignIn(r.Context(), email, r.PostFormValue("password"), pg.cfg.Proxies.ClientIP(r))
		again := func(status int, msg string) {
			pg.render(w, status, "sign-in", view{Title: "Sign in", Email: cabinet.NormalizeEmail(email), Error: msg,
				CSRF: pg.formToken(w, r, signInPurpose)})
		}
		switch {
		case errors.Is(err, cabinet.ErrBadCredentials):
			again(http.StatusUnauthorized, "Wrong email or password.")
			return
		case errors.Is(err, cabinet.ErrThrottled):
			again(http.StatusTooManyRequests, "Too many failed attempts. Try again in 15 minutes.")
			return
		case err != nil:
			pg.fail(w, err)
			return
		}
		pg.setCookie(w, r, sessionCookie, id, 0)
		http.Redirect(w, r, "/cabinet/", http.StatusSeeOther)
	})
}

// SignOut serves POST /cabinet/sign-out: the session ends for every
// process.
func (pg *Pages) SignOut() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pg.sessionID(r)
		if !parseForm(w, r) || !pg.validFormToken(r, sessionPurpose(id)) {
			pg.forbidden(w, "This form has expired or did not come from this site.")
			return
		}
		if err := pg.users.SignOut(r.Context(), id); err != nil {
			pg.fail(w, err)
			return
		}
		pg.setCookie(w, r, sessionCookie, "", -1)
		http.Redirect(w, r, signInPath, http.StatusSeeOther)
	})
}

func sessionPurpose(sessionID string) string { return "session:" + cabinet.HashSecret(sessionID) }

type userKey struct{}

// Signed wraps a signed-in page: without a session the browser goes to the
// sign-in page (a GET) or gets a 403 page (a POST). A POST must carry the
// session's anti-forgery token; Changing adds the role check.
func (pg *Pages) Signed(h func(w http.ResponseWriter, r *http.Request, u *cabinet.User, csrf string)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, id, err := pg.signedIn(r)
		if err != nil {
			pg.fail(w, err)
			return
		}
		if u == nil {
			if r.Method == http.MethodGet || r.Method == http.MethodHead {
				http.Redirect(w, r, signInPath, http.StatusSeeOther)
				return
			}
			pg.forbidden(w, "Your session has ended. Sign in again.")
			return
		}
		if r.Method == http.MethodPost && (!parseForm(w, r) || !pg.validFormToken(r, sessionPurpose(id))) {
			pg.forbidden(w, "This form has expired or did not come from this site.")
			return
		}
		r = r.WithContext(context.WithValue(r.Context(), userKey{}, u))
		h(w, r, u, pg.formToken(w, r, sessionPurpose(id)))
	})
}

// Changing wraps a page that changes data (resend, delete, pause...): as
// Signed, and a viewer gets a 403 page (docs/design/decisions.md section
// 13).
func (pg *Pages) Changing(h func(w http.ResponseWriter, r *http.Request, u *cabinet.User, csrf string)) http.Handler {
	return pg.Signed(func(w http.ResponseWriter, r *http.Request, u *cabinet.User, csrf string) {
		if !u.Role.CanChange() {
			pg.forbidden(w, "Your role (viewer) can look but not change anything. Ask an admin.")
			return
		}
		h(w, r, u, csrf)
	})
}

// scope is the view of a signed-in page with the key it shows: the query's
// "key" among the user's grants, else the first granted key. ok false: the
// answer was written (a key not granted is a 404 page). A user without
// keys gets a view whose Key is zero.
func (pg *Pages) scope(w http.ResponseWriter, r *http.Request, u *cabinet.User, csrf, title string) (view, bool) {
	keys, err := pg.users.Keys(r.Context(), *u)
	if err != nil {
		pg.fail(w, err)
		return view{}, false
	}
	v := view{Style: template.CSS(style), Title: title, User: u, Keys: keys, CSRF: csrf}
	if len(keys) == 0 {
		return v, true
	}
	v.Key = keys[0]
	if id := r.URL.Query().Get("key"); id != "" {
		i := slices.IndexFunc(keys, func(k merchant.Key) bool { return k.ID == id })
		if i < 0 {
			pg.notFound(w, "No such key among yours.")
			return view{}, false
		}
		v.Key = keys[i]
	}
	return v, true
}

// owns reports whether a resource of keyID may be shown to u: another
// key's resource is as unknown as a missing one (docs/design/decisions.md
// section 13).
func owns(u *cabinet.User, keyID string) bool { return slices.Contains(u.KeyIDs, keyID) }

// Home serves GET /cabinet/: the keys the user was granted.
func (pg *Pages) Home() http.Handler {
	return pg.Signed(func(w http.ResponseWriter, r *http.Request, u *cabinet.User, csrf string) {
		v, ok := pg.scope(w, r, u, csrf, "Cabinet")
		if ok {
			pg.renderData(w, http.StatusOK, "home", v)
		}
	})
}
