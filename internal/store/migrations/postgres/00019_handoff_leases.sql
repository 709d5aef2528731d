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
ALTER TABLE operations ADD COLUMN rescue_at BIGINT;
CREATE INDEX operations_leased ON operations (rescue_at) WHERE rescue_at IS NOT NULL;
ALTER TABLE webhook_deliveries ADD COLUMN rescue_at BIGINT;
CREATE INDEX webhook_deliveries_leased ON webhook_deliveries (rescue_at) WHERE rescue_at IS NOT NULL;

-- +goose Down
DROP INDEX webhook_deliveries_leased;
ALTER TABLE webhook_deliveries DROP COLUMN rescue_at;
DROP INDEX operations_leased;
ALTER TABLE operations DROP COLUMN rescue_at;
