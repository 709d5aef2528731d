package pages

import (
	"errors"
	"net/http"

	"github.com/paygate/paygate/internal/formtoken"
)

// Anti-forgery, as the checkout's (internal/checkout/forgery.go): the
// browser holds a random id in an HttpOnly, SameSite=Lax cookie (__Host- on
// https); each form carries HMAC-SHA256, under a key derived from the
// master keys, over that id and what the form acts for (the signed-in
// session's hash, the setup link's hash, or the sign-in page). Every process
// derives the same keys, nothing is stored, and a token made for one browser
// or one session is refused on another.
const (
	csrfField     = "csrf_token"
	browserCookie = "paygate_cabinet_browser"
	formKeyLabel  = "paygate cabinet anti-forgery v1"
)

func formKeys(d KeyDeriver) ([][]byte, error) {
	if d == nil {
		return nil, errors.New("cabinet pages: Deps.Keys is required: the anti-forgery key derives from the master keys")
	}
	keys := d.DeriveKeys(formKeyLabel)
	if len(keys) == 0 {
		return nil, errors.New("cabinet pages: the master keyring derived no anti-forgery key")
	}
	return keys, nil
}

// formToken returns the token for purpose, setting the browser cookie when
// the browser has none yet.
func (pg *Pages) formToken(w http.ResponseWriter, r *http.Request, purpose string) string {
	id := ""
	if c, err := r.Cookie(pg.cookieName(r, browserCookie)); err == nil && len(c.Value) == formtoken.BrowserIDLen {
		id = c.Value
	} else {
		id = formtoken.NewBrowserID()
		pg.setCookie(w, r, browserCookie, id, 12*3600)
		// Later reads in this request see it.
		r.AddCookie(&http.Cookie{Name: pg.cookieName(r, browserCookie), Value: id})
	}
	return pg.forms().Token(id, purpose)
}

// validFormToken checks a POST's token against its cookie and purpose under
// every form key (the active master key's and those kept since a rotation).
func (pg *Pages) validFormToken(r *http.Request, purpose string) bool {
	c, err := r.Cookie(pg.cookieName(r, browserCookie))
	return err == nil && pg.forms().Valid(c.Value, r.PostFormValue(csrfField), purpose)
}

// forms signs and checks the cabinet's tokens: HMAC-SHA256 over the label,
// the browser id and the purpose.
func (pg *Pages) forms() formtoken.Signer {
	return formtoken.Signer{Label: "paygate cabinet form v1", Keys: pg.formKeys}
}
