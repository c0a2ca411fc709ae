-- +goose Up
-- A webhook endpoint's payload format (issue 30, docs/api.md "Webhooks and
-- events", "Moving from Resend"): 'mailroom', Mailroom's own body, or
-- 'resend', Resend's body and event names. Endpoints stored before it keep
-- Mailroom's.
ALTER TABLE webhook_endpoints ADD COLUMN format TEXT NOT NULL DEFAULT 'mailroom';
