-- A season is derived from its games: {source (their sources), source_ts (newest game as_of),
-- ingest_ts (newest of the games' identity ingest times)}, like every other served row.
ALTER TABLE seasons ADD COLUMN provenance jsonb NOT NULL DEFAULT '{}';
