-- +goose Up
-- Retention walked messages_by_created (created_at) for the oldest
-- messages; it now walks the primary key, since a message's id is a ULID of
-- the millisecond it was created (DeleteExpiredMessages). One index entry
-- fewer for every accept to write and every message to keep (issue 17).
DROP INDEX messages_by_created;
