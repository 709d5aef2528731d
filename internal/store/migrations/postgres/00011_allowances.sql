-- +goose Up
-- Allowances (docs/design/decisions.md section 12). One setting per key,
-- allowance and currency; a NULL limit is unset (unlimited).
CREATE TABLE allowance_settings (
    access_key_id         TEXT NOT NULL REFERENCES access_keys (id),
    allowance             TEXT NOT NULL,
    currency              TEXT NOT NULL,
    per_transaction_minor BIGINT,
    daily_minor           BIGINT,
    updated_at            BIGINT NOT NULL,
    PRIMARY KEY (access_key_id, allowance, currency)
);
-- The sums of one UTC day: the conditional UPDATE of reserved_minor is the
-- check and the reservation in one step (internal/store/allowances.go).
CREATE TABLE allowance_usage (
    access_key_id  TEXT NOT NULL,
    allowance      TEXT NOT NULL,
    currency       TEXT NOT NULL,
    day            TEXT NOT NULL,
    used_minor     BIGINT NOT NULL,
    reserved_minor BIGINT NOT NULL,
    PRIMARY KEY (access_key_id, allowance, currency, day)
);
-- One reservation per resource: its state moves once from reserved to
-- consumed or released, so settling twice changes nothing.
CREATE TABLE allowance_reservations (
    resource       TEXT NOT NULL,
    resource_id    TEXT NOT NULL,
    access_key_id  TEXT NOT NULL,
    allowance      TEXT NOT NULL,
    currency       TEXT NOT NULL,
    day            TEXT NOT NULL,
    amount_minor   BIGINT NOT NULL,
    consumed_minor BIGINT NOT NULL,
    state          TEXT NOT NULL,
    created_at     BIGINT NOT NULL,
    updated_at     BIGINT NOT NULL,
    PRIMARY KEY (resource, resource_id)
);

-- +goose Down
DROP TABLE allowance_reservations;
DROP TABLE allowance_usage;
DROP TABLE allowance_settings;
