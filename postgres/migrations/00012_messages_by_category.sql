-- +goose Up
-- The log's ?category= had no index: it was a filter on the account's
-- whole log, so a rare category (a few marketing messages among a million
-- transactional ones) read every message to fill a page. With this index
-- it can drive the query like the other filters (issue 17).
CREATE INDEX messages_by_category ON messages (account_id, category, id DESC);
