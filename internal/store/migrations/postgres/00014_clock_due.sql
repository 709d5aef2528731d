-- +goose Up
-- What a sandbox clock advance looks for, per key (internal/store/clockdue.go;
-- docs/design/decisions.md section 14): the expiries that fall due. Each
-- index holds only the rows in the status that can expire, so it stays
-- small, whatever the size of the tables.
CREATE INDEX payments_session_expiry ON payments (access_key_id, expires_at)
    WHERE status IN ('created', 'awaiting_payment_data');
CREATE INDEX payments_authorization_expiry ON payments (access_key_id, authorization_expires_at)
    WHERE status = 'authorized';
CREATE INDEX card_verifications_expiry ON card_verifications (access_key_id, expires_at)
    WHERE status = 'code_sent';
CREATE INDEX payouts_action_expiry ON payouts (access_key_id, action_expires_at)
    WHERE status = 'requires_action';

-- +goose Down
DROP INDEX payouts_action_expiry;
DROP INDEX card_verifications_expiry;
DROP INDEX payments_authorization_expiry;
DROP INDEX payments_session_expiry;
