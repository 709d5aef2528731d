-- +goose Up
-- A reconciliation run's working rows (docs/reconciliation.md, "Scale"):
-- both sides of its day staged (side 0 Paygate's, 1 the acquirer's) and
-- read back a key at a time, and the breaks found, moved into
-- reconciliation_breaks when the run finishes. Empty between runs.
CREATE TABLE reconciliation_staged (
    provider      TEXT NOT NULL,
    day           TEXT NOT NULL,
    match_key     TEXT NOT NULL,
    side          SMALLINT NOT NULL,
    operation_id  TEXT NOT NULL,
    payment_id    TEXT NOT NULL,
    access_key_id TEXT NOT NULL,
    kind          TEXT NOT NULL,
    amount_minor  BIGINT NOT NULL,
    currency      TEXT NOT NULL,
    at            BIGINT NOT NULL,
    ref           TEXT NOT NULL,
    payment_ref   TEXT NOT NULL,
    fee_minor     BIGINT NOT NULL
);
CREATE INDEX reconciliation_staged_key ON reconciliation_staged (provider, day, match_key, side, at);
CREATE INDEX reconciliation_staged_ref ON reconciliation_staged (provider, day, payment_ref, kind) WHERE side = 0;

CREATE TABLE reconciliation_staged_breaks (
    provider          TEXT NOT NULL,
    day               TEXT NOT NULL,
    at                BIGINT NOT NULL,
    kind              TEXT NOT NULL,
    operation_id      TEXT NOT NULL,
    payment_id        TEXT NOT NULL,
    access_key_id     TEXT NOT NULL,
    paygate_kind      TEXT,
    paygate_amount    BIGINT,
    paygate_currency  TEXT,
    paygate_at        BIGINT,
    provider_kind     TEXT,
    provider_amount   BIGINT,
    provider_currency TEXT,
    provider_at       BIGINT,
    provider_ref      TEXT
);
CREATE INDEX reconciliation_staged_breaks_day ON reconciliation_staged_breaks (provider, day, at);

-- +goose Down
DROP TABLE reconciliation_staged_breaks;
DROP TABLE reconciliation_staged;
