-- +goose Up
-- A message's recipients and tags are written by the statement that writes
-- the message, and only for the messages it inserts (writeAcceptArrays);
-- retention deletes them with it (DeleteExpiredMessages). Their foreign
-- keys checked what the code already guarantees, at a price on the accept
-- path: each recipient and tag row ran a SELECT … FOR KEY SHARE of its
-- message, which writes a lock into the message row just inserted. Without
-- them PostgreSQL spent about half the CPU per accept (issue 17;
-- BENCHMARKS.md). SQLite keeps its foreign keys: its check is an index
-- probe in the process, with no lock to write.
ALTER TABLE recipients DROP CONSTRAINT recipients_message_id_fkey;
ALTER TABLE message_tags DROP CONSTRAINT message_tags_message_id_fkey;
