package pages_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/cabinet"
	"github.com/paygate/paygate/internal/store/storetest"
)

// TestSetup: the setup link's page (docs/cabinet.md, "The first user" and
// "Security choices"): it names the user and lets them choose a password
// of at least 12 characters, typed twice; a refused password leaves the
// link working; a used, expired or unknown link answers 404 and sets
// nothing; the form of one link does not set another's password.
func TestSetup(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{})
		ctx := context.Background()
		link := func(t *testing.T, email string) string {
			t.Helper()
			_, token, err := e.users.CreateUser(ctx, email, cabinet.Admin, []string{e.a.ID})
			require.NoError(t, err)
			return "/cabinet/setup/" + token
		}
		choose := func(pw, again, csrf string) url.Values {
			return url.Values{"password": {pw}, "password_again": {again}, "csrf_token": {csrf}}
		}
		// signsIn reports whether the password signs the email in.
		signsIn := func(t *testing.T, email, pw string) bool {
			t.Helper()
			return e.browser(t).signInAs(email, pw).status == http.StatusSeeOther
		}

		t.Run("the link names the user and sets the password once", func(t *testing.T) {
			path := link(t, "ann@example.com")
			b := e.browser(t)
			page := b.get(path)
			require.Equal(t, http.StatusOK, page.status)
			require.Contains(t, page.body, "For ann@example.com.")
			require.Contains(t, page.body, `action="`+path+`"`)
			csrf := page.csrf()

			a := b.post(path, choose(password, password, csrf))
			require.Equal(t, http.StatusSeeOther, a.status, a.body)
			require.Equal(t, "/cabinet/", a.location)
			require.NotNil(t, a.cookie("paygate_cabinet"), "signed in")
			require.Equal(t, http.StatusOK, b.get("/cabinet/").status)

			require.Equal(t, http.StatusNotFound, b.get(path).status, "used")
			again := e.browser(t)
			a = again.post(path, choose("another long passphrase", "another long passphrase", again.token("/cabinet/sign-in")))
			require.Equal(t, http.StatusForbidden, a.status, "the sign-in form's token")
			a = b.post(path, choose("another long passphrase", "another long passphrase", csrf))
			require.Equal(t, http.StatusNotFound, a.status, "used, even with its own form")
			require.Contains(t, a.body, "This setup link is unknown, already used or expired.")
			require.Nil(t, a.cookie("paygate_cabinet"))
			require.True(t, signsIn(t, "ann@example.com", password))
			require.False(t, signsIn(t, "ann@example.com", "another long passphrase"))
		})

		for i, c := range []struct {
			name, pw, again, says string
		}{
			{"two different passwords", password, password + "!", "The two passwords differ."},
			{"a password of 11 characters", "eleven char", "eleven char", "Choose a password of at least 12 characters."},
		} {
			t.Run(c.name+" are refused and the link still works", func(t *testing.T) {
				email := fmt.Sprintf("bob%d@example.com", i)
				path := link(t, email)
				b := e.browser(t)
				a := b.post(path, choose(c.pw, c.again, b.token(path)))
				require.Equal(t, http.StatusUnprocessableEntity, a.status)
				require.Contains(t, a.body, c.says)
				require.Nil(t, a.cookie("paygate_cabinet"))
				require.NotEmpty(t, a.csrf(), "the form again")
				require.False(t, signsIn(t, email, c.pw))

				a = b.post(path, choose(password, password, a.csrf()))
				require.Equal(t, http.StatusSeeOther, a.status, "the link still works")
			})
		}

		t.Run("the form of one link does not set another's password", func(t *testing.T) {
			mine, theirs := link(t, "cy@example.com"), link(t, "dee@example.com")
			b := e.browser(t)
			csrf := b.token(mine)
			b.get(theirs)
			a := b.post(theirs, choose(password, password, csrf))
			require.Equal(t, http.StatusForbidden, a.status)
			require.False(t, signsIn(t, "dee@example.com", password))
			require.Equal(t, http.StatusOK, b.get(theirs).status, "unused")
		})

		t.Run("an unknown link", func(t *testing.T) {
			b := e.browser(t)
			for _, token := range []string{"nonsense", "%FF%00", "x"} {
				a := b.get("/cabinet/setup/" + token)
				require.Equal(t, http.StatusNotFound, a.status, token)
				require.Contains(t, a.body, "Link not valid")
			}
		})

		// Last: the clock moves a day on.
		t.Run("an expired link", func(t *testing.T) {
			path := link(t, "eve@example.com")
			b := e.browser(t)
			csrf := b.token(path)
			e.clock.Add(cabinet.SetupLifetime - time.Second)
			require.Equal(t, http.StatusOK, b.get(path).status, "a second before its end")
			e.clock.Add(time.Second)
			a := b.get(path)
			require.Equal(t, http.StatusNotFound, a.status)
			require.Contains(t, a.body, "This setup link is unknown, already used or expired.")
			a = b.post(path, choose(password, password, csrf))
			require.Equal(t, http.StatusNotFound, a.status)
			require.Nil(t, a.cookie("paygate_cabinet"))
			require.False(t, signsIn(t, "eve@example.com", password))
		})
	})
}
