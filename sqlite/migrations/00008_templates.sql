-- +goose Up
-- A template's identity and current version; its content lives in
-- template_versions, one row per version, so that old versions stay
-- readable and messages can name the one they were rendered from.
CREATE TABLE templates (
    id         TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts (id),
    name       TEXT NOT NULL,
    version    INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    UNIQUE (account_id, name)
);

CREATE INDEX templates_by_account ON templates (account_id, created_at DESC, id DESC);

CREATE TABLE template_versions (
    template_id  TEXT NOT NULL REFERENCES templates (id) ON DELETE CASCADE,
    version      INTEGER NOT NULL,
    description  TEXT NOT NULL,
    subject      TEXT NOT NULL,
    html         TEXT NOT NULL,
    text         TEXT NOT NULL,
    from_address TEXT NOT NULL,
    -- The layout version this version is wrapped in, if any.
    layout_id      TEXT,
    layout_version INTEGER,
    -- The names the sources use, as a JSON array.
    variables    TEXT NOT NULL,
    created_at   INTEGER NOT NULL,
    PRIMARY KEY (template_id, version)
);

-- Deleting a template asks whether a template's current version uses it
-- as its layout.
CREATE INDEX template_versions_by_layout ON template_versions (layout_id) WHERE layout_id IS NOT NULL;

-- The log's ?template= filter, by id or by the name the template had when
-- the message was sent (the version is in the envelope). No foreign key:
-- deleting a template leaves its messages as they were.
ALTER TABLE messages ADD COLUMN template_id TEXT;
ALTER TABLE messages ADD COLUMN template_name TEXT;
CREATE INDEX messages_by_template ON messages (account_id, template_id, id DESC) WHERE template_id IS NOT NULL;
CREATE INDEX messages_by_template_name ON messages (account_id, template_name, id DESC) WHERE template_name IS NOT NULL;
