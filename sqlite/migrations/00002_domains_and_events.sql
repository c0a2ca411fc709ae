-- +goose Up
CREATE TABLE domains (
    id                 TEXT PRIMARY KEY,
    account_id         TEXT NOT NULL REFERENCES accounts (id),
    name               TEXT NOT NULL,
    status             TEXT NOT NULL,
    dkim_selector      TEXT NOT NULL,
    dkim_public_key    TEXT NOT NULL,
    -- PKCS#8, sealed with AES-256-GCM under the secret key (package sealer).
    dkim_private_key   BLOB NOT NULL,
    return_path_domain TEXT NOT NULL,
    -- The records to publish and what the last check found, as JSON.
    records            TEXT NOT NULL,
    created_at         INTEGER NOT NULL,
    verified_at        INTEGER,
    last_checked_at    INTEGER,
    next_check_at      INTEGER,
    failing_since      INTEGER,
    -- Set while a node checks the domain; see ClaimDueDomains.
    lease_until        INTEGER,
    UNIQUE (account_id, name)
);

CREATE INDEX domains_by_account ON domains (account_id, created_at DESC, id DESC);
CREATE INDEX domains_due ON domains (next_check_at) WHERE next_check_at IS NOT NULL;

-- Events are the email log's timeline and the webhook outbox at once.
CREATE TABLE events (
    id         TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts (id),
    type       TEXT NOT NULL,
    data       TEXT NOT NULL,
    created_at INTEGER NOT NULL
);

CREATE INDEX events_by_account ON events (account_id, id DESC);
