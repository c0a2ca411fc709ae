-- +goose Up
-- The return-path MX takes mail only for the bounce subdomains of the
-- domains the service sends for: each RCPT looks one up.
CREATE INDEX domains_by_return_path ON domains (return_path_domain);
