-- +goose Up
-- Reconciliation (docs/design/decisions.md section 18): a run per provider
-- account and UTC day (day is YYYY-MM-DD), its counts, and every break with
-- both sides. Running a day again replaces its result; a run claims its
-- day (status running) so that two never run it at once.
CREATE TABLE reconciliation_runs (
    provider       TEXT NOT NULL,
    day            TEXT NOT NULL,
    status         TEXT NOT NULL,
    started_at     BIGINT NOT NULL,
    finished_at    BIGINT,
    paygate_count  BIGINT NOT NULL DEFAULT 0,
    provider_count BIGINT NOT NULL DEFAULT 0,
    matched        BIGINT NOT NULL DEFAULT 0,
    pending        BIGINT NOT NULL DEFAULT 0,
    breaks         BIGINT NOT NULL DEFAULT 0,
    fees_minor     BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (provider, day)
);

CREATE TABLE reconciliation_breaks (
    provider          TEXT NOT NULL,
    day               TEXT NOT NULL,
    seq               INTEGER NOT NULL,
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
    provider_ref      TEXT,
    PRIMARY KEY (provider, day, seq)
);

-- A day's operations by the time they ended: what reconciliation reads.
CREATE INDEX operations_updated ON operations (updated_at);

-- +goose Down
DROP INDEX operations_updated;
DROP TABLE reconciliation_breaks;
DROP TABLE reconciliation_runs;
