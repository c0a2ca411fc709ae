-- +goose Up
-- MTA-STS policies (issue 29, docs/api.md "TLS policy", RFC 8461), cached
-- for every node: a policy one node fetched is in force on all, and stays
-- in force across restarts until it expires (RFC 8461 §5.1).
--
-- One row per recipient domain (A-labels, lower case). id is the id of the
-- TXT record _mta-sts.<domain> the policy was fetched under (§3.1); mode is
-- enforce or testing ("none" is never stored: it removes the row); mx holds
-- the policy's mx patterns one per line, in the policy's order; max_age is
-- in seconds (§3.2, at most 31557600); text is the policy as served, for
-- TLS-RPT's policy-string (RFC 8460 §4.4). fetched_at (the policy expires
-- max_age later) and checked_at (when the TXT record last named this id)
-- are in microseconds since the Unix epoch, as every time is.
CREATE TABLE mta_sts_policies (
    domain     TEXT NOT NULL PRIMARY KEY,
    id         TEXT NOT NULL,
    mode       TEXT NOT NULL,
    mx         TEXT NOT NULL,
    max_age    INTEGER NOT NULL,
    text       TEXT NOT NULL,
    fetched_at BIGINT NOT NULL,
    checked_at BIGINT NOT NULL
);
