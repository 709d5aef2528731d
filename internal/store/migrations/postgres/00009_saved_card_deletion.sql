-- +goose Up
-- A saved card removed through DELETE /cabinet/v1/payment-method-tokens/{id}
-- (docs/design/decisions.md section 13) is kept, marked deleted_at, so that
-- the payments that used it keep their saved_card_id; no reader of usable
-- cards sees it. The index serves the key's listing, newest first, with or
-- without a customer reference. Migrations only add (docs/operations.md).
ALTER TABLE saved_cards ADD COLUMN deleted_at BIGINT;
CREATE INDEX saved_cards_by_key_created ON saved_cards (access_key_id, created_at, id);

-- +goose Down
DROP INDEX saved_cards_by_key_created;
ALTER TABLE saved_cards DROP COLUMN deleted_at;
