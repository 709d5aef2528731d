package pages_test

import (
	"context"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/cabinet"
	"github.com/paygate/paygate/internal/cabinet/pages"
	"github.com/paygate/paygate/internal/forwarded"
	"github.com/paygate/paygate/internal/store/storetest"
)

// behindProxy: the pages' public URL is https and 10.0.0.0/8 are the
// trusted proxies (serve --trusted-proxy).
var behindProxy = options{cfg: pages.Config{PublicURL: "https://pay.example",
	Proxies: forwarded.Proxies{netip.MustParsePrefix("10.0.0.0/8")}}}

// tokenAndEmail blank out what differs between two sign-in pages that
// must otherwise be the same: the form's token and the email typed.
var (
	tokenValue = regexp.MustCompile(`name="csrf_token" value="[^"]*"`)
	emailValue = regexp.MustCompile(`name="email" type="email" autocomplete="username" value="[^"]*"`)
)

func sameAnswer(body string) string {
	return emailValue.ReplaceAllString(tokenValue.ReplaceAllString(body, "TOKEN"), "EMAIL")
}

// signInAs posts the sign-in form of a page the browser opened.
func (b *browser) signInAs(email, pw string) answer {
	b.t.Helper()
	tok := b.token("/cabinet/sign-in")
	return b.post("/cabinet/sign-in", url.Values{"email": {email}, "password": {pw}, "csrf_token": {tok}})
}

// TestSignIn: the sign-in page (docs/cabinet.md, "Security choices"): the
// right password signs in, whatever the email's case; a wrong password, an
// unknown email, a disabled user and one who never chose a password all
// get the same 401 page, without a session; a signed-in browser is sent
// home.
func TestSignIn(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, behindProxy)
		ctx := context.Background()
		ann := e.user(t, "ann@example.com", cabinet.Viewer, e.a)
		require.NoError(t, e.users.Disable(ctx, e.user(t, "dora@example.com", cabinet.Admin, e.a)))
		_, _, err := e.users.CreateUser(ctx, "nina@example.com", cabinet.Admin, []string{e.a.ID}) // no password yet
		require.NoError(t, err)

		t.Run("the right password signs in", func(t *testing.T) {
			for _, email := range []string{ann, " ANN@Example.COM "} {
				b := e.browser(t)
				a := b.signInAs(email, password)
				require.Equal(t, http.StatusSeeOther, a.status, a.body)
				require.Equal(t, "/cabinet/", a.location)
				require.NotNil(t, a.cookie("paygate_cabinet"), email)
				home := b.get("/cabinet/")
				require.Equal(t, http.StatusOK, home.status)
				require.Contains(t, home.body, "ann@example.com (viewer)")
			}
		})

		wrong := e.browser(t).signInAs(ann, "not the passphrase")
		t.Run("a wrong password", func(t *testing.T) {
			require.Equal(t, http.StatusUnauthorized, wrong.status)
			require.Contains(t, wrong.body, "Wrong email or password.")
			require.Contains(t, wrong.body, `value="ann@example.com"`, "the email is kept in the form")
			require.NotContains(t, wrong.body, "not the passphrase", "never the password")
			require.Nil(t, wrong.cookie("paygate_cabinet"))
			require.NotEmpty(t, wrong.csrf(), "the form can be sent again")
		})
		for _, c := range []struct{ name, email, pw string }{
			{"an unknown email", "nobody@example.com", password},
			{"a disabled user", "dora@example.com", password},
			{"a user who never chose a password", "nina@example.com", password},
		} {
			t.Run(c.name+" answers as a wrong password", func(t *testing.T) {
				a := e.browser(t).signInAs(c.email, c.pw)
				require.Equal(t, http.StatusUnauthorized, a.status)
				require.Nil(t, a.cookie("paygate_cabinet"))
				require.Equal(t, sameAnswer(wrong.body), sameAnswer(a.body))
			})
		}

		t.Run("a signed-in browser is sent home", func(t *testing.T) {
			b := e.browser(t)
			b.signIn(ann)
			a := b.get("/cabinet/sign-in")
			require.Equal(t, http.StatusSeeOther, a.status)
			require.Equal(t, "/cabinet/", a.location)
		})
	})
}

// TestSignInThrottle: failed sign-ins are throttled per email and per
// client address (docs/cabinet.md, "Security choices"): the refusal is
// the same page for a known and an unknown email, it comes before the
// password is checked and lasts until the window is over; the address is
// the one the trusted proxies name, never one an untrusted peer claims;
// a form refused for its token takes no attempt.
func TestSignInThrottle(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, behindProxy)

		t.Run("an email's window", func(t *testing.T) {
			ann := e.user(t, "ann@example.com", cabinet.Admin, e.a)
			b := e.browser(t)
			b.remote = "192.0.2.21:40000"
			var refused [2]answer
			for i, email := range []string{ann, "nobody@example.com"} {
				for range cabinet.EmailAttempts {
					require.Equal(t, http.StatusUnauthorized, b.signInAs(email, "guess guess guess").status)
				}
				refused[i] = b.signInAs(email, password)
				require.Equal(t, http.StatusTooManyRequests, refused[i].status, email)
				require.Contains(t, refused[i].body, "Too many failed attempts. Try again in 15 minutes.")
				require.Nil(t, refused[i].cookie("paygate_cabinet"))
			}
			require.Equal(t, sameAnswer(refused[0].body), sameAnswer(refused[1].body), "a known and an unknown email alike")

			e.clock.Add(cabinet.ThrottleWindow)
			require.Equal(t, http.StatusSeeOther, b.signInAs(ann, password).status, "the window is over")
		})

		t.Run("an address's window, read through the trusted proxies", func(t *testing.T) {
			bob := e.user(t, "bob@example.com", cabinet.Admin, e.a)
			via := func(client string) *browser {
				b := e.browser(t)
				b.remote, b.header = "10.0.0.1:40000", http.Header{"X-Forwarded-For": {client}}
				return b
			}
			guesser := via("198.51.100.7")
			for i := range cabinet.IPAttempts {
				a := guesser.signInAs(fmt.Sprintf("guess-%d@example.com", i), "guess guess guess")
				require.Equal(t, http.StatusUnauthorized, a.status, i)
			}
			a := via("198.51.100.7").signInAs(bob, password)
			require.Equal(t, http.StatusTooManyRequests, a.status, "the address's window is full")
			a = via("198.51.100.8").signInAs(bob, password)
			require.Equal(t, http.StatusSeeOther, a.status, "another client behind the same proxy")
		})

		t.Run("an untrusted peer's forwarded address is not believed", func(t *testing.T) {
			cy := e.user(t, "cy@example.com", cabinet.Admin, e.a)
			b := e.browser(t)
			b.remote = "203.0.113.9:40000"
			for i := range cabinet.IPAttempts {
				b.header = http.Header{"X-Forwarded-For": {fmt.Sprintf("198.51.100.%d", 100+i)}}
				require.Equal(t, http.StatusUnauthorized, b.signInAs(fmt.Sprintf("try-%d@example.com", i), "guess guess guess").status)
			}
			b.header = http.Header{"X-Forwarded-For": {"198.51.100.250"}}
			require.Equal(t, http.StatusTooManyRequests, b.signInAs(cy, password).status)
		})

		t.Run("a form refused for its token takes no attempt", func(t *testing.T) {
			dee := e.user(t, "dee@example.com", cabinet.Admin, e.a)
			b := e.browser(t)
			b.remote = "192.0.2.22:40000"
			for range 2 * cabinet.EmailAttempts {
				a := b.post("/cabinet/sign-in", url.Values{"email": {dee}, "password": {"guess guess guess"}})
				require.Equal(t, http.StatusForbidden, a.status)
			}
			require.Equal(t, http.StatusSeeOther, b.signInAs(dee, password).status)
		})
	})
}

// TestSessionCookie: the cookies' names and attributes (docs/cabinet.md,
// "Security choices"): HttpOnly, SameSite=Lax, Path=/ and no Domain
// always; Secure and the __Host- prefix when the browser reached Paygate
// over https (TLS, the https public URL's host, or a trusted proxy saying
// https), never on a proxy's word from an untrusted peer. The session
// cookie ends with the browser; a session is read only under the name it
// was written with.
func TestSessionCookie(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, behindProxy)
		for i, c := range []struct {
			name, base, remote, proto string
			secure                    bool
		}{
			{"plain http", "http://cabinet.test", "192.0.2.30:1", "", false},
			{"TLS", "https://cabinet.test", "192.0.2.30:1", "", true},
			{"the https public URL's host", "http://pay.example", "192.0.2.30:1", "", true},
			{"a trusted proxy saying https", "http://backend.internal", "10.0.0.1:1", "https", true},
			{"an untrusted peer saying https", "http://backend.internal", "203.0.113.9:1", "https", false},
		} {
			t.Run(c.name, func(t *testing.T) {
				email := e.user(t, fmt.Sprintf("user%d@example.com", i), cabinet.Admin, e.a)
				b := e.browser(t)
				b.base, b.remote = c.base, c.remote
				if c.proto != "" {
					b.header.Set("X-Forwarded-Proto", c.proto)
				}
				prefix, other := "", "__Host-"
				if c.secure {
					prefix, other = other, prefix
				}
				page := b.get("/cabinet/sign-in")
				browserCookie := page.cookie(prefix + "paygate_cabinet_browser")
				require.NotNil(t, browserCookie, page.header.Values("Set-Cookie"))
				require.Equal(t, 12*3600, browserCookie.MaxAge)
				a := b.post("/cabinet/sign-in", url.Values{"email": {email}, "password": {password}, "csrf_token": {page.csrf()}})
				require.Equal(t, http.StatusSeeOther, a.status, a.body)
				session := a.cookie(prefix + "paygate_cabinet")
				require.NotNil(t, session, a.header.Values("Set-Cookie"))
				require.Zero(t, session.MaxAge, "ends with the browser")
				require.Empty(t, session.RawExpires, "ends with the browser")
				for _, ck := range []*http.Cookie{browserCookie, session} {
					require.Equal(t, c.secure, ck.Secure, ck.Name)
					require.True(t, ck.HttpOnly, ck.Name)
					require.Equal(t, http.SameSiteLaxMode, ck.SameSite, ck.Name)
					require.Equal(t, "/", ck.Path, ck.Name)
					require.Empty(t, ck.Domain, ck.Name)
				}
				require.Equal(t, http.StatusOK, b.get("/cabinet/").status, "read under the name it was written with")

				b.cookies = map[string]*http.Cookie{other + "paygate_cabinet": {Name: other + "paygate_cabinet", Value: session.Value}}
				a = b.get("/cabinet/")
				require.Equal(t, http.StatusSeeOther, a.status, "under the other name it is no session")
				require.Equal(t, "/cabinet/sign-in", a.location)
			})
		}
	})
}

// TestSignOut: signing out ends the session in the database, not only in
// the browser (docs/cabinet.md, "Security choices"): the cookie is
// cleared, the old cookie is no session for a GET nor a POST, and the
// user's other sessions go on.
func TestSignOut(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{})
		ann := e.user(t, "ann@example.com", cabinet.Admin, e.a)
		b, other := e.browser(t), e.browser(t)
		b.signIn(ann)
		other.signIn(ann)
		old := b.cookies["paygate_cabinet"].Value
		browserID := b.cookies["paygate_cabinet_browser"].Value
		tok := b.token("/cabinet/")

		a := b.post("/cabinet/sign-out", url.Values{"csrf_token": {tok}})
		require.Equal(t, http.StatusSeeOther, a.status, a.body)
		require.Equal(t, "/cabinet/sign-in", a.location)
		cleared := a.cookie("paygate_cabinet")
		require.NotNil(t, cleared)
		require.Negative(t, cleared.MaxAge, "the cookie is cleared")
		require.Empty(t, cleared.Value)
		require.Equal(t, "/cabinet/sign-in", b.get("/cabinet/").location)

		// The old cookie, replayed, is no session.
		b.cookies["paygate_cabinet"] = &http.Cookie{Name: "paygate_cabinet", Value: old}
		b.cookies["paygate_cabinet_browser"] = &http.Cookie{Name: "paygate_cabinet_browser", Value: browserID}
		a = b.get("/cabinet/")
		require.Equal(t, http.StatusSeeOther, a.status)
		require.Equal(t, "/cabinet/sign-in", a.location)
		card := e.card(t, e.a, "cust-1", e.clock.Now())
		a = b.post("/cabinet/cards/"+card.ID+"/delete", url.Values{"csrf_token": {tok}})
		require.Equal(t, http.StatusForbidden, a.status, "the ended session's form")
		require.Contains(t, a.body, "Your session has ended.")
		require.True(t, e.usable(t, e.a, card.ID))

		require.Equal(t, http.StatusOK, other.get("/cabinet/").status, "the user's other session goes on")
	})
}
