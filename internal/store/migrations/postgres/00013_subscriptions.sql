-- +goose Up
-- Mandates and subscriptions (internal/subscription; docs/design/decisions.md
-- sections 5 and 11; docs/subscriptions.md) and the sandbox's per-key clock
-- (docs/design/decisions.md section 14).

-- A payer's standing consent to be charged on a saved card. Times are UTC
-- microseconds like every other table.
CREATE TABLE mandates (
    id                 TEXT PRIMARY KEY,
    access_key_id      TEXT NOT NULL REFERENCES access_keys (id),
    status             TEXT NOT NULL,
    payment_id         TEXT NOT NULL,
    channel_id         TEXT NOT NULL REFERENCES channels (id),
    customer_reference TEXT NOT NULL,
    disclosure_version TEXT NOT NULL,
    saved_card_id      TEXT NOT NULL,
    card_mask          TEXT NOT NULL,
    card_exp_month     INTEGER NOT NULL,
    card_exp_year      INTEGER NOT NULL,
    consent_at         BIGINT,
    evidence           TEXT, -- JSON subscription.Evidence
    version            BIGINT NOT NULL,
    created_at         BIGINT NOT NULL,
    updated_at         BIGINT NOT NULL
);

-- A schedule of charges on a mandate. period is the next period to
-- charge, attempt the charges of it made so far; charging_payment_id the
-- charge in flight ('' when none).
CREATE TABLE subscriptions (
    id                  TEXT PRIMARY KEY,
    access_key_id       TEXT NOT NULL REFERENCES access_keys (id),
    mandate_id          TEXT NOT NULL REFERENCES mandates (id),
    status              TEXT NOT NULL,
    amount_minor        BIGINT NOT NULL,
    currency            TEXT NOT NULL,
    interval_unit       TEXT NOT NULL,
    interval_count      INTEGER NOT NULL,
    anchor_at           BIGINT NOT NULL,
    period              BIGINT NOT NULL,
    attempt             INTEGER NOT NULL,
    failed_at           BIGINT,
    next_run_at         BIGINT,
    charging_payment_id TEXT NOT NULL,
    last_decline_code   TEXT NOT NULL,
    version             BIGINT NOT NULL,
    created_at          BIGINT NOT NULL,
    updated_at          BIGINT NOT NULL
);
-- What the scheduler looks for: due, nothing in flight.
CREATE INDEX subscriptions_due ON subscriptions (next_run_at)
    WHERE status IN ('active', 'past_due') AND charging_payment_id = '';
CREATE INDEX subscriptions_by_key_due ON subscriptions (access_key_id, next_run_at)
    WHERE status IN ('active', 'past_due') AND charging_payment_id = '';

-- A subscription's charge carries its period and attempt. The unique index
-- is what makes a second charge of a period's attempt impossible, whatever
-- the schedulers, crashes and retries (docs/design/decisions.md section 11).
ALTER TABLE payments ADD COLUMN subscription_period BIGINT;
ALTER TABLE payments ADD COLUMN subscription_attempt INTEGER NOT NULL DEFAULT 0;
CREATE UNIQUE INDEX payments_subscription_charge ON payments (subscription_id, subscription_period, subscription_attempt)
    WHERE subscription_period IS NOT NULL;

-- The sandbox clock of each key: how far ahead of real time it runs.
ALTER TABLE access_keys ADD COLUMN clock_offset_micros BIGINT NOT NULL DEFAULT 0;

-- +goose Down
DROP INDEX payments_subscription_charge;
DROP TABLE subscriptions;
DROP TABLE mandates;
