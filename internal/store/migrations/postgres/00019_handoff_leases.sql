-- +goose NO TRANSACTION
-- +goose Up
-- A run handed off to the process that queued it (internal/handoff;
-- docs/operations.md, "Jobs run where they are queued (handoff)") holds a
-- lease on its row instead of a River job: rescue_at (microseconds since
-- the epoch) is when the lease lapses. The row's final write clears it
-- (an operation done, a delivery's attempt recorded), and so does handing
-- the run back to River; a lease still set after rescue_at belongs to a
-- process that died, and the rescue (operation.Rescue, webhook.Rescue)
-- clears it and queues the River job, once, in one transaction. NULL: no
-- run holds the row (River's job, if any, runs it). Partial indexes: the
-- rescue reads only the leases held, a few per process at any time.
--
-- Built CONCURRENTLY, outside a transaction: operations and deliveries
-- grow with every payment, and a plain CREATE INDEX would hold their
-- writes for the whole scan while the earlier version still serves
-- during a rollout. Each statement may be run again (IF NOT EXISTS).
ALTER TABLE operations ADD COLUMN IF NOT EXISTS rescue_at BIGINT;
CREATE INDEX CONCURRENTLY IF NOT EXISTS operations_leased ON operations (rescue_at) WHERE rescue_at IS NOT NULL;
ALTER TABLE webhook_deliveries ADD COLUMN IF NOT EXISTS rescue_at BIGINT;
CREATE INDEX CONCURRENTLY IF NOT EXISTS webhook_deliveries_leased ON webhook_deliveries (rescue_at) WHERE rescue_at IS NOT NULL;

-- +goose Down
DROP INDEX CONCURRENTLY IF EXISTS webhook_deliveries_leased;
ALTER TABLE webhook_deliveries DROP COLUMN IF EXISTS rescue_at;
DROP INDEX CONCURRENTLY IF EXISTS operations_leased;
ALTER TABLE operations DROP COLUMN IF EXISTS rescue_at;
