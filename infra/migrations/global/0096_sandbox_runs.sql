-- runs of the sandbox day on a log (ingest/sandbox/play.py): each run plays the day on the wall
-- clock from its anchor at its speed (ingest/sandbox/clock.py). A run is started once any of its
-- in-game part was appended and finished once all of it was; a stopped run is resumed on its own
-- clock, a finished one is followed by a new run (the day again, from its start).
CREATE TABLE ingest.sandbox_runs (
    log_id       int NOT NULL REFERENCES ingest.logs (log_id) ON DELETE CASCADE,
    run          int NOT NULL,
    anchor       timestamptz NOT NULL,
    speed        double precision NOT NULL,
    started      boolean NOT NULL DEFAULT false,
    finished_at  timestamptz,
    PRIMARY KEY (log_id, run)
);
