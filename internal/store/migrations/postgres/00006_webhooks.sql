-- +goose Up
-- A merchant's webhook endpoints, per access key (docs/design/decisions.md
-- section 6). The signing secret is sealed (AAD: the endpoint id). During a
-- rotation the previous secret keeps signing beside the new one until
-- previous_secret_until. Removal keeps the row (deleted_at), so past
-- deliveries still name it.
CREATE TABLE webhook_endpoints (
    id                     TEXT PRIMARY KEY,
    access_key_id          TEXT NOT NULL REFERENCES access_keys (id),
    url                    TEXT NOT NULL,
    event_types            TEXT NOT NULL, -- JSON array; empty: every type
    secret_sealed          BYTEA NOT NULL,
    previous_secret_sealed BYTEA,
    previous_secret_until  BIGINT,
    disabled_at            BIGINT,
    disabled_reason        TEXT NOT NULL DEFAULT '',
    deleted_at             BIGINT,
    created_at             BIGINT NOT NULL
);
CREATE INDEX webhook_endpoints_by_key ON webhook_endpoints (access_key_id, created_at);

-- One delivery per event and endpoint (the fan-out may run twice).
-- status: pending, succeeded, failed (abandoned; reason says why). attempts
-- and first_attempt_at count the current round, which a resend restarts;
-- generation names the one deliver job allowed to work it.
CREATE TABLE webhook_deliveries (
    id               TEXT PRIMARY KEY,
    event_id         TEXT NOT NULL REFERENCES events (id),
    endpoint_id      TEXT NOT NULL REFERENCES webhook_endpoints (id),
    status           TEXT NOT NULL,
    reason           TEXT NOT NULL DEFAULT '',
    attempts         INTEGER NOT NULL,
    generation       INTEGER NOT NULL,
    first_attempt_at BIGINT,
    next_attempt_at  BIGINT,
    created_at       BIGINT NOT NULL,
    updated_at       BIGINT NOT NULL,
    UNIQUE (event_id, endpoint_id)
);
CREATE INDEX webhook_deliveries_by_endpoint ON webhook_deliveries (endpoint_id, status);

-- Every HTTP attempt: status_code 0 when no answer came (error says why),
-- response the first bytes (at most 500) of the answer's body.
CREATE TABLE webhook_attempts (
    id           TEXT PRIMARY KEY,
    delivery_id  TEXT NOT NULL REFERENCES webhook_deliveries (id),
    attempted_at BIGINT NOT NULL,
    status_code  INTEGER NOT NULL,
    latency_us   BIGINT NOT NULL,
    response     TEXT NOT NULL,
    error        TEXT NOT NULL
);
CREATE INDEX webhook_attempts_by_delivery ON webhook_attempts (delivery_id, attempted_at);

-- +goose Down
DROP TABLE webhook_attempts;
DROP TABLE webhook_deliveries;
DROP TABLE webhook_endpoints;
