-- +goose Up
-- A sending domain's health checks (issue 31, docs/api.md "Domain health"):
-- the JSON array [{name, status, detail}] of the last verification or
-- re-check, advice beside the records. Domains stored before have none
-- until their next check.
ALTER TABLE domains ADD COLUMN checks TEXT NOT NULL DEFAULT '[]';
