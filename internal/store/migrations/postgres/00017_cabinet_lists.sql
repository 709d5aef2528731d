-- +goose Up
-- The cabinet's lists (docs/cabinet.md): each is one key's rows newest
-- first, (created_at DESC, id DESC), optionally of one status or event
-- type, a keyset page at a time; as in 00015 for payments, each filter is
-- an equality followed by the list's order, so a page is a range of one
-- index whatever the key's number of rows.
CREATE INDEX card_verifications_by_key ON card_verifications (access_key_id, created_at, id);
CREATE INDEX card_verifications_by_key_status ON card_verifications (access_key_id, status, created_at, id);
CREATE INDEX payouts_by_key ON payouts (access_key_id, created_at, id);
CREATE INDEX payouts_by_key_status ON payouts (access_key_id, status, created_at, id);
CREATE INDEX subscriptions_by_key_created ON subscriptions (access_key_id, created_at, id);
CREATE INDEX subscriptions_by_key_status ON subscriptions (access_key_id, status, created_at, id);
CREATE INDEX events_by_key_type ON events (access_key_id, type, created_at, id);
-- Saved cards of one payer, newest first (saved_cards_by_customer has no
-- order columns).
CREATE INDEX saved_cards_by_customer_created ON saved_cards (access_key_id, customer_reference, created_at, id);

-- +goose Down
DROP INDEX saved_cards_by_customer_created;
DROP INDEX events_by_key_type;
DROP INDEX subscriptions_by_key_status;
DROP INDEX subscriptions_by_key_created;
DROP INDEX payouts_by_key_status;
DROP INDEX payouts_by_key;
DROP INDEX card_verifications_by_key_status;
DROP INDEX card_verifications_by_key;
