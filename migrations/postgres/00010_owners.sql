-- Who created what (PostgreSQL twin of ../00010_owners.sql; docs/deploy.md, "Exposure"): the
-- user a trusted proxy named (-auth-proxy-header) when the row was made, '' when the server
-- has no identities.
-- Rows stored before this migration keep NULL: nobody is known to own them, so with identities
-- only an admin may cancel them.
-- A run is shared by every submission of the same scenario (its id is content-addressed): its
-- owner is whoever asked for it first; a sweep's or plan's points made in the background take the
-- sweep's or plan's owner when they are recorded (store/owners.go).

-- +goose Up
ALTER TABLE runs ADD COLUMN owner TEXT;
ALTER TABLE sweeps ADD COLUMN owner TEXT;
ALTER TABLE plans ADD COLUMN owner TEXT;
ALTER TABLE traces ADD COLUMN owner TEXT;
ALTER TABLE calibrations ADD COLUMN owner TEXT;

-- The per-user quota on queued runs counts a user's unfinished runs.
CREATE INDEX runs_owner_unfinished ON runs (owner) WHERE status IN ('queued', 'running');

-- +goose Down
DROP INDEX runs_owner_unfinished;
ALTER TABLE calibrations DROP COLUMN owner;
ALTER TABLE traces DROP COLUMN owner;
ALTER TABLE plans DROP COLUMN owner;
ALTER TABLE sweeps DROP COLUMN owner;
ALTER TABLE runs DROP COLUMN owner;
