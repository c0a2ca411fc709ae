-- +goose Up
-- Times are microseconds since the Unix epoch (see package sqlstore).
CREATE TABLE accounts (
    id         TEXT PRIMARY KEY,
    name       TEXT NOT NULL UNIQUE,
    created_at BIGINT NOT NULL
);

CREATE TABLE api_keys (
    key_id        TEXT PRIMARY KEY,
    account_id    TEXT NOT NULL REFERENCES accounts (id),
    name          TEXT NOT NULL,
    scopes        TEXT NOT NULL,
    -- SHA-256 of the secret; the secret itself is never stored.
    secret_digest BYTEA NOT NULL,
    created_at    BIGINT NOT NULL,
    last_used_at  BIGINT,
    revoked_at    BIGINT
);

CREATE INDEX api_keys_by_account ON api_keys (account_id, created_at DESC, key_id DESC);
