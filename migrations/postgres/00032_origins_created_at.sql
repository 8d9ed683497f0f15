-- PostgreSQL twin of ../00032_origins_created_at.sql.

-- +goose Up
CREATE INDEX origins_created_at ON origins (created_at);

-- +goose Down
DROP INDEX origins_created_at;
