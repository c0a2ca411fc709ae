-- +goose Up
CREATE TABLE messages (
    id              TEXT PRIMARY KEY,
    account_id      TEXT NOT NULL REFERENCES accounts (id),
    status          TEXT NOT NULL,
    -- The bare from address, subject and category, for the log's filters.
    from_address    TEXT NOT NULL,
    subject         TEXT NOT NULL,
    category        TEXT NOT NULL,
    domain          TEXT NOT NULL,
    idempotency_key TEXT,
    request_digest  BLOB,
    -- Everything else of the request (addresses, bodies, headers,
    -- attachments, tags) as JSON.
    content         TEXT NOT NULL,
    -- The signed RFC 5322 bytes, stored once when first composed.
    raw             BLOB,
    created_at      INTEGER NOT NULL,
    scheduled_at    INTEGER
);

-- The idempotency check: one message per key and account.
CREATE UNIQUE INDEX messages_idempotency ON messages (account_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
CREATE INDEX messages_by_account ON messages (account_id, id DESC);
CREATE INDEX messages_by_status ON messages (account_id, status, id DESC);
CREATE INDEX messages_by_from ON messages (account_id, from_address, id DESC);
CREATE INDEX messages_by_created ON messages (created_at);

CREATE TABLE message_tags (
    message_id TEXT NOT NULL REFERENCES messages (id) ON DELETE CASCADE,
    account_id TEXT NOT NULL,
    key        TEXT NOT NULL,
    value      TEXT NOT NULL,
    PRIMARY KEY (message_id, key)
);

CREATE INDEX message_tags_lookup ON message_tags (account_id, key, value, message_id DESC);

-- The recipients are the delivery queue: due_at is when a recipient is
-- next due (NULL once finished); a claim pushes it forward by the lease.
CREATE TABLE recipients (
    message_id      TEXT NOT NULL REFERENCES messages (id) ON DELETE CASCADE,
    address         TEXT NOT NULL,
    account_id      TEXT NOT NULL,
    kind            TEXT NOT NULL,
    -- The recipient's place in the request: to, then cc, then bcc.
    position        INTEGER NOT NULL,
    status          TEXT NOT NULL,
    attempts        INTEGER NOT NULL DEFAULT 0,
    last_attempt_at INTEGER,
    next_attempt_at INTEGER,
    smtp_code       INTEGER,
    smtp_response   TEXT,
    mx              TEXT,
    queued_at       INTEGER NOT NULL,
    due_at          INTEGER,
    PRIMARY KEY (message_id, address)
);

CREATE INDEX recipients_due ON recipients (due_at) WHERE due_at IS NOT NULL;
CREATE INDEX recipients_by_address ON recipients (account_id, lower(address), message_id DESC);

CREATE TABLE suppressions (
    account_id TEXT NOT NULL REFERENCES accounts (id),
    address    TEXT NOT NULL,
    reason     TEXT NOT NULL,
    message_id TEXT,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (account_id, address)
);

CREATE INDEX suppressions_by_account ON suppressions (account_id, created_at DESC, address DESC);

ALTER TABLE events ADD COLUMN message_id TEXT;
ALTER TABLE events ADD COLUMN recipient TEXT;
CREATE INDEX events_by_message ON events (message_id, id) WHERE message_id IS NOT NULL;
