-- +goose Up
-- TLS policy as the user sees it (issue 29, docs/api.md "How mail leaves",
-- "TLS policy").
--
-- A sending domain's tls: 'opportunistic' or 'enforced' (PATCH
-- /v1/domains/{domain}). '' is a domain stored before the setting, read as
-- opportunistic, the default.
ALTER TABLE domains ADD COLUMN tls TEXT NOT NULL DEFAULT '';

-- A send's requireTls (RFC 8689 REQUIRETLS): delivery reads it with the
-- claimed recipients, the log shows it.
ALTER TABLE messages ADD COLUMN require_tls BOOLEAN NOT NULL DEFAULT FALSE;

-- The TLS of each recipient's last attempt, as JSON {version, cipher,
-- verified, policy}; NULL when the session ran in clear or none was had
-- (and for every attempt made before this migration).
ALTER TABLE recipients ADD COLUMN tls TEXT;
