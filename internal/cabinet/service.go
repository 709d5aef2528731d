package cabinet

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/paygate/paygate/internal/merchant"
)

// Errors of the service. The pages turn ErrBadCredentials and ErrThrottled
// into one answer each that says no more than it must.
var (
	ErrEmailTaken     = errors.New("cabinet: a user with this email exists")
	ErrNoUser         = errors.New("cabinet: no user with this email")
	ErrBadCredentials = errors.New("cabinet: wrong email or password")
	ErrThrottled      = errors.New("cabinet: too many failed sign-ins; try again later")
	ErrSetupInvalid   = errors.New("cabinet: the setup link is unknown, used or expired")
	ErrShortPassword  = errors.New("cabinet: the password is too short")
	ErrLongPassword   = errors.New("cabinet: the password is too long")
)

// Store is what the service keeps in the database (internal/store). Every
// method that decides something (a setup token's use, a sign-in slot) does
// it in one statement or transaction, so two processes cannot both win.
type Store interface {
	// CreateUser stores the user, its grants and its first setup token;
	// ErrEmailTaken when the email is in use.
	CreateUser(ctx context.Context, u User, t SetupToken) error
	FindUserByEmail(ctx context.Context, email string) (*User, error) // nil: none
	ListUsers(ctx context.Context) ([]User, error)
	// DisableUser marks the user disabled and ends its sessions and setup
	// links, in one transaction.
	DisableUser(ctx context.Context, userID string, at time.Time) error
	GrantKey(ctx context.Context, userID, keyID string, at time.Time) error
	// KeysOfUser returns the keys granted to the user.
	KeysOfUser(ctx context.Context, userID string) ([]merchant.Key, error)

	// FindSetupToken returns the user of an unused, unexpired token; nil:
	// none.
	FindSetupToken(ctx context.Context, hash string, now time.Time) (*User, error)
	// CompleteSetup uses the token (once: a compare-and-set on its used
	// time), sets the user's password hash and starts the session, in one
	// transaction; false when the token is unknown, used or expired.
	CompleteSetup(ctx context.Context, hash, passwordHash string, s Session, now time.Time) (bool, error)
	// ReplaceSetupToken stores a new setup token and ends the user's
	// unused ones.
	ReplaceSetupToken(ctx context.Context, t SetupToken, now time.Time) error

	// ReserveSignIn takes one attempt in each subject's window, all or
	// none, refusing when a window is full (docs/cabinet.md).
	ReserveSignIn(ctx context.Context, slots []Slot, now time.Time, window time.Duration) (bool, error)
	// ReleaseSignIn clears the windows of clear and gives one attempt back
	// to each of giveBack: what a success does.
	ReleaseSignIn(ctx context.Context, clear, giveBack []string) error

	CreateSession(ctx context.Context, s Session) error
	// FindSession returns the session and its user; nil: none.
	FindSession(ctx context.Context, hash string) (*Session, *User, error)
	TouchSession(ctx context.Context, hash string, at time.Time) error
	EndSession(ctx context.Context, hash string) error
}

// Slot is one throttling window a sign-in attempt counts against.
type Slot struct {
	Subject string // "email:…" or "ip:…"
	Limit   int
}

// Service manages users, setup links, sign-in and sessions.
type Service struct {
	Store Store
	Now   func() time.Time
	// Params are the Argon2id parameters of new hashes; zero: Recommended.
	Params Params

	dummyOnce sync.Once
	dummy     string
}

func (s *Service) now() time.Time { return s.Now().UTC().Truncate(time.Microsecond) }

func (s *Service) params() Params {
	if s.Params == (Params{}) {
		return Recommended
	}
	return s.Params
}

// dummyHash is checked when there is no hash to check (unknown email, a
// user who never set a password), so that such a sign-in takes the work of
// a real one and its answer cannot be told apart by time.
func (s *Service) dummyHash() string {
	s.dummyOnce.Do(func() {
		secret, _ := NewSecret()
		s.dummy = HashPassword(secret, s.params())
	})
	return s.dummy
}

// CreateUser makes a user with the keys granted and returns it with its
// one-time setup token (the link's last segment).
func (s *Service) CreateUser(ctx context.Context, email string, role Role, keyIDs []string) (User, string, error) {
	email = NormalizeEmail(email)
	if !ValidEmail(email) {
		return User{}, "", errors.New("cabinet: not an email address")
	}
	if !role.Known() {
		return User{}, "", errors.New("cabinet: the role must be admin or viewer")
	}
	now := s.now()
	u := User{ID: uuid.NewString(), Email: email, Role: role, KeyIDs: keyIDs, CreatedAt: now}
	token, hash := NewSecret()
	if err := s.Store.CreateUser(ctx, u, SetupToken{Hash: hash, UserID: u.ID, ExpiresAt: now.Add(SetupLifetime)}); err != nil {
		return User{}, "", err
	}
	return u, token, nil
}

// Users lists every user.
func (s *Service) Users(ctx context.Context) ([]User, error) { return s.Store.ListUsers(ctx) }

func (s *Service) user(ctx context.Context, email string) (*User, error) {
	u, err := s.Store.FindUserByEmail(ctx, NormalizeEmail(email))
	if err == nil && u == nil {
		err = ErrNoUser
	}
	return u, err
}

// Disable stops the user signing in and ends its sessions everywhere.
func (s *Service) Disable(ctx context.Context, email string) error {
	u, err := s.user(ctx, email)
	if err != nil {
		return err
	}
	return s.Store.DisableUser(ctx, u.ID, s.now())
}

// Grant gives the user one more key to see.
func (s *Service) Grant(ctx context.Context, email, keyID string) error {
	u, err := s.user(ctx, email)
	if err != nil {
		return err
	}
	return s.Store.GrantKey(ctx, u.ID, keyID, s.now())
}

// NewSetupLink gives the user a new setup token (a forgotten password, an
// expired link); the earlier links stop working. The user's password stays
// until the new link is used.
func (s *Service) NewSetupLink(ctx context.Context, email string) (string, error) {
	u, err := s.user(ctx, email)
	if err != nil {
		return "", err
	}
	if !u.Active() {
		return "", errors.New("cabinet: the user is disabled")
	}
	now := s.now()
	token, hash := NewSecret()
	return token, s.Store.ReplaceSetupToken(ctx, SetupToken{Hash: hash, UserID: u.ID, ExpiresAt: now.Add(SetupLifetime)}, now)
}

// SetupUser returns the user a setup token is for, or ErrSetupInvalid.
func (s *Service) SetupUser(ctx context.Context, token string) (*User, error) {
	u, err := s.Store.FindSetupToken(ctx, HashSecret(token), s.now())
	if err == nil && (u == nil || !u.Active()) {
		err = ErrSetupInvalid
	}
	return u, err
}

// CompleteSetup sets the password of the token's user, uses the token up
// and signs the user in: it returns the new session's id.
func (s *Service) CompleteSetup(ctx context.Context, token, password string) (string, error) {
	if len([]rune(password)) < MinPassword {
		return "", ErrShortPassword
	}
	if len(password) > maxPassword {
		return "", ErrLongPassword
	}
	u, err := s.SetupUser(ctx, token)
	if err != nil {
		return "", err
	}
	now := s.now()
	id, hash := NewSecret()
	ok, err := s.Store.CompleteSetup(ctx, HashSecret(token), HashPassword(password, s.params()),
		Session{IDHash: hash, UserID: u.ID, CreatedAt: now, LastSeenAt: now}, now)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", ErrSetupInvalid
	}
	return id, nil
}

// SignIn checks the email and password and starts a session, returning its
// id. A wrong password, an unknown email and a disabled user all answer
// ErrBadCredentials after the same work; a full throttling window answers
// ErrThrottled before any password is checked.
func (s *Service) SignIn(ctx context.Context, email, password, clientIP string) (string, error) {
	email = NormalizeEmail(email)
	if !ValidEmail(email) {
		// No user has such an address, and it must not reach the
		// throttle's table: PostgreSQL refuses NUL and invalid UTF-8 in
		// text (docs/api.md, "Text and query strings").
		return "", ErrBadCredentials
	}
	emailSubject, ipSubject := "email:"+email, "ip:"+clientIP
	ok, err := s.Store.ReserveSignIn(ctx, []Slot{{emailSubject, EmailAttempts}, {ipSubject, IPAttempts}},
		s.now(), ThrottleWindow)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", ErrThrottled
	}
	u, err := s.Store.FindUserByEmail(ctx, email)
	if err != nil {
		return "", err
	}
	hash := s.dummyHash()
	if u != nil && u.PasswordHash != "" {
		hash = u.PasswordHash
	}
	match := CheckPassword(password, hash)
	if u == nil || u.PasswordHash == "" || !u.Active() || !match {
		return "", ErrBadCredentials // the attempt stays counted
	}
	if err := s.Store.ReleaseSignIn(ctx, []string{emailSubject}, []string{ipSubject}); err != nil {
		return "", err
	}
	now := s.now()
	id, idHash := NewSecret()
	if err := s.Store.CreateSession(ctx, Session{IDHash: idHash, UserID: u.ID, CreatedAt: now, LastSeenAt: now}); err != nil {
		return "", err
	}
	return id, nil
}

// Session returns the signed-in user of a session id, or nil when the
// session is unknown, ended, idle too long, too old, or its user is
// disabled. It records the use (at most once a minute).
func (s *Service) Session(ctx context.Context, id string) (*User, error) {
	if id == "" {
		return nil, nil
	}
	hash := HashSecret(id)
	sess, u, err := s.Store.FindSession(ctx, hash)
	if err != nil || sess == nil {
		return nil, err
	}
	now := s.now()
	if u == nil || !u.Active() || now.Sub(sess.LastSeenAt) > SessionIdle || now.Sub(sess.CreatedAt) > SessionAbsolute {
		return nil, s.Store.EndSession(ctx, hash)
	}
	if now.Sub(sess.LastSeenAt) >= touchEvery {
		if err := s.Store.TouchSession(ctx, hash, now); err != nil {
			return nil, err
		}
	}
	return u, nil
}

// SignOut ends the session, for every process: it is gone from the
// database.
func (s *Service) SignOut(ctx context.Context, id string) error {
	if id == "" {
		return nil
	}
	return s.Store.EndSession(ctx, HashSecret(id))
}

// Keys returns the keys the user was granted, and only those.
func (s *Service) Keys(ctx context.Context, u User) ([]merchant.Key, error) {
	return s.Store.KeysOfUser(ctx, u.ID)
}
