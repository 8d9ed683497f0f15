-- The job queue (River, whose own tables are migrated by River): each run remembers the job that
-- works it, so a cancel can cancel the job, and which worker process produced its report.
-- PostgreSQL twin of ../00006_job_queue.sql.

-- +goose Up
-- The River job (river_job.id) queued for the run's latest submission; NULL before one exists.
ALTER TABLE runs ADD COLUMN job_id BIGINT;
-- "host:pid" of the process that started the latest attempt (and so produced the report of a
-- done run); '' before any attempt.
ALTER TABLE runs ADD COLUMN worker TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE runs DROP COLUMN worker;
ALTER TABLE runs DROP COLUMN job_id;
