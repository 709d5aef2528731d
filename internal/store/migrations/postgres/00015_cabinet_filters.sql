-- +goose Up
-- The payment list's filters (listPayments (GET /api/v1/payments)), which
-- the cabinet's export and totals share (internal/store/cabinet.go;
-- docs/design/decisions.md section 13): each filter is an equality on one
-- column followed by the list's order, (created_at DESC, id DESC), so a
-- filtered page is a range of one index, whatever the key's number of
-- payments. payments_by_key (access_key_id, created_at, id) already serves
-- no filter and the date range; payments_by_order (access_key_id,
-- order_id) already serves order_id, which matches few payments.
CREATE INDEX payments_by_key_status ON payments (access_key_id, status, created_at, id);
CREATE INDEX payments_by_customer ON payments (access_key_id, customer_reference, created_at, id);

-- +goose Down
DROP INDEX payments_by_customer;
DROP INDEX payments_by_key_status;
