-- Calibrations: timing fitted to uploaded FPM forward-pass lines (sim/calibrate).

-- +goose Up
CREATE TABLE calibrations (
    -- A calibration is named by the SHA-256 of its input file and the options it was fitted
    -- with (the worker_id it kept, '' for all, and the passes it skipped), so uploading the same
    -- file with the same options gives the same permalink.
    sha256       TEXT    NOT NULL CHECK (length(sha256) = 64),
    worker       TEXT    NOT NULL DEFAULT '',
    skip         INTEGER NOT NULL DEFAULT 0 CHECK (skip >= 0),
    name         TEXT    NOT NULL DEFAULT '',
    size_bytes   INTEGER NOT NULL CHECK (size_bytes >= 0),  -- of the uncompressed input
    passes       INTEGER NOT NULL CHECK (passes >= 0),      -- fitted
    content_gzip BLOB    NOT NULL,   -- the input, for the measured-against-predicted chart
    result_json  BLOB    NOT NULL,   -- the calibration document (calibrate.Result)
    created_at   INTEGER NOT NULL,
    PRIMARY KEY (sha256, worker, skip)
) STRICT;

CREATE INDEX calibrations_created_at ON calibrations (created_at DESC, sha256);

-- +goose Down
DROP INDEX calibrations_created_at;
DROP TABLE calibrations;
