package server_test

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/cabinet"
	"github.com/paygate/paygate/internal/store/storetest"
)

// TestCabinetCookies checks the cabinet's cookies (docs/design/decisions.md
// section 13; docs/cabinet.md, "Security choices"): requests naming the
// https public URL's host get __Host- cookies that are Secure, HttpOnly,
// SameSite=Lax, Path=/ and without Domain; a plain-http host gets the plain
// names without Secure; a session cookie under the other name is no
// session.
func TestCabinetCookies(t *testing.T) {
	each(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{})
		_, token, err := e.app.Cabinet.CreateUser(context.Background(), "cy@example.com", cabinet.Admin, []string{e.aKey.ID})
		require.NoError(t, err)
		noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		do := func(method, path, host string, cookies []*http.Cookie, form url.Values) (*http.Response, string) {
			var body io.Reader
			if form != nil {
				body = strings.NewReader(form.Encode())
			}
			req, err := http.NewRequest(method, e.url+path, body)
			require.NoError(t, err)
			req.Host = host
			if form != nil {
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			}
			for _, c := range cookies {
				req.AddCookie(&http.Cookie{Name: c.Name, Value: c.Value})
			}
			resp, err := noRedirect.Do(req)
			require.NoError(t, err)
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			return resp, string(b)
		}
		named := func(cs []*http.Cookie, name string) *http.Cookie {
			for _, c := range cs {
				if c.Name == name {
					return c
				}
			}
			return nil
		}

		// Through the https host: __Host- names, Secure.
		resp, page := do("GET", "/cabinet/setup/"+token, "pay.example", nil, nil)
		require.Equal(t, http.StatusOK, resp.StatusCode, page)
		browser := named(resp.Cookies(), "__Host-paygate_cabinet_browser")
		require.NotNil(t, browser, resp.Header.Values("Set-Cookie"))
		csrf := csrfRE.FindStringSubmatch(page)[1]
		const pw = "a long passphrase"
		resp, _ = do("POST", "/cabinet/setup/"+token, "pay.example", []*http.Cookie{browser},
			url.Values{"password": {pw}, "password_again": {pw}, "csrf_token": {csrf}})
		require.Equal(t, http.StatusSeeOther, resp.StatusCode)
		session := named(resp.Cookies(), "__Host-paygate_cabinet")
		require.NotNil(t, session, resp.Header.Values("Set-Cookie"))
		for _, c := range []*http.Cookie{browser, session} {
			require.True(t, c.Secure, c.Name)
			require.True(t, c.HttpOnly, c.Name)
			require.Equal(t, http.SameSiteLaxMode, c.SameSite, c.Name)
			require.Equal(t, "/", c.Path, c.Name)
			require.Empty(t, c.Domain, c.Name)
		}
		resp, page = do("GET", "/cabinet/payments", "pay.example", []*http.Cookie{browser, session}, nil)
		require.Equal(t, http.StatusOK, resp.StatusCode, page)

		// The same session value under the plain name, or over plain http,
		// is no session.
		plain := &http.Cookie{Name: "paygate_cabinet", Value: session.Value}
		resp, _ = do("GET", "/cabinet/payments", "pay.example", []*http.Cookie{plain}, nil)
		require.Equal(t, http.StatusSeeOther, resp.StatusCode)
		resp, _ = do("GET", "/cabinet/payments", "127.0.0.1", []*http.Cookie{session}, nil)
		require.Equal(t, http.StatusSeeOther, resp.StatusCode)

		// Over a plain-http host: plain names, not Secure, still HttpOnly
		// and SameSite=Lax.
		resp, _ = do("GET", "/cabinet/sign-in", "127.0.0.1", nil, nil)
		c := named(resp.Cookies(), "paygate_cabinet_browser")
		require.NotNil(t, c, resp.Header.Values("Set-Cookie"))
		require.False(t, c.Secure)
		require.True(t, c.HttpOnly)
		require.Equal(t, http.SameSiteLaxMode, c.SameSite)
	})
}
