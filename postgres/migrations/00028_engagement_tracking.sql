-- +goose Up
-- Engagement tracking (issue 33, docs/api.md "Engagement tracking"): off
-- unless a domain or a send asks for it.
--
-- A domain's openTracking and clickTracking, which a send follows unless
-- it says otherwise.
ALTER TABLE domains ADD COLUMN open_tracking BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE domains ADD COLUMN click_tracking BOOLEAN NOT NULL DEFAULT FALSE;

-- What a message's copies are tracked for, resolved when it was accepted
-- (mailroom.ResolveTracking): delivery composes each recipient's copy
-- when either is set. Messages stored before are tracked for nothing.
ALTER TABLE messages ADD COLUMN track_opens BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE messages ADD COLUMN track_clicks BOOLEAN NOT NULL DEFAULT FALSE;

-- Whether some recipient of the message opened it, or clicked one of its
-- links (1) or not (0): the log's ?event=opened and ?event=clicked, each
-- served by a partial index that holds only the messages that were, in
-- the order every log index has (account, id). They are set with the
-- recipient's count (RecordEngagement), so that the log never counts a
-- message's recipients to filter it.
ALTER TABLE messages ADD COLUMN opened INTEGER NOT NULL DEFAULT 0;
ALTER TABLE messages ADD COLUMN clicked INTEGER NOT NULL DEFAULT 0;
CREATE INDEX messages_opened ON messages (account_id, id) WHERE opened = 1;
CREATE INDEX messages_clicked ON messages (account_id, id) WHERE clicked = 1;

-- The opens and clicks that came back from each recipient's copy,
-- automated or not, and reader_opens, the opens not marked machine: a
-- reader's first open after automated ones writes email.opened too
-- (mailroom.EngagementCounts).
ALTER TABLE recipients ADD COLUMN opens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE recipients ADD COLUMN clicks INTEGER NOT NULL DEFAULT 0;
ALTER TABLE recipients ADD COLUMN reader_opens INTEGER NOT NULL DEFAULT 0;

-- A click-tracked message's links: link_index is the link's place among
-- the HTML part's rewritten links (the index its click tokens hold), url
-- the address it pointed to, clicks the clicks on it from every
-- recipient. Written once, when the message is first composed
-- (SaveTrackedLinks); removed with its message by retention
-- (DeleteExpiredMessages), by name, as its other children: no foreign key.
CREATE TABLE message_links (
    message_id BYTEA NOT NULL,
    link_index INTEGER NOT NULL,
    url        TEXT NOT NULL,
    clicks     INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (message_id, link_index)
);
