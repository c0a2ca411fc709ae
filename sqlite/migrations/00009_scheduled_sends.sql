-- +goose Up
-- GET /v1/scheduled lists an account's scheduled messages soonest first:
-- a partial index holds only those, so that its pages cost the same
-- whatever the size of the log. Claiming due ones needs no index of its
-- own: their recipients are due at scheduled_at in recipients_due.
CREATE INDEX messages_scheduled ON messages (account_id, scheduled_at, id) WHERE status = 'scheduled';
