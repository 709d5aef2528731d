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
    credentials_sealed BLOB NOT NULL,
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

-- An acquirer's notification names the payment by the acquirer's own id.
CREATE INDEX payments_provider_payment_id ON payments (provider_payment_id) WHERE provider_payment_id <> '';

-- +goose Down
DROP INDEX payments_provider_payment_id;
ALTER TABLE key_channels DROP COLUMN max_amount;
ALTER TABLE key_channels DROP COLUMN min_amount;
ALTER TABLE key_channels DROP COLUMN card_countries;
ALTER TABLE key_channels DROP COLUMN schemes;
ALTER TABLE key_channels DROP COLUMN weight;
ALTER TABLE key_channels DROP COLUMN position;
DROP TABLE provider_accounts;
