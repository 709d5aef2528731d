package cabinet

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/argon2"
)

// Argon2id parameters: RFC 9106's second recommended option (section 4),
// for machines without 2 GiB to spare per hash: t=3 passes over m=64 MiB
// with p=4 lanes, a 16-byte salt and a 32-byte tag
// (docs/design/dependencies.md; docs/cabinet.md, Users and sign-in).
type Params struct {
	Time    uint32 // passes
	Memory  uint32 // KiB
	Threads uint8
}

// Recommended is RFC 9106's second recommended option.
var Recommended = Params{Time: 3, Memory: 64 * 1024, Threads: 4}

const (
	saltLen = 16
	tagLen  = 32
	// MinPassword is the shortest password a user may choose, in characters.
	MinPassword = 12
	// maxPassword bounds the work one sign-in may ask for.
	maxPassword = 1024
)

// HashPassword returns the PHC string of password:
// $argon2id$v=19$m=65536,t=3,p=4$salt$tag (salt and tag unpadded base64).
func HashPassword(password string, p Params) string {
	salt := make([]byte, saltLen)
	_, _ = rand.Read(salt) // crypto/rand.Read never fails (Go 1.24+)
	tag := argon2.IDKey([]byte(password), salt, p.Time, p.Memory, p.Threads, tagLen)
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, p.Memory, p.Time, p.Threads,
		b64.EncodeToString(salt), b64.EncodeToString(tag))
}

// errHash is a stored hash that does not parse: a user whose password was
// never set has none, and no password matches it.
var errHash = errors.New("cabinet: not an argon2id hash")

// CheckPassword reports whether password matches the PHC string encoded,
// comparing tags in constant time. The parameters are the hash's own, so
// raising Recommended later leaves old hashes valid.
func CheckPassword(password, encoded string) bool {
	p, salt, tag, err := parseHash(encoded)
	if err != nil || len(password) > maxPassword {
		return false
	}
	got := argon2.IDKey([]byte(password), salt, p.Time, p.Memory, p.Threads, uint32(len(tag)))
	return subtle.ConstantTimeCompare(got, tag) == 1
}

func parseHash(encoded string) (Params, []byte, []byte, error) {
	var p Params
	parts := strings.Split(encoded, "$")
	if len(parts) != 6 || parts[0] != "" || parts[1] != "argon2id" || parts[2] != fmt.Sprintf("v=%d", argon2.Version) {
		return p, nil, nil, errHash
	}
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &p.Memory, &p.Time, &p.Threads); err != nil {
		return p, nil, nil, errHash
	}
	if p.Time == 0 || p.Threads == 0 || p.Memory < 8*uint32(p.Threads) || p.Memory > 1<<22 || p.Time > 64 {
		return p, nil, nil, errHash
	}
	salt, err1 := base64.RawStdEncoding.DecodeString(parts[4])
	tag, err2 := base64.RawStdEncoding.DecodeString(parts[5])
	if err1 != nil || err2 != nil || len(salt) < 8 || len(tag) < 16 {
		return p, nil, nil, errHash
	}
	return p, salt, tag, nil
}
