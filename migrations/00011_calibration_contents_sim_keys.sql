-- Calibration inputs stored once per SHA-256 (issue 19 M7): the same file uploaded with other
-- options (worker, skip) used to store its content again, about 5 MB each for a 50 MB file.

-- +goose Up
CREATE TABLE calibration_contents (
    sha256       TEXT    NOT NULL PRIMARY KEY CHECK (length(sha256) = 64),
    size_bytes   INTEGER NOT NULL CHECK (size_bytes >= 0),  -- of the uncompressed input
    content_gzip BLOB    NOT NULL,
    created_at   INTEGER NOT NULL
) STRICT;

INSERT INTO calibration_contents (sha256, size_bytes, content_gzip, created_at)
    SELECT sha256, size_bytes, content_gzip, min(created_at) FROM calibrations GROUP BY sha256;

-- The rows keep an empty content; calibration_contents has it.
UPDATE calibrations SET content_gzip = x'';

-- What a run simulates, its scenario without the name (sim.Scenario.SimulationKey): a sweep
-- point equal to a stored run but for the name suffix reuses that run's report, relabelled.
ALTER TABLE runs ADD COLUMN sim_key TEXT NOT NULL DEFAULT '';
CREATE INDEX runs_sim_key ON runs (sim_key, status);

-- +goose Down
DROP INDEX runs_sim_key;
ALTER TABLE runs DROP COLUMN sim_key;
UPDATE calibrations SET content_gzip =
    (SELECT c.content_gzip FROM calibration_contents c WHERE c.sha256 = calibrations.sha256);
DROP TABLE calibration_contents;
