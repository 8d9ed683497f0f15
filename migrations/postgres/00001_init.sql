-- The first schema: simulation runs and uploaded traces (PostgreSQL twin of ../00001_init.sql).
-- Times are unix milliseconds (BIGINT); NULL means "not yet".

-- +goose Up
CREATE TABLE runs (
    -- The id is content-addressed (a hash of the canonical scenario and the model version), so
    -- an identical scenario maps to the same row and the same permalink.
    id            TEXT             PRIMARY KEY NOT NULL,
    name          TEXT             NOT NULL DEFAULT '',
    status        TEXT             NOT NULL CHECK (status IN ('queued', 'running', 'done', 'failed', 'cancelled')),
    error         TEXT             NOT NULL DEFAULT '',
    progress      DOUBLE PRECISION NOT NULL DEFAULT 0 CHECK (progress >= 0 AND progress <= 1),
    scenario_json BYTEA            NOT NULL,
    report_json   BYTEA,
    headline_json BYTEA,
    created_at    BIGINT           NOT NULL,
    started_at    BIGINT,
    finished_at   BIGINT,
    attempts      INTEGER          NOT NULL DEFAULT 0 CHECK (attempts >= 0)
);

-- The runs list pages newest first.
CREATE INDEX runs_created_at ON runs (created_at DESC, id DESC);

-- Restart recovery looks for the few unfinished runs among many finished ones.
CREATE INDEX runs_unfinished ON runs (created_at, id) WHERE status IN ('queued', 'running');

CREATE TABLE traces (
    sha256       TEXT    PRIMARY KEY NOT NULL CHECK (length(sha256) = 64),
    name         TEXT    NOT NULL DEFAULT '',
    size_bytes   BIGINT  NOT NULL CHECK (size_bytes >= 0),  -- of the uncompressed content
    rows         INTEGER NOT NULL CHECK (rows >= 0),
    -- JSONL compresses well and is read once per run, so it is kept gzipped.
    content_gzip BYTEA   NOT NULL,
    created_at   BIGINT  NOT NULL
);

CREATE INDEX traces_created_at ON traces (created_at DESC, sha256);

-- +goose Down
DROP INDEX traces_created_at;
DROP TABLE traces;
DROP INDEX runs_unfinished;
DROP INDEX runs_created_at;
DROP TABLE runs;
