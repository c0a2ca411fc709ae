-- +goose Up
-- Leaner rows (issue 17): a stored message cost 3.2 KB, most of it ids and
-- index pages. The four tables that grow with the mail are rebuilt:
--   * account, message and event ids are stored as their ULID's 16 bytes
--     (mailroom_id_key, a function of this program), not 30-odd
--     characters: each message's ids are repeated in about twenty index
--     entries. Bytes sort as the text does, so ranges and orders stand.
--   * Every index orders its ids ascending. Ids grow with time, so new
--     entries go at the end of their range, and SQLite fills a page before
--     it starts the next; an index in descending order took every new entry
--     at the start of its range, splitting pages half full. Queries walk
--     the indexes backwards for the newest first, at the same cost.
--   * message_tags is its lookup index alone (WITHOUT ROWID): the table and
--     its primary key on (message_id, key) held the same tags twice more.
--     A message's tags are read from its envelope; retention deletes its
--     tag rows by the envelope's tags (DeleteExpiredMessages), so no
--     foreign key to messages, which would need an index by message.
--   * events is keyed by account and id (WITHOUT ROWID): listing an
--     account's events walks the table itself, not an index beside it.
--   * a message's envelope, content and raw bytes lie last in its row, so
--     that the log reads its columns without stepping through content.
--   * request_digest is kept only with an idempotency key: nothing else
--     reads it.
--   * content no longer repeats the envelope's addresses and tags
--     (delivery reads both columns).
-- Messages no longer reference accounts and events no longer reference
-- accounts through a foreign key: the key is not the account's text id.
-- Rows are copied in id order, which packs the new tables.
CREATE TABLE messages_new (
    id              BLOB PRIMARY KEY,
    account_id      BLOB NOT NULL,
    status          TEXT NOT NULL,
    from_address    TEXT NOT NULL,
    subject         TEXT NOT NULL,
    category        TEXT NOT NULL,
    domain          TEXT NOT NULL,
    idempotency_key TEXT,
    request_digest  BLOB,
    created_at      INTEGER NOT NULL,
    scheduled_at    INTEGER,
    template_id     TEXT,
    template_name   TEXT,
    envelope        TEXT NOT NULL,
    content         TEXT NOT NULL,
    raw             BLOB
);
INSERT INTO messages_new (id, account_id, status, from_address, subject, category, domain, idempotency_key,
    request_digest, created_at, scheduled_at, template_id, template_name, envelope, content, raw)
SELECT mailroom_id_key(id), mailroom_id_key(account_id), status, from_address, subject, category, domain, idempotency_key,
    CASE WHEN idempotency_key IS NOT NULL THEN request_digest END, created_at, scheduled_at, template_id, template_name,
    envelope, json_remove(content, '$.from', '$.to', '$.cc', '$.bcc', '$.replyTo', '$.tags', '$.template'), raw
FROM messages ORDER BY id;

CREATE TABLE recipients_new (
    -- messages_new: the rename below makes it messages. (messages is
    -- still the old table, whose text ids no key would find.)
    message_id      BLOB NOT NULL REFERENCES messages_new (id) ON DELETE CASCADE,
    address         TEXT NOT NULL,
    account_id      BLOB NOT NULL,
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
    claim_node      TEXT,
    claim_token     TEXT,
    lease_until     INTEGER,
    unencrypted     BOOLEAN NOT NULL DEFAULT FALSE,
    PRIMARY KEY (message_id, address)
);
INSERT INTO recipients_new (message_id, address, account_id, kind, position, status, attempts, last_attempt_at,
    next_attempt_at, smtp_code, smtp_response, mx, queued_at, due_at, claim_node, claim_token, lease_until, unencrypted)
SELECT mailroom_id_key(message_id), address, mailroom_id_key(account_id), kind, position, status, attempts, last_attempt_at,
    next_attempt_at, smtp_code, smtp_response, mx, queued_at, due_at, claim_node, claim_token, lease_until, unencrypted
FROM recipients ORDER BY message_id, address;

CREATE TABLE message_tags_new (
    account_id BLOB NOT NULL,
    key        TEXT NOT NULL,
    value      TEXT NOT NULL,
    message_id BLOB NOT NULL,
    PRIMARY KEY (account_id, key, value, message_id)
) WITHOUT ROWID;
INSERT INTO message_tags_new (account_id, key, value, message_id)
SELECT mailroom_id_key(account_id), key, value, mailroom_id_key(message_id) FROM message_tags;

CREATE TABLE events_new (
    account_id BLOB NOT NULL,
    id         BLOB NOT NULL,
    type       TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    message_id BLOB,
    recipient  TEXT,
    data       TEXT NOT NULL,
    PRIMARY KEY (account_id, id)
) WITHOUT ROWID;
INSERT INTO events_new (account_id, id, type, created_at, message_id, recipient, data)
SELECT mailroom_id_key(account_id), mailroom_id_key(id), type, created_at, mailroom_id_key(message_id), recipient, data
FROM events ORDER BY account_id, id;

-- The children first: dropping messages first would cascade to them.
DROP TABLE message_tags;
DROP TABLE recipients;
DROP TABLE events;
DROP TABLE messages;
ALTER TABLE messages_new RENAME TO messages;
ALTER TABLE recipients_new RENAME TO recipients;
ALTER TABLE message_tags_new RENAME TO message_tags;
ALTER TABLE events_new RENAME TO events;

CREATE UNIQUE INDEX messages_idempotency ON messages (account_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
CREATE INDEX messages_by_account ON messages (account_id, id);
CREATE INDEX messages_by_status ON messages (account_id, status, id);
CREATE INDEX messages_by_from_key ON messages (account_id, lower(from_address), id);
CREATE INDEX messages_by_category ON messages (account_id, category, id);
CREATE INDEX messages_by_template ON messages (account_id, template_id, id) WHERE template_id IS NOT NULL;
CREATE INDEX messages_by_template_name ON messages (account_id, template_name, id) WHERE template_name IS NOT NULL;
CREATE INDEX messages_scheduled ON messages (account_id, scheduled_at, id) WHERE status = 'scheduled';
CREATE INDEX recipients_by_address ON recipients (account_id, lower(address), message_id);
CREATE INDEX recipients_due ON recipients (due_at) WHERE due_at IS NOT NULL AND claim_token IS NULL;
CREATE INDEX recipients_by_claim_node ON recipients (claim_node) WHERE claim_node IS NOT NULL;
CREATE INDEX events_by_type ON events (account_id, type, id);
CREATE INDEX events_by_message ON events (message_id, id) WHERE message_id IS NOT NULL;
CREATE INDEX events_unattached ON events (created_at) WHERE message_id IS NULL;
