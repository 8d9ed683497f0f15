-- The imported manifests (hpa.Origin as JSON) that travel with a scenario on the web: the
-- scenario form keeps the import's origin, the run page links the plan form with its key, and
-- a tune plan's download writes into the user's own file. Content-addressed (key = the
-- SHA-256 of origin_json in hex), so the same import stored twice is one row.

-- +goose Up
CREATE TABLE origins (
    key         TEXT    PRIMARY KEY,
    origin_json BLOB    NOT NULL,
    created_at  INTEGER NOT NULL
) STRICT;

-- +goose Down
DROP TABLE origins;
