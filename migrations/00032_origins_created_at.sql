-- Origins expire OriginTTL after their last import (store.PutOrigin deletes the older ones):
-- the index lets that delete find them without reading every stored file.

-- +goose Up
CREATE INDEX origins_created_at ON origins (created_at);

-- +goose Down
DROP INDEX origins_created_at;
