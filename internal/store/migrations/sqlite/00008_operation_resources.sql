-- +goose Up
-- Operations serve every resource that calls a provider, not only payments
-- (internal/operation): the resource's kind and id, and payment_id may be
-- NULL (an operation of another resource). SQLite cannot relax NOT NULL in
-- place, so the table is rebuilt, with operation_secrets (which refers to
-- it) rebuilt first so that nothing refers to the old table when it is
-- dropped. One process owns a SQLite database, so no rollout runs old code
-- beside it.
CREATE TABLE operations_v2 (
    id           TEXT PRIMARY KEY,
    payment_id   TEXT REFERENCES payments (id),
    kind         TEXT NOT NULL,
    state        TEXT NOT NULL,
    amount_minor BIGINT NOT NULL,
    refund_id    TEXT NOT NULL,
    result       TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    updated_at   BIGINT NOT NULL,
    resource     TEXT NOT NULL DEFAULT 'payment',
    resource_id  TEXT
);
INSERT INTO operations_v2 (id, payment_id, kind, state, amount_minor, refund_id, result, created_at, updated_at, resource, resource_id)
    SELECT id, payment_id, kind, state, amount_minor, refund_id, result, created_at, updated_at, 'payment', payment_id FROM operations;
CREATE TABLE operation_secrets_v2 (
    operation_id TEXT PRIMARY KEY REFERENCES operations_v2 (id),
    sealed       BLOB NOT NULL
);
INSERT INTO operation_secrets_v2 (operation_id, sealed) SELECT operation_id, sealed FROM operation_secrets;
DROP TABLE operation_secrets;
DROP TABLE operations;
ALTER TABLE operations_v2 RENAME TO operations;
ALTER TABLE operation_secrets_v2 RENAME TO operation_secrets;
CREATE INDEX operations_by_payment ON operations (payment_id, created_at);
CREATE INDEX operations_by_resource ON operations (resource, resource_id, created_at);

-- +goose Down
DROP INDEX operations_by_resource;
ALTER TABLE operations DROP COLUMN resource_id;
ALTER TABLE operations DROP COLUMN resource;
