-- Indexes for what the per-user quotas read on every run creation, sweep and upload
-- (store.UsageOf and the checks in the write transactions; issue 29's soak test). Without them
-- SQLite read every trace's row to its last column, owner, through the overflow pages of its
-- gzipped content: 25 ms for each check with 20 MB of traces stored, growing with every upload.
-- The traces and calibrations indexes cover their sums, so no content is read at all.

-- +goose Up
CREATE INDEX traces_owner ON traces (owner, size_bytes);
CREATE INDEX calibrations_owner ON calibrations (owner, sha256, size_bytes);
CREATE INDEX sweeps_owner_active ON sweeps (owner) WHERE cancelled = 0;

-- +goose Down
DROP INDEX sweeps_owner_active;
DROP INDEX calibrations_owner;
DROP INDEX traces_owner;
