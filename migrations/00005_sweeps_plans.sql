-- What-if sweeps and scale-in plans (docs/planning.md). Their points are ordinary runs: these
-- tables only say which runs belong to which sweep or plan, in order.

-- +goose Up
CREATE TABLE sweeps (
    -- Content-addressed: a hash of the base scenario and the axes, so the same request gives
    -- the same sweep.
    id            TEXT    PRIMARY KEY NOT NULL,
    name          TEXT    NOT NULL DEFAULT '',
    scenario_json BLOB    NOT NULL,
    axes_json     BLOB    NOT NULL,
    -- 1 once a user cancelled it; a new identical request clears it and resumes the sweep.
    cancelled     INTEGER NOT NULL DEFAULT 0 CHECK (cancelled IN (0, 1)),
    created_at    INTEGER NOT NULL
) STRICT;

CREATE TABLE sweep_points (
    sweep_id    TEXT    NOT NULL REFERENCES sweeps (id) ON DELETE CASCADE,
    idx         INTEGER NOT NULL CHECK (idx >= 0),
    values_json BLOB    NOT NULL,
    run_id      TEXT    NOT NULL REFERENCES runs (id),
    PRIMARY KEY (sweep_id, idx)
) STRICT;

CREATE TABLE plans (
    id            TEXT    PRIMARY KEY NOT NULL,
    name          TEXT    NOT NULL DEFAULT '',
    status        TEXT    NOT NULL CHECK (status IN ('queued', 'running', 'done', 'failed', 'cancelled')),
    error         TEXT    NOT NULL DEFAULT '',
    scenario_json BLOB    NOT NULL,
    request_json  BLOB    NOT NULL,
    result_json   BLOB,
    created_at    INTEGER NOT NULL,
    finished_at   INTEGER
) STRICT;

-- Restart recovery resumes the plans that were not finished.
CREATE INDEX plans_unfinished ON plans (created_at, id) WHERE status IN ('queued', 'running');

-- The runs a plan has submitted so far, in submission order: the plan page's progress.
CREATE TABLE plan_points (
    plan_id TEXT    NOT NULL REFERENCES plans (id) ON DELETE CASCADE,
    idx     INTEGER NOT NULL CHECK (idx >= 0),
    label   TEXT    NOT NULL DEFAULT '',
    run_id  TEXT    NOT NULL REFERENCES runs (id),
    PRIMARY KEY (plan_id, idx)
) STRICT;

-- +goose Down
DROP TABLE plan_points;
DROP INDEX plans_unfinished;
DROP TABLE plans;
DROP TABLE sweep_points;
DROP TABLE sweeps;
