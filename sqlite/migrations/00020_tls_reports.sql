-- +goose Up
-- TLS reporting (issue 29, RFC 8460; docs/design.md "TLS reports").
--
-- Each node counts the TLS sessions its deliveries made in memory and adds
-- its counts here every few seconds, so that a window's report sums every
-- node's sessions. A row counts the sessions of one report window, one
-- recipient domain, one policy and one failure detail (detail_key '' and
-- result_type '' are the successes). policy_key and detail_key are digests
-- of the policy (type, lines, mx patterns) and of the detail (result type,
-- addresses, host, reason): a policy's text may be long, and a key of
-- the text itself would pass PostgreSQL's limit on an index row. Times are
-- microseconds since the Unix epoch, as every time is.
CREATE TABLE tls_report_counts (
    window_start    INTEGER NOT NULL,
    domain          TEXT NOT NULL,
    policy_key      TEXT NOT NULL,
    detail_key      TEXT NOT NULL,
    policy_type     TEXT NOT NULL,
    policy_string   TEXT NOT NULL,
    mx_host         TEXT NOT NULL,
    result_type     TEXT NOT NULL,
    sending_ip      TEXT NOT NULL,
    receiving_mx    TEXT NOT NULL,
    receiving_ip    TEXT NOT NULL,
    failure_reason TEXT NOT NULL,
    count           INTEGER NOT NULL,
    PRIMARY KEY (window_start, domain, policy_key, detail_key)
) WITHOUT ROWID;

-- One row per window and recipient domain with counts: the report to
-- send once the window has ended. One node at a time holds its lease
-- (lease_until); finished_at is set when the report went (or the domain
-- wants none), and counts that arrive later are dropped.
CREATE TABLE tls_report_windows (
    window_start INTEGER NOT NULL,
    domain       TEXT NOT NULL,
    window_end   INTEGER NOT NULL,
    lease_until  INTEGER,
    finished_at  INTEGER,
    PRIMARY KEY (window_start, domain)
) WITHOUT ROWID;
-- ClaimTLSReports finds the unfinished windows that have ended.
CREATE INDEX tls_report_windows_due ON tls_report_windows (window_end) WHERE finished_at IS NULL;
-- FinishTLSReport forgets finished windows after a week.
CREATE INDEX tls_report_windows_finished ON tls_report_windows (finished_at) WHERE finished_at IS NOT NULL;
