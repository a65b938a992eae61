-- When each partition's tracking row last moved: `svc doctor` tells a projector that is behind
-- the log and still committing from one that has stopped (for instance one stuck on a dead
-- database), which the offsets alone cannot.
ALTER TABLE tracking ADD COLUMN IF NOT EXISTS committed_at timestamptz NOT NULL DEFAULT now();
