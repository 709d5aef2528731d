-- +goose Up
-- Operations serve every resource that calls a provider, not only payments
-- (internal/operation): the resource's kind and id. Existing rows, and rows
-- an earlier version writes during a rollout, carry only payment_id
-- (resource_id NULL, resource 'payment'): readers take
-- COALESCE(resource_id, payment_id), so no row is rewritten here and the
-- table is locked only for the metadata changes.
-- payment_id stays, set for payments' operations, and may now be NULL (an
-- operation of another resource); it goes in a later release
-- (docs/operations.md, "Migrations during a rollout").
ALTER TABLE operations ADD COLUMN resource TEXT NOT NULL DEFAULT 'payment';
ALTER TABLE operations ADD COLUMN resource_id TEXT;
ALTER TABLE operations ALTER COLUMN payment_id DROP NOT NULL;
CREATE INDEX operations_by_resource ON operations (resource, resource_id, created_at);

-- +goose Down
DROP INDEX operations_by_resource;
ALTER TABLE operations DROP COLUMN resource_id;
ALTER TABLE operations DROP COLUMN resource;
