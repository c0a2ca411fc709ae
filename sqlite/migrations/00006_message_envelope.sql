-- +goose Up
-- The email log shows a message's addresses and tags, which lived only in
-- content, beside the bodies and base64 attachments (up to ~10 MiB): every
-- listed row read all of it. envelope holds them alone, as JSON with
-- content's own keys (from, to, cc, bcc, replyTo, tags), so that the log
-- never reads content or raw.
--
-- SQLite adds a NOT NULL column only with a default; '' is not JSON, so a
-- write path that forgot the column fails on read instead of showing a
-- message with no addresses.
ALTER TABLE messages ADD COLUMN envelope TEXT NOT NULL DEFAULT '';

-- json_extract keeps objects and arrays as JSON for json_object, and
-- json_patch onto '{}' drops the keys content lacks (RFC 7396: null
-- removes), as the accept path's omitempty does.
UPDATE messages SET envelope = json_patch('{}', json_object(
    'from',    json_extract(content, '$.from'),
    'to',      json_extract(content, '$.to'),
    'cc',      json_extract(content, '$.cc'),
    'bcc',     json_extract(content, '$.bcc'),
    'replyTo', json_extract(content, '$.replyTo'),
    'tags',    json_extract(content, '$.tags')));
