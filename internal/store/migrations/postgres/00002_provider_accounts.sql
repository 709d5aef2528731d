-- +goose Up
-- Provider accounts: the acquirer accounts operators add with
-- `paygate providers add` (docs/design/decisions.md section 16). A channel's
-- provider column names one of them, or the built-in sandbox. The
-- credentials (an API key, a webhook secret) are sealed with the master key,
-- bound to the account's name.
CREATE TABLE provider_accounts (
    name               TEXT PRIMARY KEY,
    kind               TEXT NOT NULL,
    base_url           TEXT NOT NULL,
    credentials_sealed BYTEA NOT NULL,
    status             TEXT NOT NULL,
    created_at         BIGINT NOT NULL,
    updated_at         BIGINT NOT NULL
);

-- A key's channels in routing order: position first, then the time of
-- assignment (`paygate channels assign --position`), with the conditions
-- of each (docs/design/decisions.md section 17): a weight among the
-- channels of one position, card schemes and card countries (JSON arrays;
-- empty: any), an amount range (NULL: unbounded).
ALTER TABLE key_channels ADD COLUMN position INTEGER NOT NULL DEFAULT 0;
ALTER TABLE key_channels ADD COLUMN weight INTEGER NOT NULL DEFAULT 1;
ALTER TABLE key_channels ADD COLUMN schemes TEXT NOT NULL DEFAULT '[]';
ALTER TABLE key_channels ADD COLUMN card_countries TEXT NOT NULL DEFAULT '[]';
ALTER TABLE key_channels ADD COLUMN min_amount BIGINT;
ALTER TABLE key_channels ADD COLUMN max_amount BIGINT;
-- The channels assigned so far keep their order: 1, 2, … by assignment.
UPDATE key_channels SET position = (SELECT COUNT(*) FROM key_channels k2
    WHERE k2.access_key_id = key_channels.access_key_id
      AND (k2.assigned_at < key_channels.assigned_at
           OR (k2.assigned_at = key_channels.assigned_at AND k2.channel_id <= key_channels.channel_id)));

-- An acquirer's notification names the payment by the acquirer's own id.
CREATE INDEX payments_provider_payment_id ON payments (provider_payment_id) WHERE provider_payment_id <> '';

-- A payment's earlier attempts, each on its own channel with its own
-- operation, written when the payment moves to another channel
-- (docs/design/decisions.md section 17); the current attempt is the
-- payment itself.
CREATE TABLE payment_attempts (
    operation_id TEXT PRIMARY KEY,
    payment_id   TEXT NOT NULL REFERENCES payments (id),
    channel_id   TEXT NOT NULL REFERENCES channels (id),
    status       TEXT NOT NULL,
    decline_code TEXT NOT NULL,
    reason       TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    ended_at     BIGINT NOT NULL
);
CREATE INDEX payment_attempts_payment ON payment_attempts (payment_id, created_at);

-- +goose Down
DROP TABLE payment_attempts;
DROP INDEX payments_provider_payment_id;
ALTER TABLE key_channels DROP COLUMN max_amount;
ALTER TABLE key_channels DROP COLUMN min_amount;
ALTER TABLE key_channels DROP COLUMN card_countries;
ALTER TABLE key_channels DROP COLUMN schemes;
ALTER TABLE key_channels DROP COLUMN weight;
ALTER TABLE key_channels DROP COLUMN position;
DROP TABLE provider_accounts;
