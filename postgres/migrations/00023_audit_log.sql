-- +goose Up
-- The audit log (issue 31, docs/api.md "Audit log"): one row per change an
-- account's keys, the operator's CLI or a background state change made,
-- written in the transaction of the change (sqlstore/audit.go). changes is
-- a JSON object {field: [before, after]}; actor_key_id is '' unless the
-- actor is an API key. No foreign key: an entry outlives what it names
-- (a deleted domain's entry stays until retention removes it).
CREATE TABLE audit_log (
    id           TEXT PRIMARY KEY,
    account_id   TEXT NOT NULL,
    action       TEXT NOT NULL,
    actor_type   TEXT NOT NULL,
    actor_key_id TEXT NOT NULL,
    target_type  TEXT NOT NULL,
    target_id    TEXT NOT NULL,
    request_id   TEXT NOT NULL,
    ip           TEXT NOT NULL,
    changes      TEXT NOT NULL,
    created_at   BIGINT NOT NULL
);

-- GET /v1/audit-log, newest first, and retention by age.
CREATE INDEX audit_log_by_account ON audit_log (account_id, created_at DESC, id DESC);
CREATE INDEX audit_log_created ON audit_log (created_at);
