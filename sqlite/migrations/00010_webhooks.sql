-- +goose Up
-- Webhook endpoints (docs/api.md "Webhooks and events").
CREATE TABLE webhook_endpoints (
    id                    TEXT PRIMARY KEY,
    account_id            TEXT NOT NULL REFERENCES accounts (id),
    url                   TEXT NOT NULL,
    description           TEXT NOT NULL,
    -- The subscribed types as given (a JSON array), and as a bit mask that
    -- the fan-out tests: bit i is mailroom.EventTypes[i]; -1 is "*".
    events                TEXT NOT NULL,
    event_mask            INTEGER NOT NULL,
    enabled               BOOLEAN NOT NULL,
    disabled_reason       TEXT NOT NULL,
    -- Signing keys, sealed with AES-256-GCM under the secret key (package
    -- sealer); the previous one signs too until previous_secret_until.
    secret                BLOB NOT NULL,
    previous_secret       BLOB,
    previous_secret_until INTEGER,
    -- The first failed attempt since the last success.
    failing_since         INTEGER,
    created_at            INTEGER NOT NULL,
    updated_at            INTEGER NOT NULL
);

CREATE INDEX webhook_endpoints_by_account ON webhook_endpoints (account_id, created_at DESC, id DESC);

-- The outbox: one row per event and endpoint, written in the transaction
-- of the event, removed once delivered or given up. due_at is when it may
-- be claimed: a claim moves it to the lease's end, so a delivery whose
-- node died is due again when its lease runs out, with no sweep.
CREATE TABLE webhook_deliveries (
    id          TEXT PRIMARY KEY,
    account_id  TEXT NOT NULL,
    endpoint_id TEXT NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
    event_id    TEXT NOT NULL,
    attempts    INTEGER NOT NULL,
    due_at      INTEGER NOT NULL,
    claim_token TEXT,
    claim_node  TEXT,
    created_at  INTEGER NOT NULL
);

CREATE INDEX webhook_deliveries_due ON webhook_deliveries (due_at);
CREATE INDEX webhook_deliveries_by_endpoint ON webhook_deliveries (endpoint_id, due_at);
CREATE INDEX webhook_deliveries_created ON webhook_deliveries (created_at);

-- The attempts log of GET /v1/webhooks/{id}/deliveries.
CREATE TABLE webhook_attempts (
    id              TEXT PRIMARY KEY,
    account_id      TEXT NOT NULL,
    endpoint_id     TEXT NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
    delivery_id     TEXT NOT NULL,
    event_id        TEXT NOT NULL,
    event_type      TEXT NOT NULL,
    attempt         INTEGER NOT NULL,
    status          TEXT NOT NULL,
    status_code     INTEGER,
    error           TEXT NOT NULL,
    duration_us     INTEGER NOT NULL,
    response_body   TEXT NOT NULL,
    created_at      INTEGER NOT NULL,
    next_attempt_at INTEGER
);

CREATE INDEX webhook_attempts_by_endpoint ON webhook_attempts (endpoint_id, id DESC);
CREATE INDEX webhook_attempts_by_event ON webhook_attempts (endpoint_id, event_id, id DESC);
CREATE INDEX webhook_attempts_created ON webhook_attempts (created_at);

-- GET /v1/events filters by type; retention removes the events of no
-- message (domains', tests') by age.
CREATE INDEX events_by_type ON events (account_id, type, id DESC);
CREATE INDEX events_unattached ON events (created_at) WHERE message_id IS NULL;
