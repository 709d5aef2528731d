package pages

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"net/http"
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
	browserIDLen  = 43
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
	if c, err := r.Cookie(pg.cookieName(r, browserCookie)); err == nil && len(c.Value) == browserIDLen {
		id = c.Value
	} else {
		b := make([]byte, 32)
		_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
		id = base64.RawURLEncoding.EncodeToString(b)
		pg.setCookie(w, r, browserCookie, id, 12*3600)
		// Later reads in this request see it.
		r.AddCookie(&http.Cookie{Name: pg.cookieName(r, browserCookie), Value: id})
	}
	return formMAC(pg.formKeys[0], id, purpose)
}

// validFormToken checks a POST's token against its cookie and purpose under
// every form key (the active master key's and those kept since a rotation).
func (pg *Pages) validFormToken(r *http.Request, purpose string) bool {
	c, err := r.Cookie(pg.cookieName(r, browserCookie))
	if err != nil || len(c.Value) != browserIDLen {
		return false
	}
	got := []byte(r.PostFormValue(csrfField))
	ok := false
	for _, k := range pg.formKeys {
		ok = hmac.Equal(got, []byte(formMAC(k, c.Value, purpose))) || ok
	}
	return ok
}

// formMAC is HMAC-SHA256(key, label, browser id, purpose), each part
// length-prefixed.
func formMAC(key []byte, browserID, purpose string) string {
	m := hmac.New(sha256.New, key)
	for _, part := range []string{"paygate cabinet form v1", browserID, purpose} {
		var n [4]byte
		binary.BigEndian.PutUint32(n[:], uint32(len(part)))
		m.Write(n[:])
		m.Write([]byte(part))
	}
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}
