-- The ideal fleet of a run (issue 35): when a diagnose plan finishes, its scenario's run (the
-- run of the scenario's own autoscaler) is linked to the run of the ideal fleet it was measured
-- against, so the run's page draws the ideal fleet on its fleet chart with one lookup by key.
-- A later diagnose plan of the same run replaces the link.

-- +goose Up
CREATE TABLE ideal_fleets (
    run_id       TEXT    PRIMARY KEY,
    ideal_run_id TEXT    NOT NULL,
    plan_id      TEXT    NOT NULL,
    created_at   INTEGER NOT NULL
) STRICT;

-- +goose Down
DROP TABLE ideal_fleets;
