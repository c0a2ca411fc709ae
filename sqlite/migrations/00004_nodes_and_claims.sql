-- +goose Up
-- The nodes serving this storage (docs/api.md "Limits" "Staying up"). Each node
-- beats its heartbeat every few seconds in the database's clock; a node
-- whose heartbeat is stale is dead, and any node may release its claims.
CREATE TABLE nodes (
    id           TEXT PRIMARY KEY,
    hostname     TEXT NOT NULL,
    started_at   INTEGER NOT NULL,
    heartbeat_at INTEGER NOT NULL
);

-- A claimed recipient says who holds it: the node, a token that fences the
-- outcome (only the holder of the current token may record one), and when
-- the claim ends in the database's clock. due_at keeps meaning "next due".
ALTER TABLE recipients ADD COLUMN claim_node TEXT;
ALTER TABLE recipients ADD COLUMN claim_token TEXT;
ALTER TABLE recipients ADD COLUMN lease_until INTEGER;
-- Whether the last attempt's SMTP session ran in clear text (the receiver
-- offered no working STARTTLS), for the log (RFC 7435 opportunistic TLS).
ALTER TABLE recipients ADD COLUMN unencrypted BOOLEAN NOT NULL DEFAULT FALSE;
CREATE INDEX recipients_by_claim_node ON recipients (claim_node) WHERE claim_node IS NOT NULL;
-- The queue holds only what a claim may take: due and unclaimed. Rows in
-- flight leave it, so claims never read past them.
DROP INDEX recipients_due;
CREATE INDEX recipients_due ON recipients (due_at) WHERE due_at IS NOT NULL AND claim_token IS NULL;
