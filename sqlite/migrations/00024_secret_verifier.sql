-- +goose Up
-- The store's verifier of the secret key (issue 31, docs/api.md "One secret
-- key per store"): a MAC of a fixed label under a key derived from the
-- secret key, never the key itself. One row at most: the first node to start
-- writes it, every later start compares its own key's verifier with it and
-- refuses to start on a mismatch, instead of taking mail it cannot sign.
CREATE TABLE secret_verifier (
    id          INTEGER PRIMARY KEY CHECK (id = 1),
    verifier    BLOB NOT NULL,
    created_at  BIGINT NOT NULL
);
