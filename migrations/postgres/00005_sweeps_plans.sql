-- What-if sweeps and scale-in plans (PostgreSQL twin of ../00005_sweeps_plans.sql). Their
-- points are ordinary runs: these tables only say which runs belong to which sweep or plan.

-- +goose Up
CREATE TABLE sweeps (
    id            TEXT    PRIMARY KEY NOT NULL,
    name          TEXT    NOT NULL DEFAULT '',
    scenario_json BYTEA   NOT NULL,
    axes_json     BYTEA   NOT NULL,
    cancelled     INTEGER NOT NULL DEFAULT 0 CHECK (cancelled IN (0, 1)),
    created_at    BIGINT  NOT NULL
);

CREATE TABLE sweep_points (
    sweep_id    TEXT    NOT NULL REFERENCES sweeps (id) ON DELETE CASCADE,
    idx         INTEGER NOT NULL CHECK (idx >= 0),
    values_json BYTEA   NOT NULL,
    run_id      TEXT    NOT NULL REFERENCES runs (id),
    PRIMARY KEY (sweep_id, idx)
);

CREATE TABLE plans (
    id            TEXT   PRIMARY KEY NOT NULL,
    name          TEXT   NOT NULL DEFAULT '',
    status        TEXT   NOT NULL CHECK (status IN ('queued', 'running', 'done', 'failed', 'cancelled')),
    error         TEXT   NOT NULL DEFAULT '',
    scenario_json BYTEA  NOT NULL,
    request_json  BYTEA  NOT NULL,
    result_json   BYTEA,
    created_at    BIGINT NOT NULL,
    finished_at   BIGINT
);

CREATE INDEX plans_unfinished ON plans (created_at, id) WHERE status IN ('queued', 'running');

CREATE TABLE plan_points (
    plan_id TEXT    NOT NULL REFERENCES plans (id) ON DELETE CASCADE,
    idx     INTEGER NOT NULL CHECK (idx >= 0),
    label   TEXT    NOT NULL DEFAULT '',
    run_id  TEXT    NOT NULL REFERENCES runs (id),
    PRIMARY KEY (plan_id, idx)
);

-- +goose Down
DROP TABLE plan_points;
DROP INDEX plans_unfinished;
DROP TABLE plans;
DROP TABLE sweep_points;
DROP TABLE sweeps;
