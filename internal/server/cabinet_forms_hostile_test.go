package server_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/paygate/paygate/internal/cabinet"
	"github.com/paygate/paygate/internal/store/storetest"
)

// hostileFormValues are what no form of the cabinet writes: NUL, invalid
// UTF-8, control characters, and lengths past every bound.
var hostileFormValues = []string{"\x00", "a\x00b@example.com", "\xff\xfe", "\xc3\x28@example.com", "ann@exa\x01mple.com",
	strings.Repeat("a", 1025), strings.Repeat("é", 600), strings.Repeat("x", 40<<10), ""}

// TestCabinetFormsHostile sends every field of every cabinet form each
// hostile value, on both databases (docs/api.md, "Text and query
// strings"): no answer is a 500; a setup password over 1,024 bytes
// answers the form again, and a sign-in email that is not text is a failed
// sign-in.
func TestCabinetFormsHostile(t *testing.T) {
	each(t, func(t *testing.T, db storetest.Database) {
		e := newEnv(t, db, options{})
		bob := e.signedInAdmin(t, "bob@example.com", e.aKey.ID)
		_, _, csrf := bob.get(e.url + "/cabinet/cards")
		require.NotEmpty(t, csrf)
		for i, v := range hostileFormValues {
			// A new user each time: a password that passes uses the link.
			_, token, err := e.app.Cabinet.CreateUser(context.Background(), fmt.Sprintf("ann%d@example.com", i),
				cabinet.Admin, []string{e.aKey.ID})
			require.NoError(t, err)
			ann := newStaffBrowser(t)
			// Setup: the password and its repetition.
			_, _, setupCSRF := ann.get(e.url + "/cabinet/setup/" + token)
			require.NotEmpty(t, setupCSRF)
			status, body, _ := ann.post(e.url+"/cabinet/setup/"+token,
				url.Values{"password": {v}, "password_again": {v}, "csrf_token": {setupCSRF}})
			require.Less(t, status, 500, "setup password %q: %s", trim(v), body)
			if len(v) > 1024 && len(v) < 4096 { // a larger body is past the form bound: 403
				require.Equal(t, http.StatusUnprocessableEntity, status, "setup password %q", trim(v))
				require.Contains(t, body, "at most 1,024 bytes")
			}
			if status == http.StatusUnprocessableEntity {
				status, body, _ = ann.post(e.url+"/cabinet/setup/"+token,
					url.Values{"password": {"a long passphrase"}, "password_again": {v}, "csrf_token": {setupCSRF}})
				require.Equal(t, http.StatusUnprocessableEntity, status, "setup password_again %q: %s", trim(v), body)
			}

			// Sign-in: the email and the password.
			for _, form := range []url.Values{{"email": {v}, "password": {"a long passphrase"}},
				{"email": {"bob@example.com"}, "password": {v}}} {
				b := newStaffBrowser(t)
				_, _, signCSRF := b.get(e.url + "/cabinet/sign-in")
				form.Set("csrf_token", signCSRF)
				status, body, _ := b.post(e.url+"/cabinet/sign-in", form)
				require.Less(t, status, 500, "sign-in %v: %s", trimForm(form), body)
				// A failed sign-in, the throttle of the many failures here,
				// or (403) a body past the form bound.
				require.Contains(t, []int{http.StatusUnauthorized, http.StatusTooManyRequests, http.StatusForbidden}, status, "sign-in %v", trimForm(form))
			}

			// The lists' buttons.
			status, body, _ = bob.post(e.url+"/cabinet/cards/"+token+"/delete",
				url.Values{"csrf_token": {csrf}, "customer_reference": {v}})
			require.Less(t, status, 500, "delete card customer_reference %q: %s", trim(v), body)
			status, body, _ = bob.post(e.url+"/cabinet/events/"+token+"/resend",
				url.Values{"csrf_token": {csrf}, "endpoint_id": {v}})
			require.Less(t, status, 500, "resend endpoint_id %q: %s", trim(v), body)
		}
	})
}

func trim(v string) string {
	if len(v) > 20 {
		return v[:20] + "…"
	}
	return v
}

func trimForm(f url.Values) map[string]string {
	out := map[string]string{}
	for k, v := range f {
		if k != "csrf_token" {
			out[k] = trim(v[0])
		}
	}
	return out
}
