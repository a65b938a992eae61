-- per log and topic partition ingest appends to: every record below `mark` has its event (or
-- dead letter) recorded in ingest.appended. A run that died between the broker's acknowledgement
-- and the record leaves records past the mark; the next run reads them and records them first
-- (ingest/reconcile.py), so ingesting the file again appends nothing twice.
CREATE TABLE ingest.marks (
    log_id     int NOT NULL REFERENCES ingest.logs (log_id) ON DELETE CASCADE,
    topic      text NOT NULL,
    partition  int NOT NULL,
    mark       bigint NOT NULL,
    PRIMARY KEY (log_id, topic, partition)
);
