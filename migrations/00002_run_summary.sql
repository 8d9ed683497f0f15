-- A done run's summary: its report without the per-request rows (plus the per-request TTFTs the
-- distribution chart draws), so the run page, compare page, CSV and charts never read the full
-- report; only report.json (and the API's report, and trace.json) read report_json. Runs that
-- finished before this column existed get theirs computed from the report on first view.

-- +goose Up
ALTER TABLE runs ADD COLUMN summary_json BLOB;

-- +goose Down
ALTER TABLE runs DROP COLUMN summary_json;
