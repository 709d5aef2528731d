-- +goose Up
-- Card verifications (createCardVerification (POST /card-verifications)):
-- a resource of their own, never a payment (client API, rule 3). order_id
-- is unique per key: the index makes concurrent duplicates one 201 and the
-- rest 409 duplicate_order_id. Card numbers are never stored: card_checks
-- keeps a keyed hash per verification, for the limit of three per card in
-- 24 hours (docs/design/decisions.md section 15).
CREATE TABLE card_verifications (
    id                   TEXT PRIMARY KEY,
    access_key_id        TEXT NOT NULL REFERENCES access_keys (id),
    channel_id           TEXT NOT NULL,
    order_id             TEXT NOT NULL,
    currency             TEXT NOT NULL,
    description          TEXT NOT NULL,
    metadata             TEXT,
    status               TEXT NOT NULL,
    card_mask            TEXT NOT NULL,
    decline_code         TEXT NOT NULL,
    provider_id          TEXT NOT NULL,
    bank_reference       TEXT,
    verify_attempts      INTEGER NOT NULL,
    expires_at           BIGINT NOT NULL,
    version              BIGINT NOT NULL,
    created_at           BIGINT NOT NULL,
    updated_at           BIGINT NOT NULL
);
CREATE UNIQUE INDEX card_verifications_order ON card_verifications (access_key_id, order_id);
CREATE TABLE card_checks (
    card_hash  TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX card_checks_by_hash ON card_checks (card_hash, created_at);

-- +goose Down
DROP TABLE card_checks;
DROP TABLE card_verifications;
