-- +goose Up
-- Payouts (internal/payout; createPayout (POST /payouts)). The destination
-- card number, wallet payload and one-time codes are never stored here:
-- they live only in the sealed secret of the operation that carries them.
-- order_id is unique per access key: the index is what makes concurrent
-- duplicates end in exactly one payout (409 duplicate_order_id).
CREATE TABLE payouts (
    id                 TEXT PRIMARY KEY,
    access_key_id      TEXT NOT NULL REFERENCES access_keys (id),
    channel_id         TEXT NOT NULL REFERENCES channels (id),
    order_id           TEXT NOT NULL,
    status             TEXT NOT NULL,
    amount_minor       BIGINT NOT NULL,
    currency           TEXT NOT NULL,
    account            TEXT NOT NULL,
    method             TEXT NOT NULL,
    card_mask          TEXT NOT NULL,
    saved_card_id      TEXT NOT NULL,
    description        TEXT NOT NULL,
    return_url         TEXT NOT NULL,
    metadata           TEXT, -- JSON object
    device             TEXT, -- JSON object
    payer_ip           TEXT NOT NULL,
    decline_code       TEXT NOT NULL,
    client_description TEXT NOT NULL,
    next_action_type   TEXT NOT NULL,
    next_action_url    TEXT NOT NULL,
    action_expires_at  BIGINT,
    bank_reference     TEXT, -- JSON BankReference
    provider_payout_id TEXT NOT NULL,
    version            BIGINT NOT NULL,
    created_at         BIGINT NOT NULL,
    updated_at         BIGINT NOT NULL
);
CREATE UNIQUE INDEX payouts_by_order ON payouts (access_key_id, order_id);

-- +goose Down
DROP TABLE payouts;
