-- +goose Up
-- Receiving mail (issue 32, docs/api.md "Receiving mail").
--
-- A domain receives mail when its receiving flag is set (PATCH
-- /v1/domains/{domain} {receiving: true}); the inbound MX looks a
-- recipient's domain up by name alone, across accounts, at RCPT
-- (ReceivingDomains), which domains_receiving serves.
ALTER TABLE domains ADD COLUMN receiving INTEGER NOT NULL DEFAULT 0;
CREATE INDEX domains_receiving ON domains (name) WHERE receiving = 1;

-- One row per SMTP transaction taken for one account. recipients, to_addrs,
-- cc_addrs, authentication, headers and attachments are JSON; recipient_keys
-- is the envelope recipients in lower case, each between newlines, and
-- from_key the From address in lower case: what the list's filters compare
-- (to, from), made in Go so that both engines compare alike. raw is the
-- stored message (the fields the service added, then the bytes received);
-- attachments holds the metadata of the parts in received_attachments, so
-- that a list reads one row per message. No foreign key to accounts, as
-- the audit log's: retention removes the rows by age.
CREATE TABLE received_messages (
    id             TEXT PRIMARY KEY,
    account_id     TEXT NOT NULL,
    received_at    INTEGER NOT NULL,
    mail_from      TEXT NOT NULL,
    recipients     TEXT NOT NULL,
    recipient_keys TEXT NOT NULL,
    from_header    TEXT NOT NULL,
    from_key       TEXT NOT NULL,
    to_addrs       TEXT NOT NULL,
    cc_addrs       TEXT NOT NULL,
    subject        TEXT NOT NULL,
    message_id     TEXT NOT NULL,
    remote_ip      TEXT NOT NULL,
    helo           TEXT NOT NULL,
    authentication TEXT NOT NULL,
    headers        TEXT NOT NULL,
    text_body      TEXT NOT NULL,
    html_body      TEXT NOT NULL,
    attachments    TEXT NOT NULL,
    parse_problem  TEXT NOT NULL,
    size           INTEGER NOT NULL,
    raw            BLOB NOT NULL
);
-- GET /v1/received, newest first; and retention by age.
CREATE INDEX received_by_account ON received_messages (account_id, received_at DESC, id DESC);
CREATE INDEX received_by_time ON received_messages (received_at);

-- The decoded bytes of each attachment, read one at a time.
CREATE TABLE received_attachments (
    message_id   TEXT NOT NULL,
    id           TEXT NOT NULL,
    content      BLOB NOT NULL,
    PRIMARY KEY (message_id, id)
);
