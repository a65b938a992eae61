-- Every table the read API serves notifies its schema's channel when a statement changes it
-- (public.svc_read_model_changed, global/0060): API processes serve what they built until told.
DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['sports', 'competitions', 'seasons', 'teams', 'games', 'markets', 'market_lines',
                             'players', 'injuries', 'availability', 'news', 'stat_lines', 'search_index'] LOOP
        EXECUTE format(
            'CREATE TRIGGER %I AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON %I '
            'FOR EACH STATEMENT EXECUTE FUNCTION public.svc_read_model_changed()', t || '_notify', t);
    END LOOP;
END $$;
