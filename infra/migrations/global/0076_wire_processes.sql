-- API processes serving the Wire (wire/presence.py): each holds an advisory lock named by its
-- number on a connection of its own (so Postgres knows at once when it dies) and writes its
-- heartbeat here every second (so a dead process's sessions expire 120 s after its last one).
CREATE TABLE access.wire_processes (
    id          int PRIMARY KEY CHECK (id > 0),
    started_at  timestamptz NOT NULL DEFAULT now(),
    seen_at     timestamptz NOT NULL
);

-- the process that holds each open connection and each attached session (NULL: rows from before)
ALTER TABLE access.wire_connections ADD COLUMN process int;
ALTER TABLE access.wire_sessions ADD COLUMN process int;
