-- +goose Up
-- The versioned BIN base (getCardInformation (GET /cards/information);
-- docs/design/dependencies.md, BIN data). A version is one imported file, or
-- the default built into the binary; its entries are never changed after
-- import. bin_active holds one row naming the version that answers, so
-- exactly one version is active and switching is a single upsert.
CREATE TABLE bin_versions (
    id           TEXT PRIMARY KEY,
    label        TEXT NOT NULL,
    source       TEXT NOT NULL, -- the imported file's name, or "built-in"
    entry_count  BIGINT NOT NULL,
    created_at   BIGINT NOT NULL,
    activated_at BIGINT          -- the last activation; NULL: never active
);

-- An entry is a 6- or 8-digit BIN (prefix) or a range of 8-digit BINs
-- (range_low..range_high, inclusive), never both.
CREATE TABLE bin_entries (
    version_id     TEXT NOT NULL REFERENCES bin_versions (id),
    prefix         TEXT,
    range_low      BIGINT,
    range_high     BIGINT,
    scheme         TEXT NOT NULL,
    card_type      TEXT NOT NULL,
    card_level     TEXT NOT NULL,
    issuer         TEXT NOT NULL,
    country        TEXT NOT NULL,
    country_code   TEXT NOT NULL,
    issuer_website TEXT NOT NULL,
    issuer_phone   TEXT NOT NULL,
    CHECK ((prefix IS NULL) = (range_low IS NOT NULL AND range_high IS NOT NULL))
);
CREATE UNIQUE INDEX bin_entries_by_prefix ON bin_entries (version_id, prefix);
CREATE INDEX bin_entries_by_range ON bin_entries (version_id, range_low, range_high) WHERE prefix IS NULL;

CREATE TABLE bin_active (
    singleton  INTEGER PRIMARY KEY CHECK (singleton = 1),
    version_id TEXT NOT NULL REFERENCES bin_versions (id)
);

-- +goose Down
DROP TABLE bin_active;
DROP TABLE bin_entries;
DROP TABLE bin_versions;
