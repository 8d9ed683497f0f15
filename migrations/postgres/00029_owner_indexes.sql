-- Indexes for what the per-user quotas read on every run creation, sweep and upload
-- (PostgreSQL twin of ../00029_owner_indexes.sql): without them each check scanned the traces,
-- calibrations and sweeps tables whole.

-- +goose Up
CREATE INDEX traces_owner ON traces (owner, size_bytes);
CREATE INDEX calibrations_owner ON calibrations (owner, sha256, size_bytes);
CREATE INDEX sweeps_owner_active ON sweeps (owner) WHERE cancelled = 0;

-- +goose Down
DROP INDEX sweeps_owner_active;
DROP INDEX calibrations_owner;
DROP INDEX traces_owner;
