-- Runs stored before 00008 all read wanted_directly = 0, as if a sweep or plan had asked for
-- them. A run that no sweep and no plan lists can only have been submitted directly (the form,
-- the API, a pair): mark it so, so that cancelling a sweep that later shares it spares it. Runs
-- that a sweep or plan lists keep 0: whether a user asked for them too was not recorded.

-- +goose Up
UPDATE runs SET wanted_directly = 1
WHERE wanted_directly = 0
    AND NOT EXISTS (SELECT 1 FROM sweep_points p WHERE p.run_id = runs.id)
    AND NOT EXISTS (SELECT 1 FROM plan_points p WHERE p.run_id = runs.id);

-- +goose Down
-- Nothing to undo: 00008's Down drops the column.
SELECT 1;
