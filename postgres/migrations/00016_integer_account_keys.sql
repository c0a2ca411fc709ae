-- +goose Up
-- Integer account keys (issue 17; sqlite's 00016 says why): each account
-- gets a 4-byte integer key, and messages, recipients, message_tags and
-- events hold it in account_id instead of the account's 16 bytes (00015).
-- The account leads nearly every index entry of a message; an integer
-- instead saves about 13 bytes of each entry and row before alignment,
-- some 250 bytes a message.
--
-- accounts.key is an identity column: the database assigns it, so nodes
-- sharing the database never hand out the same key, and a sequence never
-- goes back, so no key is given twice. Existing accounts get 1, 2, … in
-- the order of their ids. It is never changed: the store keeps it in
-- memory (sqlstore/accountkeys.go).
--
-- Each table is rewritten once (ALTER COLUMN … TYPE), which packs it and
-- rebuilds its indexes with the same columns in the same order: 8 to 22 s
-- for 100,000 queued messages on the 2-core test machine, 14 s for
-- delivered mail, which keeps its signed bytes.
ALTER TABLE accounts ADD COLUMN key integer;
UPDATE accounts SET key = o.n FROM (SELECT id, row_number() OVER (ORDER BY id) AS n FROM accounts) AS o
WHERE accounts.id = o.id;
ALTER TABLE accounts ALTER COLUMN key SET NOT NULL, ALTER COLUMN key ADD GENERATED ALWAYS AS IDENTITY;
SELECT setval(pg_get_serial_sequence('accounts', 'key'), coalesce(max(key), 0) + 1, false) FROM accounts;
CREATE UNIQUE INDEX accounts_key ON accounts (key);

-- mailroom_id_key is 00015's: an account id's 16 bytes as 00015 stored
-- them. migration_account_keys maps those bytes to the key, and
-- mailroom_account_key reads it (ALTER … USING takes no subquery); a
-- stored account that is not in accounts (there can be none: messages
-- and events referenced accounts until 00015, and no account is ever
-- deleted) fails the migration, naming its bytes. All three are dropped
-- at the end.
-- +goose StatementBegin
CREATE FUNCTION mailroom_id_key(id text) RETURNS bytea LANGUAGE plpgsql IMMUTABLE STRICT AS $$
DECLARE
    digits CONSTANT text := '0123456789abcdefghjkmnpqrstvwxyz';
    ulid CONSTANT text := split_part(id, '_', 2);
    hi bigint := 0; -- characters 1 to 13: 3 + 12 × 5 = 63 bits
    mid bigint;     -- character 14: its top bit ends the first 64, its low 4 start the last 64
    lo bigint := 0; -- characters 15 to 26: 60 bits
BEGIN
    IF id !~ '^[a-z]+_[0-7][0-9a-hjkmnp-tv-z]{25}$' THEN
        RAISE EXCEPTION 'migration 00016: % is not an id with a ULID', id;
    END IF;
    FOR i IN 1..13 LOOP
        hi := (hi << 5) | (strpos(digits, substr(ulid, i, 1)) - 1);
    END LOOP;
    mid := strpos(digits, substr(ulid, 14, 1)) - 1;
    FOR i IN 15..26 LOOP
        lo := (lo << 5) | (strpos(digits, substr(ulid, i, 1)) - 1);
    END LOOP;
    RETURN decode(lpad(to_hex((hi << 1) | (mid >> 4)), 16, '0') || lpad(to_hex(((mid & 15) << 60) | lo), 16, '0'), 'hex');
END
$$;
-- +goose StatementEnd
CREATE TABLE migration_account_keys (stored bytea PRIMARY KEY, key integer NOT NULL);
INSERT INTO migration_account_keys (stored, key) SELECT mailroom_id_key(id), key FROM accounts;
-- +goose StatementBegin
CREATE FUNCTION mailroom_account_key(stored bytea) RETURNS integer LANGUAGE plpgsql STABLE STRICT AS $$
DECLARE
    k integer;
BEGIN
    SELECT m.key INTO k FROM migration_account_keys m WHERE m.stored = mailroom_account_key.stored;
    IF k IS NULL THEN
        RAISE EXCEPTION 'migration 00016: no account has the stored id %', encode(stored, 'hex');
    END IF;
    RETURN k;
END
$$;
-- +goose StatementEnd

ALTER TABLE messages ALTER COLUMN account_id TYPE integer USING mailroom_account_key(account_id);
ALTER TABLE recipients ALTER COLUMN account_id TYPE integer USING mailroom_account_key(account_id);
ALTER TABLE message_tags ALTER COLUMN account_id TYPE integer USING mailroom_account_key(account_id);
ALTER TABLE events ALTER COLUMN account_id TYPE integer USING mailroom_account_key(account_id);
-- email.queued, one a message and the most common type, is left out of
-- events_by_type: its list walks the primary key, where it is dense, and
-- every message saves an index entry (sqlstore.EventsQuery).
DROP INDEX events_by_type;
CREATE INDEX events_by_type ON events (account_id, type, id) WHERE type <> 'email.queued';
DROP FUNCTION mailroom_account_key(bytea);
DROP TABLE migration_account_keys;
DROP FUNCTION mailroom_id_key(text);
ANALYZE accounts, messages, recipients, message_tags, events;
