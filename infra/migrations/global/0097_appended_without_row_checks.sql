-- ingest.appended takes one row per event a run appends (a COPY of each batch's IDs: the hot
-- path of ingest). Its foreign key to ingest.logs ran the row-level referential check, one
-- query per row: a COPY of 14,650 IDs took 0.45-0.64 s with it and 0.13-0.19 s without (PG 15,
-- on the shared 2-core box). The one writer takes log_id from ingest.logs itself
-- (AppendedRegistry.for_log); no code updates or deletes a log. What the key gave besides is
-- kept by triggers, once per statement: deleting a log deletes its rows, and a log's ID
-- cannot change under them.
ALTER TABLE ingest.appended DROP CONSTRAINT appended_log_id_fkey;

CREATE FUNCTION ingest.logs_drop_appended() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM ingest.appended a USING gone g WHERE a.log_id = g.log_id;
    RETURN NULL;
END $$;

CREATE TRIGGER logs_drop_appended AFTER DELETE ON ingest.logs
    REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION ingest.logs_drop_appended();

CREATE FUNCTION ingest.logs_keep_id() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'ingest.logs: log_id % cannot change (ingest.appended rows name it)', OLD.log_id;
END $$;

CREATE TRIGGER logs_keep_id BEFORE UPDATE OF log_id ON ingest.logs
    FOR EACH ROW WHEN (OLD.log_id IS DISTINCT FROM NEW.log_id) EXECUTE FUNCTION ingest.logs_keep_id();
