-- +goose Up
-- The sweep's read: pending deliveries by when they were due, so a delivery
-- whose job was lost is found and queued again (webhook.SweepWorker).
CREATE INDEX webhook_deliveries_pending ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';

-- +goose Down
DROP INDEX webhook_deliveries_pending;
