package formtoken

import "testing"

func TestToken(t *testing.T) {
	old, cur := []byte("old key"), []byte("current key")
	s := Signer{Label: "test form v1", Keys: [][]byte{cur, old}}
	id, other := NewBrowserID(), NewBrowserID()
	if len(id) != BrowserIDLen || id == other {
		t.Fatalf("browser ids %q %q", id, other)
	}
	tok := s.Token(id, "session-1")
	if !s.Valid(id, tok, "session-1") {
		t.Fatal("own token refused")
	}
	issuedBefore := Signer{Label: s.Label, Keys: [][]byte{old}}.Token(id, "session-1")
	if !s.Valid(id, issuedBefore, "session-1") {
		t.Fatal("a token of a kept key refused")
	}
	for name, bad := range map[string]bool{
		"another purpose": s.Valid(id, tok, "session-2"),
		"another browser": s.Valid(other, tok, "session-1"),
		"another label":   Signer{Label: "other form v1", Keys: s.Keys}.Valid(id, tok, "session-1"),
		"a short id":      s.Valid(id[:10], s.Token(id[:10], "session-1"), "session-1"),
		"empty":           s.Valid(id, "", "session-1"),
		"a dropped key":   Signer{Label: s.Label, Keys: [][]byte{cur}}.Valid(id, issuedBefore, "session-1"),
	} {
		if bad {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestMAC(t *testing.T) {
	k1, k2 := []byte("key-1"), []byte("key-2")
	a := mac(k1, "form", "browser-a", "session-1")
	if len(a) != 43 || a != mac(k1, "form", "browser-a", "session-1") {
		t.Fatalf("mac %q", a)
	}
	for name, other := range map[string]string{
		"keyed by the server":   mac(k2, "form", "browser-a", "session-1"),
		"bound to the browser":  mac(k1, "form", "browser-b", "session-1"),
		"bound to the purpose":  mac(k1, "form", "browser-a", "session-2"),
		"bound to the label":    mac(k1, "other", "browser-a", "session-1"),
		"parts length-prefixed": mac(k1, "form", "browser-ab", "-session-1"),
	} {
		if other == a {
			t.Errorf("%s: the same MAC", name)
		}
	}
	if mac(k1, "l", "ab", "c") == mac(k1, "l", "a", "bc") {
		t.Error("parts are not length-prefixed")
	}
}
