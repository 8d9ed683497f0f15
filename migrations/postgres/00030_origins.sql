-- The imported manifests that travel with a scenario on the web (PostgreSQL twin of
-- ../00030_origins.sql).

-- +goose Up
CREATE TABLE origins (
    key         TEXT   PRIMARY KEY,
    origin_json BYTEA  NOT NULL,
    created_at  BIGINT NOT NULL
);

-- +goose Down
DROP TABLE origins;
