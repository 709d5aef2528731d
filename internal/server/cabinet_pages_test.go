package server_test

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/cabinet"
	"github.com/paygate/paygate/internal/store/storetest"
)

// staffBrowser is a cookie-keeping HTTP client that does not follow redirects.
type staffBrowser struct {
	t *testing.T
	c *http.Client
}

func newStaffBrowser(t *testing.T) *staffBrowser {
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	return &staffBrowser{t: t, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}}
}

var csrfRE = regexp.MustCompile(`name="csrf_token" value="([^"]+)"`)

// get returns the status, the body and the page's anti-forgery token.
func (b *staffBrowser) get(u string) (int, string, string) {
	resp, err := b.c.Get(u)
	require.NoError(b.t, err)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	token := ""
	if m := csrfRE.FindSubmatch(body); m != nil {
		token = string(m[1])
	}
	return resp.StatusCode, string(body), token
}

func (b *staffBrowser) post(u string, form url.Values) (int, string, string) {
	resp, err := b.c.PostForm(u, form)
	require.NoError(b.t, err)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), resp.Header.Get("Location")
}

// TestCabinetSignIn drives the cabinet's pages with plain HTTP on both
// databases (docs/design/decisions.md section 13): the setup link works
// once, sign-in and its refusals, throttling, a session shared by two
// processes and ended everywhere by sign-out, forged forms refused, a user
// of key A never sees key B, a disabled user's session ends.
func TestCabinetSignIn(t *testing.T) {
	each(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{})
		ctx := context.Background()
		users := e.app.Cabinet
		_, token, err := users.CreateUser(ctx, "ann@example.com", cabinet.Admin, []string{e.aKey.ID})
		require.NoError(t, err)
		const password = "a long passphrase"

		ann := newStaffBrowser(t)
		status, body, csrf := ann.get(e.url + "/cabinet/setup/" + token)
		require.Equal(t, http.StatusOK, status, body)
		require.Contains(t, body, "ann@example.com")
		resp, err := ann.c.Get(e.url + "/cabinet/setup/" + token)
		require.NoError(t, err)
		resp.Body.Close()
		require.Contains(t, resp.Header.Get("Content-Security-Policy"), "default-src 'none'")
		require.Contains(t, resp.Header.Get("Content-Security-Policy"), "form-action 'self'")

		setup := url.Values{"password": {password}, "password_again": {password}}
		status, _, _ = ann.post(e.url+"/cabinet/setup/"+token, setup)
		require.Equal(t, http.StatusForbidden, status, "no anti-forgery token")
		setup.Set("csrf_token", csrf+"x")
		status, _, _ = ann.post(e.url+"/cabinet/setup/"+token, setup)
		require.Equal(t, http.StatusForbidden, status, "a forged token")
		stranger := newStaffBrowser(t)
		setup.Set("csrf_token", csrf)
		status, _, _ = stranger.post(e.url+"/cabinet/setup/"+token, setup)
		require.Equal(t, http.StatusForbidden, status, "another browser's token")
		status, _, loc := ann.post(e.url+"/cabinet/setup/"+token, setup)
		require.Equal(t, http.StatusSeeOther, status)
		require.Equal(t, "/cabinet/", loc)
		status, _, _ = ann.get(e.url + "/cabinet/setup/" + token)
		require.Equal(t, http.StatusNotFound, status, "the link works once")

		status, body, _ = ann.get(e.url + "/cabinet/")
		require.Equal(t, http.StatusOK, status)
		require.Contains(t, body, e.aKey.AccessKey)
		require.NotContains(t, body, e.bKey.AccessKey, "key A's user never sees key B")

		// A second process on the same database knows the session; signing
		// out there ends it here too.
		other := e.apiProcess()
		status, body, csrf = ann.get(other + "/cabinet/")
		require.Equal(t, http.StatusOK, status)
		require.Contains(t, body, e.aKey.AccessKey)
		status, _, _ = ann.post(other+"/cabinet/sign-out", url.Values{"csrf_token": {"forged"}})
		require.Equal(t, http.StatusForbidden, status)
		status, _, loc = ann.post(other+"/cabinet/sign-out", url.Values{"csrf_token": {csrf}})
		require.Equal(t, http.StatusSeeOther, status)
		require.Equal(t, "/cabinet/sign-in", loc)
		status, _, _ = ann.get(e.url + "/cabinet/")
		require.Equal(t, http.StatusSeeOther, status, "signed out everywhere")

		// Sign in: wrong password and unknown email answer alike.
		signIn := func(b *staffBrowser, base, email, pw string) (int, string) {
			_, _, csrf := b.get(base + "/cabinet/sign-in")
			status, body, _ := b.post(base+"/cabinet/sign-in", url.Values{"email": {email}, "password": {pw}, "csrf_token": {csrf}})
			return status, body
		}
		status, body = signIn(ann, e.url, "ann@example.com", "wrong wrong wrong")
		require.Equal(t, http.StatusUnauthorized, status)
		require.Contains(t, body, "Wrong email or password.")
		status, body = signIn(ann, e.url, "nobody@example.com", password)
		require.Equal(t, http.StatusUnauthorized, status)
		require.Contains(t, body, "Wrong email or password.")
		status, _, _ = ann.post(e.url+"/cabinet/sign-in", url.Values{"email": {"ann@example.com"}, "password": {password}})
		require.Equal(t, http.StatusForbidden, status, "no anti-forgery token")
		status, _ = signIn(ann, e.url, "ANN@example.com", password)
		require.Equal(t, http.StatusSeeOther, status)
		status, _, _ = ann.get(other + "/cabinet/")
		require.Equal(t, http.StatusOK, status)

		// Throttling: five failures, then even the right password waits for
		// the window to end.
		for range cabinet.EmailAttempts {
			status, _ = signIn(stranger, e.url, "ann@example.com", "guess guess guess")
			require.Equal(t, http.StatusUnauthorized, status)
		}
		status, body = signIn(stranger, other, "ann@example.com", password)
		require.Equal(t, http.StatusTooManyRequests, status, body)
		e.clock.Add(cabinet.ThrottleWindow)
		status, _ = signIn(stranger, other, "ann@example.com", password)
		require.Equal(t, http.StatusSeeOther, status)

		// Disabling ends every session of the user.
		require.NoError(t, users.Disable(ctx, "ann@example.com"))
		for _, b := range []*staffBrowser{ann, stranger} {
			status, _, _ = b.get(other + "/cabinet/")
			require.Equal(t, http.StatusSeeOther, status)
		}
		status, _ = signIn(ann, e.url, "ann@example.com", password)
		require.Equal(t, http.StatusUnauthorized, status)
		require.False(t, strings.Contains(body, password))
	})
}
