-- Runs shared between sweeps, plans and direct submissions (docs/planning.md, "Cancelling").
-- A sweep's or plan's cancel leaves alone the runs something else still waits on: another
-- active sweep or plan (found through their points), or a user who submitted the run directly
-- (the form, the API, a pair), which this column records.

-- +goose Up
-- 1 while a direct submission waits on the run: set when one asks for it, reset to what the
-- submission is when a finished (failed or cancelled) run is queued again.
ALTER TABLE runs ADD COLUMN wanted_directly INTEGER NOT NULL DEFAULT 0 CHECK (wanted_directly IN (0, 1));

-- A cancel looks up which sweeps and plans list a run.
CREATE INDEX sweep_points_run ON sweep_points (run_id);
CREATE INDEX plan_points_run ON plan_points (run_id);

-- +goose Down
DROP INDEX plan_points_run;
DROP INDEX sweep_points_run;
ALTER TABLE runs DROP COLUMN wanted_directly;
