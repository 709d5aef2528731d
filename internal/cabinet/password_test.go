package cabinet

import (
	"strings"
	"testing"
)

func TestPasswordHash(t *testing.T) {
	fast := Params{Time: 1, Memory: 64, Threads: 1}
	h := HashPassword("correct horse battery", fast)
	if !strings.HasPrefix(h, "$argon2id$v=19$m=64,t=1,p=1$") {
		t.Fatalf("hash %q is not PHC argon2id", h)
	}
	if !CheckPassword("correct horse battery", h) {
		t.Fatal("the right password is refused")
	}
	if CheckPassword("correct horse batterz", h) {
		t.Fatal("a wrong password passes")
	}
	if HashPassword("correct horse battery", fast) == h {
		t.Fatal("two hashes of one password share a salt")
	}
	for _, bad := range []string{"", "$argon2i$v=19$m=64,t=1,p=1$c2FsdHNhbHQ$dGFn", h[:len(h)-3], "$argon2id$v=19$m=0,t=1,p=1$c2FsdHNhbHQ$" + strings.Repeat("A", 43)} {
		if CheckPassword("correct horse battery", bad) {
			t.Fatalf("hash %q accepted", bad)
		}
	}
}

func TestRecommendedIsRFC9106SecondOption(t *testing.T) {
	if Recommended != (Params{Time: 3, Memory: 65536, Threads: 4}) {
		t.Fatalf("Recommended = %+v", Recommended)
	}
	h := HashPassword("x", Recommended)
	if !strings.HasPrefix(h, "$argon2id$v=19$m=65536,t=3,p=4$") || !CheckPassword("x", h) {
		t.Fatalf("hash %q", h)
	}
}
