-- +goose Up
-- The baseline: every Paygate table, as one migration per database (no
-- installation predates it; CHANGELOG.md). Later changes are new migrations
-- that only add (docs/operations.md, "Migrations during a rollout").
-- Times are Unix microseconds (UTC) in BIGINT columns, so that one SQL text
-- serves PostgreSQL and SQLite alike.

-- Access keys. clock_offset_micros is the key's sandbox clock: how far ahead
-- of real time it runs (docs/design/decisions.md section 14).
CREATE TABLE access_keys (
    id                  TEXT PRIMARY KEY,
    access_key          TEXT NOT NULL UNIQUE,
    name                TEXT NOT NULL,
    environment         TEXT NOT NULL,
    secret_sealed       BYTEA NOT NULL,
    direct_card_data    BOOLEAN NOT NULL,
    created_at          BIGINT NOT NULL,
    revoked_at          BIGINT,
    clock_offset_micros BIGINT NOT NULL DEFAULT 0
);

CREATE TABLE channels (
    id              TEXT PRIMARY KEY,
    alias           TEXT NOT NULL UNIQUE,
    provider        TEXT NOT NULL,
    profile         TEXT NOT NULL,
    payment_methods TEXT NOT NULL, -- JSON array
    currencies      TEXT NOT NULL, -- JSON array
    checkout_mode   TEXT NOT NULL,
    auto_assign     BOOLEAN NOT NULL,
    created_at      BIGINT NOT NULL
);

CREATE TABLE key_channels (
    access_key_id TEXT NOT NULL REFERENCES access_keys (id),
    channel_id    TEXT NOT NULL REFERENCES channels (id),
    assigned_at   BIGINT NOT NULL,
    PRIMARY KEY (access_key_id, channel_id)
);

-- A nonce is single-use per key (docs/design/decisions.md section 1); the
-- rows of the last second also count requests for the per-key rate limit.
CREATE TABLE nonces (
    access_key_id TEXT NOT NULL,
    nonce         TEXT NOT NULL,
    created_at    BIGINT NOT NULL,
    PRIMARY KEY (access_key_id, nonce)
);
CREATE INDEX nonces_by_time ON nonces (access_key_id, created_at);

CREATE TABLE idempotency_keys (
    access_key_id   TEXT NOT NULL,
    idempotency_key TEXT NOT NULL,
    fingerprint     TEXT NOT NULL,
    status_code     INTEGER NOT NULL,
    response_body   BYTEA NOT NULL,
    created_at      BIGINT NOT NULL,
    PRIMARY KEY (access_key_id, idempotency_key)
);
CREATE INDEX idempotency_keys_by_time ON idempotency_keys (created_at);

-- provider_payment_id is the provider's id of the payment, card_scheme the
-- scheme of its card (from the BIN). consent_at is when the payer ticked
-- the separate consent box of a subscription (docs/design/decisions.md
-- section 5; the terms' disclosure_version is in subscription). A
-- subscription's charge carries its period and attempt
-- (subscription_period, subscription_attempt).
CREATE TABLE payments (
    id                       TEXT PRIMARY KEY,
    session_id               TEXT UNIQUE,
    access_key_id            TEXT NOT NULL REFERENCES access_keys (id),
    channel_id               TEXT NOT NULL REFERENCES channels (id),
    kind                     TEXT NOT NULL,
    status                   TEXT NOT NULL,
    order_id                 TEXT NOT NULL,
    amount_minor             BIGINT NOT NULL,
    currency                 TEXT NOT NULL,
    description              TEXT NOT NULL,
    first_name               TEXT NOT NULL,
    last_name                TEXT NOT NULL,
    customer_sealed          BYTEA,
    customer_reference       TEXT NOT NULL,
    return_url               TEXT NOT NULL,
    locale                   TEXT NOT NULL,
    operation_mode           TEXT NOT NULL,
    method                   TEXT NOT NULL,
    save_payment_method      BOOLEAN NOT NULL,
    subscription             TEXT, -- JSON SubscriptionTerms
    metadata                 TEXT, -- JSON object
    expires_at               BIGINT,
    authorization_expires_at BIGINT,
    masked_card              TEXT NOT NULL,
    device                   TEXT, -- JSON DeviceSnapshot
    payer_ip                 TEXT NOT NULL,
    decline_code             TEXT NOT NULL,
    decline_message          TEXT NOT NULL,
    next_action_type         TEXT NOT NULL,
    next_action_url          TEXT NOT NULL,
    bank_reference           TEXT, -- JSON BankReference
    captured_amount_minor    BIGINT NOT NULL,
    refunded_amount_minor    BIGINT NOT NULL,
    saved_card_id            TEXT NOT NULL,
    mandate_id               TEXT NOT NULL,
    subscription_id          TEXT NOT NULL,
    created_at               BIGINT NOT NULL,
    updated_at               BIGINT NOT NULL,
    provider_payment_id      TEXT NOT NULL DEFAULT '',
    card_scheme              TEXT NOT NULL DEFAULT '',
    version                  BIGINT NOT NULL DEFAULT 0,
    consent_at               BIGINT,
    subscription_period      BIGINT,
    subscription_attempt     INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX payments_by_key ON payments (access_key_id, created_at, id);
CREATE INDEX payments_by_order ON payments (access_key_id, order_id);
-- The unique index is what makes a second charge of a subscription
-- period's attempt impossible, whatever the schedulers, crashes and
-- retries (docs/design/decisions.md section 11).
CREATE UNIQUE INDEX payments_subscription_charge ON payments (subscription_id, subscription_period, subscription_attempt)
    WHERE subscription_period IS NOT NULL;
-- What a sandbox clock advance looks for, per key (internal/store/clockdue.go;
-- docs/design/decisions.md section 14): the expiries that fall due. Each
-- of these indexes (here and on card_verifications and payouts) holds only
-- the rows in the status that can expire, so it stays small, whatever the
-- size of the tables.
CREATE INDEX payments_session_expiry ON payments (access_key_id, expires_at)
    WHERE status IN ('created', 'awaiting_payment_data');
CREATE INDEX payments_authorization_expiry ON payments (access_key_id, authorization_expires_at)
    WHERE status = 'authorized';
-- The payment list's filters (listPayments (GET /api/v1/payments)), which
-- the cabinet's export and totals share (internal/store/cabinet.go;
-- docs/design/decisions.md section 13): each filter is an equality on one
-- column followed by the list's order, (created_at DESC, id DESC), so a
-- filtered page is a range of one index, whatever the key's number of
-- payments. payments_by_key already serves no filter and the date range;
-- payments_by_order already serves order_id, which matches few payments.
CREATE INDEX payments_by_key_status ON payments (access_key_id, status, created_at, id);
CREATE INDEX payments_by_customer ON payments (access_key_id, customer_reference, created_at, id);
-- The cabinet's chart of payments per day by status (PaymentsPerDay,
-- internal/store/cabinet_pages.go; docs/cabinet.md, "Payments"): its
-- GROUP BY (day, status) over up to 90 days of one key is this index's
-- order, so both databases count reading one range of the index, in
-- order, with no sort and no table row. The day is the query's own
-- expression, created_at / 86400000000 (microseconds per UTC day); with
-- payments_by_key instead, a key holding 800,000 payments took 138 ms
-- (SQLite) and 111 ms (PostgreSQL) for 90 days (docs/benchmarks.md,
-- "Cabinet payments page").
CREATE INDEX payments_by_key_day ON payments (access_key_id, (created_at / 86400000000), status, created_at);

-- An operation is one call Paygate makes to a provider for a resource
-- (internal/operation): the resource's kind and id. Its id is sent as the
-- provider's idempotency key. state: pending (to send), inquiring (the
-- outcome is unknown or unreadable: ask, never resend), done.
-- A run handed off to the process that queued it (internal/handoff;
-- docs/operations.md, "Jobs run where they are queued (handoff)") holds a
-- lease on its row instead of a River job: rescue_at (microseconds since
-- the epoch) is when the lease lapses. The row's final write clears it
-- (an operation done, a delivery's attempt recorded), and so does handing
-- the run back to River; a lease still set after rescue_at belongs to a
-- process that died, and the rescue (operation.Rescue, webhook.Rescue)
-- clears it and queues the River job, once, in one transaction. NULL: no
-- run holds the row (River's job, if any, runs it). webhook_deliveries
-- holds the same lease.
CREATE TABLE operations (
    id           TEXT PRIMARY KEY,
    kind         TEXT NOT NULL,
    state        TEXT NOT NULL,
    amount_minor BIGINT NOT NULL,
    refund_id    TEXT NOT NULL,
    result       TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    updated_at   BIGINT NOT NULL,
    resource     TEXT NOT NULL,
    resource_id  TEXT NOT NULL,
    rescue_at    BIGINT
);
-- A resource's operations, oldest first (a payment's: resource 'payment').
CREATE INDEX operations_by_resource ON operations (resource, resource_id, created_at);
-- Partial: the rescue reads only the leases held, a few per process at any
-- time.
CREATE INDEX operations_leased ON operations (rescue_at) WHERE rescue_at IS NOT NULL;

-- Card data, wallet payloads, phone numbers and codes waiting for the
-- provider, sealed; deleted as soon as the provider has answered.
CREATE TABLE operation_secrets (
    operation_id TEXT PRIMARY KEY REFERENCES operations (id),
    sealed       BYTEA NOT NULL
);

-- A saved card removed through DELETE /cabinet/v1/payment-method-tokens/{id}
-- (docs/design/decisions.md section 13) is kept, marked deleted_at, so that
-- the payments that used it keep their saved_card_id; no reader of usable
-- cards sees it.
CREATE TABLE saved_cards (
    id                 TEXT PRIMARY KEY,
    access_key_id      TEXT NOT NULL REFERENCES access_keys (id),
    customer_reference TEXT NOT NULL,
    provider           TEXT NOT NULL,
    token_sealed       BYTEA NOT NULL,
    masked_card        TEXT NOT NULL,
    scheme             TEXT NOT NULL,
    exp_month          INTEGER NOT NULL,
    exp_year           INTEGER NOT NULL,
    created_at         BIGINT NOT NULL,
    deleted_at         BIGINT
);
CREATE INDEX saved_cards_by_customer ON saved_cards (access_key_id, customer_reference);
-- The key's listing, newest first, with or without a customer reference.
CREATE INDEX saved_cards_by_key_created ON saved_cards (access_key_id, created_at, id);
-- Saved cards of one payer, newest first (saved_cards_by_customer has no
-- order columns).
CREATE INDEX saved_cards_by_customer_created ON saved_cards (access_key_id, customer_reference, created_at, id);

CREATE TABLE refunds (
    id           TEXT PRIMARY KEY,
    payment_id   TEXT NOT NULL REFERENCES payments (id),
    amount_minor BIGINT NOT NULL,
    status       TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    completed_at BIGINT
);
CREATE INDEX refunds_by_payment ON refunds (payment_id, created_at);

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

-- A merchant's webhook endpoints, per access key (docs/design/decisions.md
-- section 6). The signing secret is sealed (AAD: the endpoint id). During a
-- rotation the previous secret keeps signing beside the new one until
-- previous_secret_until. Removal keeps the row (deleted_at), so past
-- deliveries still name it.
CREATE TABLE webhook_endpoints (
    id                     TEXT PRIMARY KEY,
    access_key_id          TEXT NOT NULL REFERENCES access_keys (id),
    url                    TEXT NOT NULL,
    event_types            TEXT NOT NULL, -- JSON array; empty: every type
    secret_sealed          BYTEA NOT NULL,
    previous_secret_sealed BYTEA,
    previous_secret_until  BIGINT,
    disabled_at            BIGINT,
    disabled_reason        TEXT NOT NULL DEFAULT '',
    deleted_at             BIGINT,
    created_at             BIGINT NOT NULL
);
CREATE INDEX webhook_endpoints_by_key ON webhook_endpoints (access_key_id, created_at);

-- One delivery per event and endpoint (the fan-out may run twice).
-- status: pending, succeeded, failed (abandoned; reason says why). attempts
-- and first_attempt_at count the current round, which a resend restarts;
-- generation names the one deliver job allowed to work it. rescue_at is the
-- lease of a handed-off first attempt, as on operations.
CREATE TABLE webhook_deliveries (
    id               TEXT PRIMARY KEY,
    event_id         TEXT NOT NULL REFERENCES events (id),
    endpoint_id      TEXT NOT NULL REFERENCES webhook_endpoints (id),
    status           TEXT NOT NULL,
    reason           TEXT NOT NULL DEFAULT '',
    attempts         INTEGER NOT NULL,
    generation       INTEGER NOT NULL,
    first_attempt_at BIGINT,
    next_attempt_at  BIGINT,
    created_at       BIGINT NOT NULL,
    updated_at       BIGINT NOT NULL,
    rescue_at        BIGINT,
    UNIQUE (event_id, endpoint_id)
);
CREATE INDEX webhook_deliveries_by_endpoint ON webhook_deliveries (endpoint_id, status);
-- The sweep's read: pending deliveries by when they were due, so a delivery
-- whose job was lost is found and queued again (webhook.SweepWorker).
CREATE INDEX webhook_deliveries_pending ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_leased ON webhook_deliveries (rescue_at) WHERE rescue_at IS NOT NULL;

-- Every HTTP attempt: status_code 0 when no answer came (error says why),
-- response the first bytes (at most 500) of the answer's body.
CREATE TABLE webhook_attempts (
    id           TEXT PRIMARY KEY,
    delivery_id  TEXT NOT NULL REFERENCES webhook_deliveries (id),
    attempted_at BIGINT NOT NULL,
    status_code  INTEGER NOT NULL,
    latency_us   BIGINT NOT NULL,
    response     TEXT NOT NULL,
    error        TEXT NOT NULL
);
CREATE INDEX webhook_attempts_by_delivery ON webhook_attempts (delivery_id, attempted_at);

-- Card verifications (createCardVerification (POST /card-verifications)):
-- a resource of their own, never a payment (client API, rule 3). order_id
-- is unique per key: the index makes concurrent duplicates one 201 and the
-- rest 409 duplicate_order_id. Card numbers are never stored: card_checks
-- keeps a keyed hash per verification, for the limit of three per card in
-- 24 hours (docs/design/decisions.md section 15).
CREATE TABLE card_verifications (
    id                   TEXT PRIMARY KEY,
    access_key_id        TEXT NOT NULL REFERENCES access_keys (id),
    channel_id           TEXT NOT NULL,
    order_id             TEXT NOT NULL,
    currency             TEXT NOT NULL,
    description          TEXT NOT NULL,
    metadata             TEXT,
    status               TEXT NOT NULL,
    card_mask            TEXT NOT NULL,
    decline_code         TEXT NOT NULL,
    provider_id          TEXT NOT NULL,
    bank_reference       TEXT,
    verify_attempts      INTEGER NOT NULL,
    expires_at           BIGINT NOT NULL,
    version              BIGINT NOT NULL,
    created_at           BIGINT NOT NULL,
    updated_at           BIGINT NOT NULL
);
CREATE UNIQUE INDEX card_verifications_order ON card_verifications (access_key_id, order_id);
CREATE INDEX card_verifications_expiry ON card_verifications (access_key_id, expires_at)
    WHERE status = 'code_sent';
CREATE TABLE card_checks (
    card_hash  TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX card_checks_by_hash ON card_checks (card_hash, created_at);

-- Allowances (docs/design/decisions.md section 12). One setting per key,
-- allowance and currency; a NULL limit is unset (unlimited).
CREATE TABLE allowance_settings (
    access_key_id         TEXT NOT NULL REFERENCES access_keys (id),
    allowance             TEXT NOT NULL,
    currency              TEXT NOT NULL,
    per_transaction_minor BIGINT,
    daily_minor           BIGINT,
    updated_at            BIGINT NOT NULL,
    PRIMARY KEY (access_key_id, allowance, currency)
);
-- The sums of one UTC day: the conditional UPDATE of reserved_minor is the
-- check and the reservation in one step (internal/store/allowances.go).
CREATE TABLE allowance_usage (
    access_key_id  TEXT NOT NULL,
    allowance      TEXT NOT NULL,
    currency       TEXT NOT NULL,
    day            TEXT NOT NULL,
    used_minor     BIGINT NOT NULL,
    reserved_minor BIGINT NOT NULL,
    PRIMARY KEY (access_key_id, allowance, currency, day)
);
-- One reservation per resource: its state moves once from reserved to
-- consumed or released, so settling twice changes nothing.
CREATE TABLE allowance_reservations (
    resource       TEXT NOT NULL,
    resource_id    TEXT NOT NULL,
    access_key_id  TEXT NOT NULL,
    allowance      TEXT NOT NULL,
    currency       TEXT NOT NULL,
    day            TEXT NOT NULL,
    amount_minor   BIGINT NOT NULL,
    consumed_minor BIGINT NOT NULL,
    state          TEXT NOT NULL,
    created_at     BIGINT NOT NULL,
    updated_at     BIGINT NOT NULL,
    PRIMARY KEY (resource, resource_id)
);

-- Payouts (internal/payout; createPayout (POST /payouts)). The destination
-- card number, wallet payload and one-time codes are never stored here:
-- they live only in the sealed secret of the operation that carries them.
-- order_id is unique per access key: the index is what makes concurrent
-- duplicates end in exactly one payout (409 duplicate_order_id).
CREATE TABLE payouts (
    id                 TEXT PRIMARY KEY,
    access_key_id      TEXT NOT NULL REFERENCES access_keys (id),
    channel_id         TEXT NOT NULL REFERENCES channels (id),
    order_id           TEXT NOT NULL,
    status             TEXT NOT NULL,
    amount_minor       BIGINT NOT NULL,
    currency           TEXT NOT NULL,
    account            TEXT NOT NULL,
    method             TEXT NOT NULL,
    card_mask          TEXT NOT NULL,
    saved_card_id      TEXT NOT NULL,
    description        TEXT NOT NULL,
    return_url         TEXT NOT NULL,
    metadata           TEXT, -- JSON object
    device             TEXT, -- JSON object
    payer_ip           TEXT NOT NULL,
    decline_code       TEXT NOT NULL,
    client_description TEXT NOT NULL,
    next_action_type   TEXT NOT NULL,
    next_action_url    TEXT NOT NULL,
    action_expires_at  BIGINT,
    bank_reference     TEXT, -- JSON BankReference
    provider_payout_id TEXT NOT NULL,
    version            BIGINT NOT NULL,
    created_at         BIGINT NOT NULL,
    updated_at         BIGINT NOT NULL
);
CREATE UNIQUE INDEX payouts_by_order ON payouts (access_key_id, order_id);
CREATE INDEX payouts_action_expiry ON payouts (access_key_id, action_expires_at)
    WHERE status = 'requires_action';

-- Mandates and subscriptions (internal/subscription; docs/design/decisions.md
-- sections 5 and 11; docs/subscriptions.md).

-- A payer's standing consent to be charged on a saved card.
CREATE TABLE mandates (
    id                 TEXT PRIMARY KEY,
    access_key_id      TEXT NOT NULL REFERENCES access_keys (id),
    status             TEXT NOT NULL,
    payment_id         TEXT NOT NULL,
    channel_id         TEXT NOT NULL REFERENCES channels (id),
    customer_reference TEXT NOT NULL,
    disclosure_version TEXT NOT NULL,
    saved_card_id      TEXT NOT NULL,
    card_mask          TEXT NOT NULL,
    card_exp_month     INTEGER NOT NULL,
    card_exp_year      INTEGER NOT NULL,
    consent_at         BIGINT,
    evidence           TEXT, -- JSON subscription.Evidence
    version            BIGINT NOT NULL,
    created_at         BIGINT NOT NULL,
    updated_at         BIGINT NOT NULL
);

-- A schedule of charges on a mandate. period is the next period to
-- charge, attempt the charges of it made so far; charging_payment_id the
-- charge in flight ('' when none).
CREATE TABLE subscriptions (
    id                  TEXT PRIMARY KEY,
    access_key_id       TEXT NOT NULL REFERENCES access_keys (id),
    mandate_id          TEXT NOT NULL REFERENCES mandates (id),
    status              TEXT NOT NULL,
    amount_minor        BIGINT NOT NULL,
    currency            TEXT NOT NULL,
    interval_unit       TEXT NOT NULL,
    interval_count      INTEGER NOT NULL,
    anchor_at           BIGINT NOT NULL,
    period              BIGINT NOT NULL,
    attempt             INTEGER NOT NULL,
    failed_at           BIGINT,
    next_run_at         BIGINT,
    charging_payment_id TEXT NOT NULL,
    last_decline_code   TEXT NOT NULL,
    version             BIGINT NOT NULL,
    created_at          BIGINT NOT NULL,
    updated_at          BIGINT NOT NULL
);
-- What the scheduler looks for: due, nothing in flight.
CREATE INDEX subscriptions_due ON subscriptions (next_run_at)
    WHERE status IN ('active', 'past_due') AND charging_payment_id = '';
CREATE INDEX subscriptions_by_key_due ON subscriptions (access_key_id, next_run_at)
    WHERE status IN ('active', 'past_due') AND charging_payment_id = '';

-- The merchant cabinet's users (docs/design/decisions.md section 13;
-- internal/cabinet, internal/store/cabinet.go). Secrets (setup tokens,
-- session ids) are stored only as their SHA-256; passwords as Argon2id.
CREATE TABLE users (
    id            TEXT PRIMARY KEY,
    email         TEXT NOT NULL UNIQUE,
    password_hash TEXT NOT NULL DEFAULT '',
    role          TEXT NOT NULL,
    created_at    BIGINT NOT NULL,
    disabled_at   BIGINT
);
-- The keys a user sees.
CREATE TABLE user_keys (
    user_id       TEXT NOT NULL REFERENCES users (id),
    access_key_id TEXT NOT NULL REFERENCES access_keys (id),
    granted_at    BIGINT NOT NULL,
    PRIMARY KEY (user_id, access_key_id)
);
-- Server-side sessions, shared by every process: the cookie holds the id,
-- the table its hash.
CREATE TABLE user_sessions (
    id_hash      TEXT PRIMARY KEY,
    user_id      TEXT NOT NULL REFERENCES users (id),
    created_at   BIGINT NOT NULL,
    last_seen_at BIGINT NOT NULL
);
CREATE INDEX user_sessions_user ON user_sessions (user_id);
-- One-time setup links: used_at moves once from NULL (compare-and-set).
CREATE TABLE user_setup_tokens (
    token_hash TEXT PRIMARY KEY,
    user_id    TEXT NOT NULL REFERENCES users (id),
    expires_at BIGINT NOT NULL,
    used_at    BIGINT
);
-- Sign-in throttling windows, per "email:…" and "ip:…" subject: the
-- conditional UPDATE of attempts is the check and the count in one step.
CREATE TABLE sign_in_failures (
    subject      TEXT PRIMARY KEY,
    window_start BIGINT NOT NULL,
    attempts     INTEGER NOT NULL
);

-- The cabinet's lists (docs/cabinet.md): each is one key's rows newest
-- first, (created_at DESC, id DESC), optionally of one status or event
-- type, a keyset page at a time; as payments_by_key_status and
-- payments_by_customer for payments, each filter is an equality followed
-- by the list's order, so a page is a range of one index whatever the
-- key's number of rows.
CREATE INDEX card_verifications_by_key ON card_verifications (access_key_id, created_at, id);
CREATE INDEX card_verifications_by_key_status ON card_verifications (access_key_id, status, created_at, id);
CREATE INDEX payouts_by_key ON payouts (access_key_id, created_at, id);
CREATE INDEX payouts_by_key_status ON payouts (access_key_id, status, created_at, id);
CREATE INDEX subscriptions_by_key_created ON subscriptions (access_key_id, created_at, id);
CREATE INDEX subscriptions_by_key_status ON subscriptions (access_key_id, status, created_at, id);
CREATE INDEX events_by_key_type ON events (access_key_id, type, created_at, id);

-- +goose Down
DROP TABLE sign_in_failures;
DROP TABLE user_setup_tokens;
DROP TABLE user_sessions;
DROP TABLE user_keys;
DROP TABLE users;
DROP TABLE subscriptions;
DROP TABLE mandates;
DROP TABLE payouts;
DROP TABLE allowance_reservations;
DROP TABLE allowance_usage;
DROP TABLE allowance_settings;
DROP TABLE card_checks;
DROP TABLE card_verifications;
DROP TABLE webhook_attempts;
DROP TABLE webhook_deliveries;
DROP TABLE webhook_endpoints;
DROP TABLE events;
DROP TABLE bin_active;
DROP TABLE bin_entries;
DROP TABLE bin_versions;
DROP TABLE refunds;
DROP TABLE saved_cards;
DROP TABLE operation_secrets;
DROP TABLE operations;
DROP TABLE payments;
DROP TABLE idempotency_keys;
DROP TABLE nonces;
DROP TABLE key_channels;
DROP TABLE channels;
DROP TABLE access_keys;
