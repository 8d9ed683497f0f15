-- The ideal fleet of a run, linked when a diagnose plan finishes (PostgreSQL twin of
-- ../00031_ideal_fleets.sql).

-- +goose Up
CREATE TABLE ideal_fleets (
    run_id       TEXT   PRIMARY KEY,
    ideal_run_id TEXT   NOT NULL,
    plan_id      TEXT   NOT NULL,
    created_at   BIGINT NOT NULL
);

-- +goose Down
DROP TABLE ideal_fleets;
