-- Calibration inputs stored once per SHA-256 (PostgreSQL twin of ../00011_calibration_contents_sim_keys.sql).

-- +goose Up
CREATE TABLE calibration_contents (
    sha256       TEXT    NOT NULL PRIMARY KEY CHECK (length(sha256) = 64),
    size_bytes   BIGINT  NOT NULL CHECK (size_bytes >= 0),
    content_gzip BYTEA   NOT NULL,
    created_at   BIGINT  NOT NULL
);

INSERT INTO calibration_contents (sha256, size_bytes, content_gzip, created_at)
    SELECT DISTINCT ON (sha256) sha256, size_bytes, content_gzip, created_at
    FROM calibrations ORDER BY sha256, created_at;

UPDATE calibrations SET content_gzip = ''::bytea;

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
