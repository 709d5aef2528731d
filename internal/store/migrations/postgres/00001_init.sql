-- +goose Up
-- Times are Unix microseconds (UTC) in BIGINT columns, so that one SQL text
-- serves PostgreSQL and SQLite alike.
CREATE TABLE access_keys (
    id               TEXT PRIMARY KEY,
    access_key       TEXT NOT NULL UNIQUE,
    name             TEXT NOT NULL,
    environment      TEXT NOT NULL,
    secret_sealed    BYTEA NOT NULL,
    direct_card_data BOOLEAN NOT NULL,
    created_at       BIGINT NOT NULL,
    revoked_at       BIGINT
);

CREATE TABLE channels (
    id              TEXT PRIMARY KEY,
    alias           TEXT NOT NULL UNIQUE,
    provider        TEXT NOT NULL,
    profile         TEXT NOT NULL,
    payment_methods TEXT NOT NULL, -- JSON array
    currencies      TEXT NOT NULL, -- JSON array
    checkout_mode   TEXT NOT NULL,
    auto_assign     BOOLEAN NOT NULL,
    created_at      BIGINT NOT NULL
);

CREATE TABLE key_channels (
    access_key_id TEXT NOT NULL REFERENCES access_keys (id),
    channel_id    TEXT NOT NULL REFERENCES channels (id),
    assigned_at   BIGINT NOT NULL,
    PRIMARY KEY (access_key_id, channel_id)
);

-- A nonce is single-use per key (docs/design/decisions.md section 1); the
-- rows of the last second also count requests for the per-key rate limit.
CREATE TABLE nonces (
    access_key_id TEXT NOT NULL,
    nonce         TEXT NOT NULL,
    created_at    BIGINT NOT NULL,
    PRIMARY KEY (access_key_id, nonce)
);
CREATE INDEX nonces_by_time ON nonces (access_key_id, created_at);

CREATE TABLE idempotency_keys (
    access_key_id   TEXT NOT NULL,
    idempotency_key TEXT NOT NULL,
    fingerprint     TEXT NOT NULL,
    status_code     INTEGER NOT NULL,
    response_body   BYTEA NOT NULL,
    created_at      BIGINT NOT NULL,
    PRIMARY KEY (access_key_id, idempotency_key)
);
CREATE INDEX idempotency_keys_by_time ON idempotency_keys (created_at);

CREATE TABLE payments (
    id                       TEXT PRIMARY KEY,
    session_id               TEXT UNIQUE,
    access_key_id            TEXT NOT NULL REFERENCES access_keys (id),
    channel_id               TEXT NOT NULL REFERENCES channels (id),
    kind                     TEXT NOT NULL,
    status                   TEXT NOT NULL,
    order_id                 TEXT NOT NULL,
    amount_minor             BIGINT NOT NULL,
    currency                 TEXT NOT NULL,
    description              TEXT NOT NULL,
    first_name               TEXT NOT NULL,
    last_name                TEXT NOT NULL,
    customer_sealed          BYTEA,
    customer_reference       TEXT NOT NULL,
    return_url               TEXT NOT NULL,
    locale                   TEXT NOT NULL,
    operation_mode           TEXT NOT NULL,
    method                   TEXT NOT NULL,
    save_payment_method      BOOLEAN NOT NULL,
    subscription             TEXT, -- JSON SubscriptionTerms
    metadata                 TEXT, -- JSON object
    expires_at               BIGINT,
    authorization_expires_at BIGINT,
    masked_card              TEXT NOT NULL,
    device                   TEXT, -- JSON DeviceSnapshot
    payer_ip                 TEXT NOT NULL,
    decline_code             TEXT NOT NULL,
    decline_message          TEXT NOT NULL,
    next_action_type         TEXT NOT NULL,
    next_action_url          TEXT NOT NULL,
    bank_reference           TEXT, -- JSON BankReference
    captured_amount_minor    BIGINT NOT NULL,
    refunded_amount_minor    BIGINT NOT NULL,
    saved_card_id            TEXT NOT NULL,
    mandate_id               TEXT NOT NULL,
    subscription_id          TEXT NOT NULL,
    created_at               BIGINT NOT NULL,
    updated_at               BIGINT NOT NULL
);
CREATE INDEX payments_by_key ON payments (access_key_id, created_at, id);
CREATE INDEX payments_by_order ON payments (access_key_id, order_id);

-- +goose Down
DROP TABLE payments;
DROP TABLE idempotency_keys;
DROP TABLE nonces;
DROP TABLE key_channels;
DROP TABLE channels;
DROP TABLE access_keys;
