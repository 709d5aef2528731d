-- +goose Up
-- Every status change of a resource, written in the change's transaction
-- (docs/design/decisions.md section 6). body is the event exactly as delivered.
CREATE TABLE events (
    id            TEXT PRIMARY KEY,
    access_key_id TEXT NOT NULL,
    type          TEXT NOT NULL,
    resource_type TEXT NOT NULL,
    resource_id   TEXT NOT NULL,
    body          TEXT NOT NULL,
    created_at    BIGINT NOT NULL
);
CREATE INDEX events_by_key ON events (access_key_id, created_at, id);
CREATE INDEX events_by_resource ON events (access_key_id, resource_id, created_at);

-- +goose Down
DROP TABLE events;
