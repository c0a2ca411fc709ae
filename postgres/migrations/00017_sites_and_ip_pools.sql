-- +goose Up
-- How mail leaves (issue 28, docs/api.md "How mail leaves").
--
-- Each recipient keeps the destination site of its last attempt and why it
-- was last deferred, for the log (site, lastDeferralReason) and for the
-- delivery runtime, which retries a greylisted recipient once after
-- --greylist-retry and on the same MX host. '' is none: rows stored before
-- keep their meaning (no site known, never deferred with a reason).
ALTER TABLE recipients ADD COLUMN site TEXT NOT NULL DEFAULT '';
ALTER TABLE recipients ADD COLUMN last_deferral_reason TEXT NOT NULL DEFAULT '';

-- The pool of source addresses a sending domain's mail leaves from
-- (`mailroom domains update --ip-pool`); '' is the default pool.
ALTER TABLE domains ADD COLUMN ip_pool TEXT NOT NULL DEFAULT '';

-- A site suspended after repeated throttling, per source address ('' when
-- the system picks the address): every node reads this table, so all honour
-- a suspension within their reading interval. until is in microseconds
-- since the Unix epoch, as every time is; level counts the suspensions in a
-- row, whose length doubles with each. A row is replaced by the next
-- suspension of its site and source, so the table holds one row per site
-- and address ever suspended.
CREATE TABLE site_suspensions (
    site   TEXT NOT NULL,
    source TEXT NOT NULL,
    until  BIGINT NOT NULL,
    level  INTEGER NOT NULL,
    PRIMARY KEY (site, source)
);
-- SiteSuspensions lists those that end after a time.
CREATE INDEX site_suspensions_by_until ON site_suspensions (until);
