-- +goose Up
-- An API key restricted to one sending domain (issue 30: Resend's
-- domain_id on POST /api-keys, `domain` on POST /v1/api-keys): the
-- normalised name of the only domain it may send from, '' for every
-- domain of its account (mailroom.APIKey.MaySendFrom). A name, not the
-- domain's id, so that the send path compares it with the From domain
-- without a read; keys stored before the setting send from any domain.
ALTER TABLE api_keys ADD COLUMN domain TEXT NOT NULL DEFAULT '';
