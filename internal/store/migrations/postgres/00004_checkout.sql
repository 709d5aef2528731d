-- +goose Up
-- When the payer ticked the separate consent box of a subscription
-- (docs/design/decisions.md section 5; the terms' disclosure_version is in
-- payments.subscription).
ALTER TABLE payments ADD COLUMN consent_at BIGINT;

-- +goose Down
ALTER TABLE payments DROP COLUMN consent_at;
