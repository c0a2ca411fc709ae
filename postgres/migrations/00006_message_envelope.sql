-- +goose Up
-- The email log shows a message's addresses and tags, which lived only in
-- content, beside the bodies and base64 attachments (up to ~10 MiB): every
-- listed row read all of it. envelope holds them alone, as JSON with
-- content's own keys (from, to, cc, bcc, replyTo, tags), so that the log
-- never reads content or raw.
ALTER TABLE messages ADD COLUMN envelope TEXT;

-- json, not jsonb: content is Go's encoding, which jsonb may refuse
-- (\u0000 in a body). json_strip_nulls drops the keys content lacks, as the
-- accept path's omitempty does.
UPDATE messages SET envelope = (
    SELECT json_strip_nulls(json_build_object(
        'from',    c -> 'from',
        'to',      c -> 'to',
        'cc',      c -> 'cc',
        'bcc',     c -> 'bcc',
        'replyTo', c -> 'replyTo',
        'tags',    c -> 'tags'))::text
    FROM (SELECT messages.content::json AS c) AS parsed);

ALTER TABLE messages ALTER COLUMN envelope SET NOT NULL;
