// Package formtoken is the anti-forgery token of Paygate's HTML forms, the
// checkout's and the merchant cabinet's (docs/checkout.md, "Security";
// docs/cabinet.md, "Security choices"): the browser holds a random id in a
// cookie, and each form carries HMAC-SHA256 under a server key over that id
// and what the form acts for. Nothing is stored; every process that holds
// the same keys checks any form.
package formtoken

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
)

// BrowserIDLen is the length of a browser id: 32 random bytes, base64url.
const BrowserIDLen = 43

// NewBrowserID returns a new random browser id.
func NewBrowserID() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return base64.RawURLEncoding.EncodeToString(b)
}

// Signer makes and checks tokens under its keys: the first signs, every
// one is accepted (the keys kept since a master-key rotation).
type Signer struct {
	// Label separates the tokens of one kind of form from another's.
	Label string
	Keys  [][]byte
}

// Token is the token of the browser's forms for purpose.
func (s Signer) Token(browserID, purpose string) string {
	return mac(s.Keys[0], s.Label, browserID, purpose)
}

// Valid reports, in constant time per key, whether got is the token of
// browserID and purpose under one of the keys.
func (s Signer) Valid(browserID, got, purpose string) bool {
	if len(browserID) != BrowserIDLen {
		return false
	}
	ok := false
	for _, k := range s.Keys {
		ok = hmac.Equal([]byte(got), []byte(mac(k, s.Label, browserID, purpose))) || ok
	}
	return ok
}

// mac is HMAC-SHA256(key, label, browser id, purpose), each part
// length-prefixed so that no two different triples read the same.
func mac(key []byte, label, browserID, purpose string) string {
	m := hmac.New(sha256.New, key)
	for _, part := range []string{label, browserID, purpose} {
		var n [4]byte
		binary.BigEndian.PutUint32(n[:], uint32(len(part)))
		m.Write(n[:])
		m.Write([]byte(part))
	}
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}
