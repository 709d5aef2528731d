package server_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/openapi"
	"github.com/paygate/paygate/internal/store/storetest"
)

// payer is a browser without JavaScript: a cookie jar, and redirects
// followed by hand so that tests see each one. Every page it saw is kept,
// to check that no card data ever appears in one.
type payer struct {
	t     *testing.T
	e     *env
	hc    *http.Client
	mu    sync.Mutex
	pages []string
}

type page struct {
	status   int
	header   http.Header
	body     string
	url      string
	location string // absolute
}

func newPayer(t *testing.T, e *env) *payer {
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	return &payer{t: t, e: e, hc: &http.Client{Jar: jar, Timeout: 15 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (p *payer) do(req *http.Request) *page {
	p.t.Helper()
	req.Header.Set("Accept", "text/html,application/xhtml+xml")
	req.Header.Set("User-Agent", "paygate-test-payer/1.0")
	resp, err := p.hc.Do(req)
	require.NoError(p.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(p.t, err)
	pg := &page{status: resp.StatusCode, header: resp.Header, body: string(b), url: req.URL.String()}
	if loc := resp.Header.Get("Location"); loc != "" {
		u, err := req.URL.Parse(loc)
		require.NoError(p.t, err)
		pg.location = u.String()
	}
	p.mu.Lock()
	p.pages = append(p.pages, pg.url+"\n"+pg.location+"\n"+pg.body)
	p.mu.Unlock()
	return pg
}

func (p *payer) get(u string) *page {
	p.t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	require.NoError(p.t, err)
	return p.do(req)
}

// follow GETs u and follows redirects through Paygate and the sandbox; it
// stops at a page, or at a redirect to anywhere else (the shop).
func (p *payer) follow(u string) *page {
	p.t.Helper()
	for range 10 {
		pg := p.get(u)
		if pg.location == "" || !(strings.HasPrefix(pg.location, p.e.url) || strings.HasPrefix(pg.location, p.e.acqURL)) {
			return pg
		}
		u = pg.location
	}
	p.t.Fatalf("too many redirects from %s", u)
	return nil
}

// post submits form to action (relative to the page it was on).
func (p *payer) post(pg *page, action string, form url.Values) *page {
	p.t.Helper()
	base, err := url.Parse(pg.url)
	require.NoError(p.t, err)
	target, err := base.Parse(action)
	require.NoError(p.t, err)
	req, err := http.NewRequest(http.MethodPost, target.String(), strings.NewReader(form.Encode()))
	require.NoError(p.t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return p.do(req)
}

var tokenField = regexp.MustCompile(`name="csrf_token" value="([^"]+)"`)

// submit posts the page's own form (its action and anti-forgery token)
// with the given fields.
func (p *payer) submit(pg *page, fields url.Values) *page {
	p.t.Helper()
	m := regexp.MustCompile(`<form[^>]* method="post" action="([^"]+)"`).FindStringSubmatch(pg.body)
	require.NotNil(p.t, m, "no form on %s:\n%s", pg.url, pg.body)
	form := url.Values{}
	for k, v := range fields {
		form[k] = v
	}
	if tm := tokenField.FindStringSubmatch(pg.body); tm != nil && form.Get("csrf_token") == "" {
		form.Set("csrf_token", tm[1])
	}
	return p.post(pg, m[1], form)
}

// settle reloads the session's page, as its meta refresh does, until it
// is no longer the waiting page, and returns it with redirects followed.
func (p *payer) settle(sessionID string) *page {
	p.t.Helper()
	var pg *page
	p.e.await(0, func() error {
		if pg = p.follow(p.e.url + "/checkout/" + sessionID); strings.Contains(pg.body, `http-equiv="refresh"`) {
			return fmt.Errorf("session %s kept processing", sessionID)
		}
		return nil
	})
	return pg
}

// saw reports whether any page, URL or redirect the payer saw contains s.
func (p *payer) saw(s string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, pg := range p.pages {
		if strings.Contains(pg, s) {
			return true
		}
	}
	return false
}

func cardForm(number string) url.Values {
	return url.Values{"method": {"card"}, "number": {number}, "expire_month": {"12"},
		"expire_year": {fmt.Sprint(time.Now().Year() + 2)}, "cvv": {"123"}, "cardholder": {"Ada Lovelace"}}
}

const visaSession = `{"order_id":"o-%d","amount_minor":1999,"currency":"USD","description":"Tea for two",
	"customer":{"first_name":"Ada","last_name":"Lovelace","email":"ada@example.com",
	"billing_address":{"country":"GB","line1":"1 Street"}}%s}`

var sessionSeq struct {
	sync.Mutex
	n int
}

// session opens a hosted session for key a; extra is appended to the body.
func (e *env) session(t *testing.T, extra string) openapi.Payment {
	t.Helper()
	sessionSeq.Lock()
	sessionSeq.n++
	n := sessionSeq.n
	sessionSeq.Unlock()
	return createSession(t, e.a, fmt.Sprintf(visaSession, n, extra))
}

func (e *env) payment(t *testing.T, id string) openapi.Payment {
	t.Helper()
	var p openapi.Payment
	require.NoError(t, e.a.JSON(context.Background(), "GET", "/api/v1/payments/"+id, nil, &p))
	return p
}

func TestCheckoutWithoutJavaScript(t *testing.T) {
	each(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{work: true})

		t.Run("pay with a success card", func(t *testing.T) {
			s := e.session(t, "")
			pr := newPayer(t, e)
			pg := pr.get(e.url + "/checkout/" + s.SessionID)
			require.Equal(t, http.StatusOK, pg.status)
			require.Contains(t, pg.body, "USD 19.99")
			require.Contains(t, pg.body, "Tea for two")
			require.Contains(t, pg.body, `name="number"`)
			require.Equal(t, "awaiting_payment_data", e.payment(t, s.PaymentID).Status)
			checkPageHeaders(t, e, pg)

			next := pr.submit(pg, cardForm("4242424242424242"))
			require.Equal(t, http.StatusSeeOther, next.status)
			require.Equal(t, e.url+"/checkout/"+s.SessionID, next.location)
			done := pr.settle(s.SessionID)
			require.Contains(t, done.body, "Payment successful")
			require.NotContains(t, done.body, "<form")
			got := e.payment(t, s.PaymentID)
			require.Equal(t, "succeeded", got.Status)
			require.Equal(t, "424242******4242", got.MaskedCard)
			require.Equal(t, "paygate-test-payer/1.0", *got.Device.UserAgent)
			require.Equal(t, "127.0.0.1", got.PayerIP)
			require.Equal(t, 1, chargesFor(e, s.PaymentID))
			require.False(t, pr.saw("4242424242424242"), "the card number is in a page")
		})

		t.Run("a decline shows its message, then another card pays", func(t *testing.T) {
			s := e.session(t, "")
			pr := newPayer(t, e)
			pg := pr.submit(pr.get(e.url+"/checkout/"+s.SessionID), cardForm("4000000000000002"))
			require.Equal(t, http.StatusSeeOther, pg.status)
			pg = pr.settle(s.SessionID)
			require.Equal(t, http.StatusOK, pg.status)
			require.Contains(t, pg.body, "The card was declined.")
			require.Contains(t, pg.body, `name="number"`, "the form again")
			require.Equal(t, "awaiting_payment_data", e.payment(t, s.PaymentID).Status)
			pr.submit(pg, cardForm("5555555555554444"))
			pg = pr.settle(s.SessionID)
			require.Contains(t, pg.body, "Payment successful")
			require.Equal(t, "succeeded", e.payment(t, s.PaymentID).Status)
			require.False(t, pr.saw("4000000000000002") || pr.saw("5555555555554444"))
		})

		t.Run("3DS approve through the sandbox's page, back to return_url", func(t *testing.T) {
			s := e.session(t, `,"return_url":"https://shop.example/back?cart=42#top"`)
			pr := newPayer(t, e)
			pg := pr.submit(pr.get(e.url+"/checkout/"+s.SessionID), cardForm("4000000000003220"))
			require.Equal(t, http.StatusSeeOther, pg.status)
			var challengeURL string
			e.await(0, func() error {
				if pg = pr.get(e.url + "/checkout/" + s.SessionID); pg.status != http.StatusSeeOther || pg.location == "" {
					return fmt.Errorf("session %s sent the payer nowhere (%d)", s.SessionID, pg.status)
				}
				challengeURL = pg.location
				return nil
			})
			require.True(t, strings.HasPrefix(challengeURL, e.acqURL+"/3ds/"), challengeURL)
			ch := pr.get(challengeURL)
			require.Contains(t, ch.body, "Подтвердить", "the sandbox's challenge page in the session's locale (ru by default)")
			back := pr.post(ch, challengeURL, url.Values{"outcome": {"approve"}})
			require.Equal(t, http.StatusSeeOther, back.status)
			require.True(t, strings.HasPrefix(back.location, e.url+"/checkout/"+s.SessionID+"/return"), back.location)
			ret := pr.get(back.location)
			require.Equal(t, http.StatusSeeOther, ret.status)
			require.Equal(t, e.url+"/checkout/"+s.SessionID, ret.location)
			end := pr.settle(s.SessionID)
			require.Equal(t, http.StatusSeeOther, end.status)
			require.Equal(t, "https://shop.example/back?cart=42&payment_id="+s.PaymentID+"&status=succeeded#top", end.location)
			require.Equal(t, 1, chargesFor(e, s.PaymentID))
		})

		t.Run("a double submit charges once", func(t *testing.T) {
			s := e.session(t, "")
			pr := newPayer(t, e)
			pg := pr.get(e.url + "/checkout/" + s.SessionID)
			var wg sync.WaitGroup
			for range 3 {
				wg.Go(func() {
					r := pr.submit(pg, cardForm("4242424242424242"))
					require.Equal(t, http.StatusSeeOther, r.status)
				})
			}
			wg.Wait()
			again := pr.submit(pg, cardForm("4242424242424242")) // the back button, then Pay again
			require.Equal(t, http.StatusSeeOther, again.status)
			require.Contains(t, pr.settle(s.SessionID).body, "Payment successful")
			require.Equal(t, 1, chargesFor(e, s.PaymentID))
			ops := 0
			require.NoError(t, e.store.DB().QueryRow(`SELECT COUNT(*) FROM operations WHERE resource = 'payment' AND resource_id = $1`, s.PaymentID).Scan(&ops))
			require.Equal(t, 1, ops, "one operation queued")
		})

		t.Run("a forged submission is refused", func(t *testing.T) {
			s := e.session(t, "")
			pr := newPayer(t, e)
			pg := pr.get(e.url + "/checkout/" + s.SessionID)
			bad := cardForm("4242424242424242")
			bad.Set("csrf_token", "forged")
			r := pr.submit(pg, bad)
			require.Equal(t, http.StatusForbidden, r.status)
			require.Contains(t, r.body, "Nothing was charged")
			r = newPayer(t, e).submit(pg, cardForm("4242424242424242")) // the token without the cookie
			require.Equal(t, http.StatusForbidden, r.status)
			other := e.session(t, "")
			r = pr.post(pg, "/checkout/"+other.SessionID, withToken(pg, cardForm("4242424242424242"))) // another session's token
			require.Equal(t, http.StatusForbidden, r.status)
			require.Equal(t, "awaiting_payment_data", e.payment(t, s.PaymentID).Status)
			require.Equal(t, "created", e.payment(t, other.PaymentID).Status)
		})

		t.Run("an expired session shows a page, never the form", func(t *testing.T) {
			s := e.session(t, `,"expires_in_seconds":300,"return_url":"https://shop.example/back"`)
			pr := newPayer(t, e)
			pg := pr.get(e.url + "/checkout/" + s.SessionID)
			e.clock.Add(301 * time.Second)
			gone := pr.get(e.url + "/checkout/" + s.SessionID)
			require.Equal(t, http.StatusGone, gone.status)
			require.Contains(t, gone.body, "This payment link has expired")
			require.NotContains(t, gone.body, "<form")
			require.Contains(t, gone.body, "payment_id="+s.PaymentID+"&amp;status=expired")
			late := pr.submit(pg, cardForm("4242424242424242"))
			require.Equal(t, http.StatusSeeOther, late.status)
			require.Equal(t, http.StatusGone, pr.follow(late.location).status)
			require.Equal(t, "expired", e.payment(t, s.PaymentID).Status)
			require.Equal(t, 0, chargesFor(e, s.PaymentID))
		})

		t.Run("an unknown session is a 404 page", func(t *testing.T) {
			for _, id := range []string{"0190a0a0-0000-7000-8000-000000000000", "not-a-session"} {
				pg := newPayer(t, e).get(e.url + "/checkout/" + id)
				require.Equal(t, http.StatusNotFound, pg.status)
				require.Contains(t, pg.header.Get("Content-Type"), "text/html")
				require.Contains(t, pg.body, "Payment page not found")
			}
		})

		t.Run("card errors come back on their fields, without the card", func(t *testing.T) {
			s := e.session(t, "")
			pr := newPayer(t, e)
			pg := pr.get(e.url + "/checkout/" + s.SessionID)
			bad := cardForm("4242424242424241")
			bad.Set("cvv", "12")
			r := pr.submit(pg, bad)
			require.Equal(t, http.StatusUnprocessableEntity, r.status)
			require.Contains(t, r.body, `id="cvv-error"`)
			require.Contains(t, r.body, `aria-invalid="true" aria-describedby="cvv-error"`)
			r = pr.submit(r, cardForm("4242424242424241"))
			require.Equal(t, http.StatusUnprocessableEntity, r.status)
			require.Contains(t, r.body, "Check the card number: it is not valid.")
			require.Contains(t, r.body, `<a href="#number">`)
			require.NotContains(t, r.body, `value="12"`)
			require.False(t, pr.saw("4242424242424241"))
		})
	})
}

// withToken adds the page's anti-forgery token to form.
func withToken(pg *page, form url.Values) url.Values {
	if m := tokenField.FindStringSubmatch(pg.body); m != nil {
		form.Set("csrf_token", m[1])
	}
	return form
}

// checkPageHeaders checks what every checkout page carries.
func checkPageHeaders(t *testing.T, e *env, pg *page) {
	t.Helper()
	csp := pg.header.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'self'", "frame-ancestors 'none'", "form-action 'self' " + e.acqURL, "script-src 'self' 'nonce-"} {
		require.Contains(t, csp, want)
	}
	require.NotContains(t, csp, "unsafe-inline")
	require.Equal(t, "no-store", pg.header.Get("Cache-Control"))
	require.Equal(t, "no-referrer", pg.header.Get("Referrer-Policy"))
	require.Equal(t, "nosniff", pg.header.Get("X-Content-Type-Options"))
	require.Equal(t, "text/html; charset=utf-8", pg.header.Get("Content-Type"))
}
