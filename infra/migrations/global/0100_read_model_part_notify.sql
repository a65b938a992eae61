-- A part of a served read-model table changed: the part's name (the trigger's argument, e.g.
-- `games.kickoff`) goes on the schema's channel like a table's name (global/0060), for routes
-- whose response depends on that part only and must not be built again for every other change
-- to the table (api/read_cache.py). Postgres folds identical notifications of one transaction.
CREATE FUNCTION public.svc_read_model_part_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('svc_read_models.' || TG_TABLE_SCHEMA, TG_ARGV[0]);
    RETURN NULL;
END $$;
