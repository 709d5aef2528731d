package server_test

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"io"
	"net/http"
	"net/netip"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/app"
	"github.com/paygate/paygate/internal/server"
	"github.com/paygate/paygate/internal/store/storetest"
	"github.com/paygate/paygate/internal/vault"
)

// The checkout's anti-forgery token (docs/checkout.md, "Security") is
// keyed by a key derived from the master keys, bound to the
// browser's cookie and to the session. These tests run several Paygate
// processes on one database, as a cluster does, with the same or other
// master keys.

// peer starts another Paygate process on e's database with the master keys
// keys; edit, when not nil, changes its configuration.
func (e *env) peer(t *testing.T, keys *vault.Keyring, edit func(*app.Config)) string {
	t.Helper()
	cfg := e.cfg
	cfg.FormKeys, cfg.Work = keys, false
	if edit != nil {
		edit(&cfg)
	}
	return e.process(cfg)
}

// noJar is a browser that sends exactly the cookies a test gives it, so a
// test can plant one, and follows no redirect.
var noJar = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// issue opens the session's page at base (with Host host when not empty)
// as a browser without cookies, and returns the cookie it was given and
// the form's token.
func issue(t *testing.T, base, host, sessionID string) (*http.Cookie, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, base+"/checkout/"+sessionID, nil)
	require.NoError(t, err)
	req.Header.Set("Accept", "text/html")
	if host != "" {
		req.Host = host
	}
	resp, err := noJar.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	m := tokenField.FindStringSubmatch(string(body))
	require.NotNil(t, m, "no token on the page")
	cookies := resp.Cookies()
	require.Len(t, cookies, 1)
	return cookies[0], m[1]
}

// submitCard posts a card form for the session to base with cookie c (none
// when nil) and token, and returns the status.
func submitCard(t *testing.T, base, host, sessionID string, c *http.Cookie, token string) int {
	t.Helper()
	form := cardForm("4242424242424242")
	form.Set("csrf_token", token)
	req, err := http.NewRequest(http.MethodPost, base+"/checkout/"+sessionID, strings.NewReader(form.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "text/html")
	if host != "" {
		req.Host = host
	}
	if c != nil {
		req.AddCookie(&http.Cookie{Name: c.Name, Value: c.Value})
	}
	resp, err := noJar.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	return resp.StatusCode
}

// oldToken is the token as Paygate computed it up to 2df415d: keyed by the
// cookie, so anyone who chose the cookie could compute it.
func oldToken(cookie, sessionID string) string {
	m := hmac.New(sha256.New, []byte(cookie))
	m.Write([]byte("paygate checkout form\x00" + sessionID))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// keyLine is one master key in the key file format, with a random key.
func keyLine(id string) string {
	k := make([]byte, 32)
	_, _ = rand.Read(k)
	return id + " " + base64.StdEncoding.EncodeToString(k)
}

func parseRing(t *testing.T, text string) *vault.Keyring {
	t.Helper()
	k, err := vault.Parse(text)
	require.NoError(t, err)
	return k
}

func TestCheckoutForgery(t *testing.T) {
	each(t, func(t *testing.T, db storetest.Database) {
		// The keys after a rotation: a new active key, the old one kept.
		oldKey, newKey := keyLine("mk_0000000a"), keyLine("mk_0000000b")
		e := newEnv(t, db, options{work: true, keyring: parseRing(t, newKey+"\n"+oldKey)})
		sibling := e.peer(t, e.cfg.Keyring, nil)                                          // another process of the cluster
		beforeRotation := e.peer(t, parseRing(t, oldKey), nil)                            // a process not yet given the new key
		retired := e.peer(t, parseRing(t, newKey), nil)                                   // the old key removed from the ring
		otherInstallation := e.peer(t, vault.New(), nil)                                  // another master key altogether
		planted := &http.Cookie{Name: "paygate_checkout", Value: strings.Repeat("A", 43)} // the attacker's choice

		tests := []struct {
			name string
			// forge returns where the form goes and what it carries, for
			// session s; other is another session of the same merchant.
			forge func(t *testing.T, s, other string) (checker string, c *http.Cookie, token string)
			want  int
		}{
			{"the page's own cookie and token", func(t *testing.T, s, _ string) (string, *http.Cookie, string) {
				c, tok := issue(t, e.url, "", s)
				return e.url, c, tok
			}, http.StatusSeeOther},
			{"a form issued by another process of the cluster", func(t *testing.T, s, _ string) (string, *http.Cookie, string) {
				c, tok := issue(t, sibling, "", s)
				return e.url, c, tok
			}, http.StatusSeeOther},
			{"a form issued before a master-key rotation", func(t *testing.T, s, _ string) (string, *http.Cookie, string) {
				c, tok := issue(t, beforeRotation, "", s)
				return e.url, c, tok
			}, http.StatusSeeOther},
			{"a planted cookie with the token computed from it", func(t *testing.T, s, _ string) (string, *http.Cookie, string) {
				return e.url, planted, oldToken(planted.Value, s)
			}, http.StatusForbidden},
			{"a planted cookie with another browser's token", func(t *testing.T, s, _ string) (string, *http.Cookie, string) {
				_, tok := issue(t, e.url, "", s)
				return e.url, planted, tok
			}, http.StatusForbidden},
			{"a token without its cookie", func(t *testing.T, s, _ string) (string, *http.Cookie, string) {
				_, tok := issue(t, e.url, "", s)
				return e.url, nil, tok
			}, http.StatusForbidden},
			{"another session's token", func(t *testing.T, s, other string) (string, *http.Cookie, string) {
				c, tok := issue(t, e.url, "", other)
				return e.url, c, tok
			}, http.StatusForbidden},
			{"a form issued by a server with another master key", func(t *testing.T, s, _ string) (string, *http.Cookie, string) {
				c, tok := issue(t, otherInstallation, "", s)
				return e.url, c, tok
			}, http.StatusForbidden},
			{"a form whose master key was removed from the ring", func(t *testing.T, s, _ string) (string, *http.Cookie, string) {
				c, tok := issue(t, beforeRotation, "", s)
				return retired, c, tok
			}, http.StatusForbidden},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				s, other := e.session(t, ""), e.session(t, "")
				checker, c, tok := tt.forge(t, s.SessionID, other.SessionID)
				before := e.payment(t, s.PaymentID).Status
				require.Equal(t, tt.want, submitCard(t, checker, "", s.SessionID, c, tok))
				if tt.want == http.StatusForbidden {
					require.Equal(t, before, e.payment(t, s.PaymentID).Status, "a refused form changes nothing")
					require.Equal(t, 0, chargesFor(e, s.PaymentID))
				} else {
					require.NotEqual(t, before, e.payment(t, s.PaymentID).Status, "the card was taken")
				}
				require.Equal(t, 0, chargesFor(e, other.PaymentID))
			})
		}

		t.Run("a payer moving between processes pays", func(t *testing.T) {
			s := e.session(t, "")
			pr := newPayer(t, e)
			pg := pr.get(sibling + "/checkout/" + s.SessionID)
			pg.url = e.url + "/checkout/" + s.SessionID // the next request lands on another process
			next := pr.submit(pg, cardForm("4242424242424242"))
			require.Equal(t, http.StatusSeeOther, next.status)
			require.Contains(t, pr.settle(s.SessionID).body, "Payment successful")
			require.Equal(t, "succeeded", e.payment(t, s.PaymentID).Status)
			require.Equal(t, 1, chargesFor(e, s.PaymentID))
		})
	})
}

func TestCheckoutCookie(t *testing.T) {
	each(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{work: true}) // public URL https://pay.example
		keys := e.cfg.Keyring
		local := netip.MustParsePrefix("127.0.0.0/8")
		behindProxy := e.peer(t, keys, func(c *app.Config) { c.TrustedProxies = []netip.Prefix{local} })
		plainHTTP := e.peer(t, keys, func(c *app.Config) { c.PublicURL = "http://pay.example" })

		tests := []struct {
			name   string
			base   string
			host   string
			header http.Header
			secure bool
		}{
			{"https public URL, its host (a TLS proxy keeping Host)", e.url, "pay.example", nil, true},
			{"https public URL, a trusted proxy says https", behindProxy, "", http.Header{"X-Forwarded-Proto": {"https"}}, true},
			{"https public URL, the trusted proxy appends https to what the payer sent", behindProxy, "",
				http.Header{"X-Forwarded-Proto": {"http, https"}}, true},
			{"https public URL, the payer claims https before the trusted proxy's http", behindProxy, "",
				http.Header{"X-Forwarded-Proto": {"https, http"}}, false},
			{"https public URL, an untrusted peer says https", e.url, "", http.Header{"X-Forwarded-Proto": {"https"}}, false},
			{"https public URL, reached directly over http", e.url, "", nil, false},
			{"http public URL", plainHTTP, "pay.example", nil, false},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				s := e.session(t, "")
				req, err := http.NewRequest(http.MethodGet, tt.base+"/checkout/"+s.SessionID, nil)
				require.NoError(t, err)
				for k, v := range tt.header {
					req.Header[k] = v
				}
				if tt.host != "" {
					req.Host = tt.host
				}
				resp, err := noJar.Do(req)
				require.NoError(t, err)
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				require.NoError(t, err)
				require.Equal(t, http.StatusOK, resp.StatusCode)
				raw := resp.Header.Values("Set-Cookie")
				require.Len(t, raw, 1)
				require.NotContains(t, strings.ToLower(raw[0]), "domain=", "a __Host- cookie has no Domain")
				c := resp.Cookies()[0]
				want := "paygate_checkout"
				if tt.secure {
					want = "__Host-paygate_checkout"
				}
				require.Equal(t, want, c.Name)
				require.Equal(t, tt.secure, c.Secure)
				require.True(t, c.HttpOnly)
				require.Equal(t, http.SameSiteLaxMode, c.SameSite)
				require.Equal(t, "/", c.Path)
				require.Empty(t, c.Domain)
				require.Equal(t, 4*3600, c.MaxAge)

				// The form goes through with that cookie, the same way.
				tok := tokenField.FindStringSubmatch(string(body))[1]
				form := cardForm("4242424242424242")
				form.Set("csrf_token", tok)
				post, err := http.NewRequest(http.MethodPost, tt.base+"/checkout/"+s.SessionID, strings.NewReader(form.Encode()))
				require.NoError(t, err)
				post.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				for k, v := range tt.header {
					post.Header[k] = v
				}
				post.Host = req.Host
				post.AddCookie(&http.Cookie{Name: c.Name, Value: c.Value})
				presp, err := noJar.Do(post)
				require.NoError(t, err)
				presp.Body.Close()
				require.Equal(t, http.StatusSeeOther, presp.StatusCode)
			})
		}

		t.Run("on https a plain-named cookie is not read", func(t *testing.T) {
			// A sibling domain on http can set paygate_checkout, with the
			// token a genuine page gave it for that value; on https only
			// __Host-paygate_checkout counts.
			s := e.session(t, "")
			c, tok := issue(t, e.url, "", s.SessionID)
			require.Equal(t, "paygate_checkout", c.Name)
			require.Equal(t, http.StatusForbidden, submitCard(t, e.url, "pay.example", s.SessionID, c, tok))
			require.Equal(t, http.StatusSeeOther, submitCard(t, e.url, "", s.SessionID, c, tok), "control: over http it is the cookie")
		})
	})
}

func TestServerNeedsFormKeys(t *testing.T) {
	_, err := server.New(server.Config{}, server.Deps{})
	require.ErrorContains(t, err, "anti-forgery")
}
