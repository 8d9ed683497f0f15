-- A done run's full report (per-request rows included) is stored as one gzip stream cut into
-- pieces of 64 KiB (about 1 MB of JSON), one row each, so report.json streams it piece by piece
-- with bounded memory (and sends the gzip bytes as they are to a client that accepts gzip), and
-- the API's run document and trace.json decode it through a reader. JSON of per-request rows
-- compresses more than 10×, so the database shrinks too. runs.report_json stays for reports stored before this
-- migration: the first read of such a report moves it into chunks and clears the column.
-- PostgreSQL twin of ../00007_report_chunks.sql.

-- +goose Up
CREATE TABLE run_report_chunks (
    run_id TEXT   NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    seq    BIGINT NOT NULL CHECK (seq >= 0),
    data   BYTEA  NOT NULL,
    PRIMARY KEY (run_id, seq)
);

-- Of a report stored in chunks: the length of its JSON, of its gzip stream (the chunks' total),
-- and how many chunks it has. NULL for a report in report_json or no report.
ALTER TABLE runs ADD COLUMN report_bytes BIGINT;
ALTER TABLE runs ADD COLUMN report_gzip_bytes BIGINT;
ALTER TABLE runs ADD COLUMN report_chunks BIGINT;

-- +goose Down
ALTER TABLE runs DROP COLUMN report_chunks;
ALTER TABLE runs DROP COLUMN report_gzip_bytes;
ALTER TABLE runs DROP COLUMN report_bytes;
DROP TABLE run_report_chunks;
