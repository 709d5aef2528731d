-- +goose Up
-- The merchant cabinet's users (docs/design/decisions.md section 13;
-- internal/cabinet, internal/store/cabinet.go). Secrets (setup tokens,
-- session ids) are stored only as their SHA-256; passwords as Argon2id.
CREATE TABLE users (
    id            TEXT PRIMARY KEY,
    email         TEXT NOT NULL UNIQUE,
    password_hash TEXT NOT NULL DEFAULT '',
    role          TEXT NOT NULL,
    created_at    BIGINT NOT NULL,
    disabled_at   BIGINT
);
-- The keys a user sees.
CREATE TABLE user_keys (
    user_id       TEXT NOT NULL REFERENCES users (id),
    access_key_id TEXT NOT NULL REFERENCES access_keys (id),
    granted_at    BIGINT NOT NULL,
    PRIMARY KEY (user_id, access_key_id)
);
-- Server-side sessions, shared by every process: the cookie holds the id,
-- the table its hash.
CREATE TABLE user_sessions (
    id_hash      TEXT PRIMARY KEY,
    user_id      TEXT NOT NULL REFERENCES users (id),
    created_at   BIGINT NOT NULL,
    last_seen_at BIGINT NOT NULL
);
CREATE INDEX user_sessions_user ON user_sessions (user_id);
-- One-time setup links: used_at moves once from NULL (compare-and-set).
CREATE TABLE user_setup_tokens (
    token_hash TEXT PRIMARY KEY,
    user_id    TEXT NOT NULL REFERENCES users (id),
    expires_at BIGINT NOT NULL,
    used_at    BIGINT
);
-- Sign-in throttling windows, per "email:…" and "ip:…" subject: the
-- conditional UPDATE of attempts is the check and the count in one step.
CREATE TABLE sign_in_failures (
    subject      TEXT PRIMARY KEY,
    window_start BIGINT NOT NULL,
    attempts     INTEGER NOT NULL
);

-- +goose Down
DROP TABLE sign_in_failures;
DROP TABLE user_setup_tokens;
DROP TABLE user_sessions;
DROP TABLE user_keys;
DROP TABLE users;
