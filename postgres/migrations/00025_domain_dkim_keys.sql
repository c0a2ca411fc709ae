-- +goose Up
-- A domain's DKIM keys beside its active RSA key (issue 31, docs/api.md
-- "Domains", "Rotating the DKIM key" and "Ed25519"): the next RSA key of a
-- rotation, the keys rotated away from until their records may go, and the
-- Ed25519 key, as a JSON array; private keys sealed like dkim_private_key.
-- Domains stored before it have none.
ALTER TABLE domains ADD COLUMN dkim_keys TEXT NOT NULL DEFAULT '[]';
