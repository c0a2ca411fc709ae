-- +goose Up
-- An account's request rate (requests per second) and burst, set by the
-- operator with `mailroom accounts update`. NULL means never set: the
-- defaults apply, and a changed default reaches the account.
ALTER TABLE accounts ADD COLUMN request_rate REAL;
ALTER TABLE accounts ADD COLUMN request_burst INTEGER;
