-- Calibrations (PostgreSQL twin of ../00003_calibrations.sql).

-- +goose Up
CREATE TABLE calibrations (
    sha256       TEXT    NOT NULL CHECK (length(sha256) = 64),
    worker       TEXT    NOT NULL DEFAULT '',
    skip         INTEGER NOT NULL DEFAULT 0 CHECK (skip >= 0),
    name         TEXT    NOT NULL DEFAULT '',
    size_bytes   BIGINT  NOT NULL CHECK (size_bytes >= 0),
    passes       INTEGER NOT NULL CHECK (passes >= 0),
    content_gzip BYTEA   NOT NULL,
    result_json  BYTEA   NOT NULL,
    created_at   BIGINT  NOT NULL,
    PRIMARY KEY (sha256, worker, skip)
);

CREATE INDEX calibrations_created_at ON calibrations (created_at DESC, sha256);

-- +goose Down
DROP INDEX calibrations_created_at;
DROP TABLE calibrations;
