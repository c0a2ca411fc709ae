-- +goose Up
-- The log's ?from= matches an address whatever its case, as ?to= does
-- (addresses are ASCII, so lower() is the AddressKey): the filter reads
-- lower(from_address), which only an index on that expression serves.
CREATE INDEX messages_by_from_key ON messages (account_id, lower(from_address), id DESC);
DROP INDEX messages_by_from;
