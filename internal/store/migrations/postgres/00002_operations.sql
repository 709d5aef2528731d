-- +goose Up
-- The provider's id of a payment, and the scheme of its card (from the BIN).
ALTER TABLE payments ADD COLUMN provider_payment_id TEXT NOT NULL DEFAULT '';
ALTER TABLE payments ADD COLUMN card_scheme TEXT NOT NULL DEFAULT '';
ALTER TABLE payments ADD COLUMN version BIGINT NOT NULL DEFAULT 0;

-- An operation is one call Paygate makes to a provider for a payment. Its
-- id is sent as the provider's idempotency key. state: pending (to send),
-- inquiring (the outcome is unknown or unreadable: ask, never resend), done.
CREATE TABLE operations (
    id           TEXT PRIMARY KEY,
    payment_id   TEXT NOT NULL REFERENCES payments (id),
    kind         TEXT NOT NULL,
    state        TEXT NOT NULL,
    amount_minor BIGINT NOT NULL,
    refund_id    TEXT NOT NULL,
    result       TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    updated_at   BIGINT NOT NULL
);
CREATE INDEX operations_by_payment ON operations (payment_id, created_at);

-- Card data, wallet payloads, phone numbers and codes waiting for the
-- provider, sealed; deleted as soon as the provider has answered.
CREATE TABLE operation_secrets (
    operation_id TEXT PRIMARY KEY REFERENCES operations (id),
    sealed       BYTEA NOT NULL
);

CREATE TABLE saved_cards (
    id                 TEXT PRIMARY KEY,
    access_key_id      TEXT NOT NULL REFERENCES access_keys (id),
    customer_reference TEXT NOT NULL,
    provider           TEXT NOT NULL,
    token_sealed       BYTEA NOT NULL,
    masked_card        TEXT NOT NULL,
    scheme             TEXT NOT NULL,
    exp_month          INTEGER NOT NULL,
    exp_year           INTEGER NOT NULL,
    created_at         BIGINT NOT NULL
);
CREATE INDEX saved_cards_by_customer ON saved_cards (access_key_id, customer_reference);

CREATE TABLE refunds (
    id           TEXT PRIMARY KEY,
    payment_id   TEXT NOT NULL REFERENCES payments (id),
    amount_minor BIGINT NOT NULL,
    status       TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    completed_at BIGINT
);
CREATE INDEX refunds_by_payment ON refunds (payment_id, created_at);

-- +goose Down
DROP TABLE refunds;
DROP TABLE saved_cards;
DROP TABLE operation_secrets;
DROP TABLE operations;
ALTER TABLE payments DROP COLUMN version;
ALTER TABLE payments DROP COLUMN card_scheme;
ALTER TABLE payments DROP COLUMN provider_payment_id;
