package pages_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/app"
	"github.com/paygate/paygate/internal/cabinet"
	"github.com/paygate/paygate/internal/cabinet/data"
	"github.com/paygate/paygate/internal/cabinet/pages"
	"github.com/paygate/paygate/internal/merchant"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/store"
	"github.com/paygate/paygate/internal/store/storetest"
	"github.com/paygate/paygate/internal/subscription"
	"github.com/paygate/paygate/internal/vault"
)

// The pages' own tests drive the handlers in process, on a mux mounted as
// internal/server/routes.go mounts them, over a real database of each kind
// (storetest), the real cabinet.Service and the real cabinet/data adapter
// with the domain services the composition root (internal/app) builds.

// testClock is the clock of the pages, the users and the data: a test
// moves it instead of waiting.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// password is every test user's password.
const password = "a long passphrase"

// env is the pages on one fresh database, with two sandbox keys.
type env struct {
	store *store.Store
	clock *testClock
	kr    *vault.Keyring
	users *cabinet.Service
	mux   *http.ServeMux
	a, b  merchant.Key
}

// options are what a test may change of the pages' deployment.
type options struct {
	cfg    pages.Config
	export pages.ExportFunc
}

// eachDB runs fn as a parallel subtest on every database, each with a
// database of its own (storetest.Open makes a fresh one per call).
func eachDB(t *testing.T, fn func(t *testing.T, db storetest.Database)) {
	t.Helper()
	for _, db := range storetest.Databases(t) {
		t.Run(db.Name, func(t *testing.T) {
			t.Parallel()
			fn(t, db)
		})
	}
}

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func newEnv(t *testing.T, db storetest.Database, o options) *env {
	t.Helper()
	s := storetest.Open(t, db)
	clk := &testClock{t: time.Now().UTC().Truncate(time.Second)}
	kr := vault.New()
	graph, err := app.New(app.Config{Store: s, Keyring: kr, Now: clk.Now, Log: discard(), Providers: provider.Registry{},
		Environment: merchant.Sandbox, Version: "test", PublicURL: "https://pay.example",
		// Cheap Argon2id parameters: the recommended ones are tested in
		// internal/cabinet.
		CabinetParams: cabinet.Params{Time: 1, Memory: 64, Threads: 1}})
	require.NoError(t, err)
	pg, err := pages.New(o.cfg, pages.Deps{Users: graph.Cabinet, Keys: kr, Log: discard(),
		Data: data.New(s, clk.Now, nil, graph.Subscriptions, graph.Webhooks), Export: o.export})
	require.NoError(t, err)
	e := &env{store: s, clock: clk, kr: kr, users: graph.Cabinet, mux: http.NewServeMux()}
	mount(e.mux, pg)
	e.a = storetest.SandboxKey(t, s, false)
	e.b = storetest.SandboxKey(t, s, false)
	return e
}

// mount registers the pages as internal/server/routes.go does.
func mount(mux *http.ServeMux, pg *pages.Pages) {
	for pattern, h := range map[string]http.Handler{
		"GET /cabinet/setup/{token}":              pg.SetupPage(),
		"POST /cabinet/setup/{token}":             pg.Setup(),
		"GET /cabinet/sign-in":                    pg.SignInPage(),
		"POST /cabinet/sign-in":                   pg.SignIn(),
		"POST /cabinet/sign-out":                  pg.SignOut(),
		"GET /cabinet/{$}":                        pg.Home(),
		"GET /cabinet/payments":                   pg.PaymentsPage(),
		"GET /cabinet/payments/{id}":              pg.PaymentPage(),
		"GET /cabinet/payments/export":            pg.ExportPayments(),
		"GET /cabinet/payments/totals":            pg.TotalsPage(),
		"GET /cabinet/cards":                      pg.CardsPage(),
		"POST /cabinet/cards/{id}/delete":         pg.DeleteCard(),
		"GET /cabinet/verifications":              pg.VerificationsPage(),
		"GET /cabinet/verifications/{id}":         pg.VerificationPage(),
		"GET /cabinet/payouts":                    pg.PayoutsPage(),
		"GET /cabinet/payouts/{id}":               pg.PayoutPage(),
		"GET /cabinet/subscriptions":              pg.SubscriptionsPage(),
		"GET /cabinet/subscriptions/{id}":         pg.SubscriptionPage(),
		"POST /cabinet/subscriptions/{id}/pause":  pg.ActOnSubscription(subscription.Pause),
		"POST /cabinet/subscriptions/{id}/resume": pg.ActOnSubscription(subscription.Resume),
		"POST /cabinet/subscriptions/{id}/cancel": pg.ActOnSubscription(subscription.Cancel),
		"GET /cabinet/webhooks":                   pg.WebhooksPage(),
		"GET /cabinet/events":                     pg.EventsPage(),
		"GET /cabinet/events/{id}":                pg.EventPage(),
		"POST /cabinet/events/{id}/resend":        pg.ResendEvent(),
		"GET /cabinet/allowances":                 pg.AllowancesPage(),
		"GET /cabinet/channels":                   pg.ChannelsPage(),

		// The reconciliation pages (reconciliation.go).
		"GET /cabinet/reconciliation":                            pg.ReconciliationPage(),
		"GET /cabinet/reconciliation/{account}/{day}":            pg.ReconciliationDayPage(),
		"GET /cabinet/reconciliation/{account}/{day}/breaks.csv": pg.ReconciliationCSV(),
	} {
		mux.Handle(pattern, h)
	}
}

// browser keeps cookies as a browser does for one site (a Set-Cookie with
// Max-Age < 0 removes one) and sends them all back; where a cookie is sent
// (Secure, __Host-) is the pages' choice of name and attributes, which the
// tests read from the answers.
type browser struct {
	t    *testing.T
	e    *env
	base string // scheme and host: "https://…" makes a TLS request
	// remote is the socket peer; header is added to every request (a
	// proxy's X-Forwarded-For, X-Forwarded-Proto).
	remote  string
	header  http.Header
	cookies map[string]*http.Cookie
}

func (e *env) browser(t *testing.T) *browser {
	return &browser{t: t, e: e, base: "http://cabinet.test", remote: "192.0.2.10:40000", header: http.Header{},
		cookies: map[string]*http.Cookie{}}
}

// answer is one response as a test reads it.
type answer struct {
	status   int
	body     string
	header   http.Header
	cookies  []*http.Cookie // set by this answer
	location string
}

var csrfRE = regexp.MustCompile(`name="csrf_token" value="([^"]+)"`)

// csrf is the page's anti-forgery token, "" when it has none.
func (a answer) csrf() string {
	if m := csrfRE.FindStringSubmatch(a.body); m != nil {
		return m[1]
	}
	return ""
}

// cookie is the cookie of that name this answer set, or nil.
func (a answer) cookie(name string) *http.Cookie {
	for _, c := range a.cookies {
		if c.Name == name {
			return c
		}
	}
	return nil
}

func (b *browser) do(method, target string, form url.Values) answer {
	b.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	r := httptest.NewRequest(method, b.base+target, body)
	if form != nil {
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	r.RemoteAddr = b.remote
	for k, vs := range b.header {
		r.Header[k] = vs
	}
	for _, c := range b.cookies {
		r.AddCookie(&http.Cookie{Name: c.Name, Value: c.Value})
	}
	w := httptest.NewRecorder()
	b.e.mux.ServeHTTP(w, r)
	resp := w.Result()
	for _, c := range resp.Cookies() {
		if c.MaxAge < 0 {
			delete(b.cookies, c.Name)
		} else {
			b.cookies[c.Name] = c
		}
	}
	return answer{status: resp.StatusCode, body: w.Body.String(), header: resp.Header, cookies: resp.Cookies(),
		location: resp.Header.Get("Location")}
}

func (b *browser) get(target string) answer { b.t.Helper(); return b.do(http.MethodGet, target, nil) }

func (b *browser) post(target string, form url.Values) answer {
	b.t.Helper()
	if form == nil {
		form = url.Values{}
	}
	return b.do(http.MethodPost, target, form)
}

// token is the anti-forgery token of the page at target, which must have
// one.
func (b *browser) token(target string) string {
	b.t.Helper()
	a := b.get(target)
	require.Equal(b.t, http.StatusOK, a.status, a.body)
	tok := a.csrf()
	require.NotEmpty(b.t, tok, "no form on %s", target)
	return tok
}

// user makes a user of the role and keys whose password is set (through
// the service, not the pages) and returns its email.
func (e *env) user(t *testing.T, email string, role cabinet.Role, keys ...merchant.Key) string {
	t.Helper()
	ctx := context.Background()
	ids := make([]string, len(keys))
	for i, k := range keys {
		ids[i] = k.ID
	}
	_, token, err := e.users.CreateUser(ctx, email, role, ids)
	require.NoError(t, err)
	_, err = e.users.CompleteSetup(ctx, token, password)
	require.NoError(t, err)
	return email
}

// signIn signs the browser in through the sign-in page.
func (b *browser) signIn(email string) {
	b.t.Helper()
	tok := b.token("/cabinet/sign-in")
	a := b.post("/cabinet/sign-in", url.Values{"email": {email}, "password": {password}, "csrf_token": {tok}})
	require.Equal(b.t, http.StatusSeeOther, a.status, a.body)
}

// signedIn is a new browser signed in as a new user of the role and keys.
func (e *env) signedIn(t *testing.T, email string, role cabinet.Role, keys ...merchant.Key) *browser {
	t.Helper()
	e.user(t, email, role, keys...)
	b := e.browser(t)
	b.signIn(email)
	return b
}
