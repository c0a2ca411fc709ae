-- +goose Up
-- Integer account keys (issue 17): the tables that grow with the mail held
-- an account's id as its ULID's 16 bytes (00015), and the account leads
-- nearly every index entry of a message (about fourteen) besides its six
-- rows. Accounts are few: each gets a small integer key, which SQLite
-- stores in one byte up to 127 and two up to 32,767, and the four tables
-- hold it instead.
--
-- accounts.key is a column of its own with a unique index, not the
-- table's rowid, which VACUUM may renumber. Existing accounts get 1, 2, …
-- in the order of their ids; a new account gets one more than any key
-- stored (sqlite.Engine's NewAccountKey), so that a key is never handed
-- to a second account, even were an account deleted by hand with its
-- mail left behind. It is never changed: the store keeps it in memory
-- (sqlstore/accountkeys.go).
--
-- The four tables are rebuilt as 00015 made them, account_id now an
-- INTEGER, and their rows copied in key order, which packs them; every
-- index is made again with its columns in the same order: 7 s for 100,000
-- queued messages on the 2-core test machine, 20 s for delivered mail,
-- which keeps its signed bytes. The file keeps its size (00015). A row whose
-- account is not in accounts (there can be none: messages and events
-- referenced accounts until 00015, and no account is ever deleted) fails
-- the migration on account_id's NOT NULL rather than be stored without one.
ALTER TABLE accounts ADD COLUMN key INTEGER;
UPDATE accounts SET key = o.n FROM (SELECT id, row_number() OVER (ORDER BY id) AS n FROM accounts) AS o
WHERE accounts.id = o.id;
CREATE UNIQUE INDEX accounts_key ON accounts (key);

-- The 16 bytes 00015 stored for each account (mailroom_id_key, a function
-- of this program), and its key. Dropped at the end.
CREATE TABLE migration_account_keys (
    stored BLOB PRIMARY KEY,
    key    INTEGER NOT NULL
) WITHOUT ROWID;
INSERT INTO migration_account_keys (stored, key) SELECT mailroom_id_key(id), key FROM accounts;

CREATE TABLE messages_new (
    id              BLOB PRIMARY KEY,
    account_id      INTEGER NOT NULL,
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
SELECT id, (SELECT key FROM migration_account_keys WHERE stored = messages.account_id), status, from_address, subject,
    category, domain, idempotency_key, request_digest, created_at, scheduled_at, template_id, template_name, envelope, content, raw
FROM messages ORDER BY id;

CREATE TABLE recipients_new (
    -- messages_new, which the rename below makes messages (as in 00015).
    message_id      BLOB NOT NULL REFERENCES messages_new (id) ON DELETE CASCADE,
    address         TEXT NOT NULL,
    account_id      INTEGER NOT NULL,
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
SELECT message_id, address, (SELECT key FROM migration_account_keys WHERE stored = recipients.account_id), kind, position,
    status, attempts, last_attempt_at, next_attempt_at, smtp_code, smtp_response, mx, queued_at, due_at, claim_node,
    claim_token, lease_until, unencrypted
FROM recipients ORDER BY message_id, address;

CREATE TABLE message_tags_new (
    account_id INTEGER NOT NULL,
    key        TEXT NOT NULL,
    value      TEXT NOT NULL,
    message_id BLOB NOT NULL,
    PRIMARY KEY (account_id, key, value, message_id)
) WITHOUT ROWID;
INSERT INTO message_tags_new (account_id, key, value, message_id)
SELECT (SELECT k.key FROM migration_account_keys k WHERE k.stored = t.account_id), t.key, t.value, t.message_id
FROM message_tags t ORDER BY 1, 2, 3, 4;

CREATE TABLE events_new (
    account_id INTEGER NOT NULL,
    id         BLOB NOT NULL,
    type       TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    message_id BLOB,
    recipient  TEXT,
    data       TEXT NOT NULL,
    PRIMARY KEY (account_id, id)
) WITHOUT ROWID;
INSERT INTO events_new (account_id, id, type, created_at, message_id, recipient, data)
SELECT (SELECT key FROM migration_account_keys WHERE stored = events.account_id), id, type, created_at, message_id,
    recipient, data
FROM events ORDER BY 1, 2;

DROP TABLE migration_account_keys;
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
-- email.queued, one a message and the most common type, is left out of
-- events_by_type: its list walks the primary key, where it is dense, and
-- every message saves an index entry (sqlstore.EventsQuery).
CREATE INDEX events_by_type ON events (account_id, type, id) WHERE type <> 'email.queued';
CREATE INDEX events_by_message ON events (message_id, id) WHERE message_id IS NOT NULL;
CREATE INDEX events_unattached ON events (created_at) WHERE message_id IS NULL;
