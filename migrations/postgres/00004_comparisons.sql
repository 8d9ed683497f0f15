-- Result pages (issue 8): the comparisons people opened (PostgreSQL twin of
-- ../00004_comparisons.sql). A pair is stored once, in the order it was first opened (A, B).

-- +goose Up
CREATE TABLE comparisons (
    run_a      TEXT   NOT NULL,
    run_b      TEXT   NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (run_a, run_b),
    CHECK (run_a <> run_b)
);

-- A run page looks its comparisons up from either side.
CREATE INDEX comparisons_run_b ON comparisons (run_b);

-- +goose Down
DROP INDEX comparisons_run_b;
DROP TABLE comparisons;
