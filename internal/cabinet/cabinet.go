// Package cabinet holds the merchant cabinet's users: who may sign in to the
// web pages, with which role, and which access keys each sees; their
// one-time setup links, server-side sessions and the throttling of failed
// sign-ins (docs/design/decisions.md section 13; docs/cabinet.md, Users and
// sign-in). The HTTP side is internal/cabinet/pages.
package cabinet

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Role says what a user may do: an admin may change what the pages offer
// to change; a viewer only reads.
type Role string

// The roles.
const (
	Admin  Role = "admin"
	Viewer Role = "viewer"
)

// Known reports whether r is a role.
func (r Role) Known() bool { return r == Admin || r == Viewer }

// CanChange reports whether the role may change data (resend, delete,
// pause...): a viewer may not (docs/design/decisions.md section 13).
func (r Role) CanChange() bool { return r == Admin }

// User is a person who signs in to the cabinet.
type User struct {
	ID           string
	Email        string // lower-cased, unique
	PasswordHash string // PHC argon2id; empty until the setup link is used
	Role         Role
	KeyIDs       []string // the access keys granted (merchant.Key.ID)
	CreatedAt    time.Time
	DisabledAt   *time.Time
}

// Active reports whether the user may sign in.
func (u User) Active() bool { return u.DisabledAt == nil }

// Session is a signed-in browser. Only the hash of its id is stored; the id
// itself lives in the browser's cookie.
type Session struct {
	IDHash     string
	UserID     string
	CreatedAt  time.Time
	LastSeenAt time.Time
}

// SetupToken is a one-time link's token, of which only the hash is stored.
type SetupToken struct {
	Hash      string
	UserID    string
	ExpiresAt time.Time
}

// Lifetimes (docs/cabinet.md, Users and sign-in).
const (
	// SetupLifetime is how long a setup link works.
	SetupLifetime = 24 * time.Hour
	// SessionIdle ends a session not used for this long.
	SessionIdle = 2 * time.Hour
	// SessionAbsolute ends every session this long after sign-in.
	SessionAbsolute = 12 * time.Hour
	// touchEvery bounds how often a session's last use is written.
	touchEvery = time.Minute
)

// Throttling of failed sign-ins (docs/cabinet.md, Users and sign-in): each
// attempt takes a slot in the email's and in the client IP's window before
// its password is checked; a window that is full refuses without checking.
// A success gives its slots back (and clears the email's window). The
// window starts with its first attempt and lasts ThrottleWindow, so after
// EmailAttempts failures the email is refused until that window ends.
const (
	ThrottleWindow = 15 * time.Minute
	EmailAttempts  = 5
	IPAttempts     = 30
)

// NormalizeEmail is the form an email is stored and looked up in.
func NormalizeEmail(s string) string { return strings.ToLower(strings.TrimSpace(s)) }

// ValidEmail is a light check: something@something, no spaces, UTF-8
// text without control characters (which PostgreSQL's text may refuse).
func ValidEmail(s string) bool {
	at := strings.IndexByte(s, '@')
	return at > 0 && at < len(s)-1 && !strings.ContainsAny(s, " \t\r\n<>\"'") && len(s) <= 254 &&
		utf8.ValidString(s) && !strings.ContainsFunc(s, unicode.IsControl)
}

// NewSecret returns a random 32-byte secret, base64url, and its hash (what
// the database keeps).
func NewSecret() (secret, hash string) {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	secret = base64.RawURLEncoding.EncodeToString(b)
	return secret, HashSecret(secret)
}

// HashSecret is the stored form of a setup token or session id: SHA-256,
// base64url. The secrets are 256 random bits, so a fast hash suffices: a leaked
// table gives no usable link or cookie.
func HashSecret(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}
