-- `games.kickoff`: the games' kickoff order changed (a game added or removed, a kickoff moved).
-- What a player's latest game is depends on it alone (api/queries/stats.py latest_game_lines),
-- not on the scores and clocks that rewrite `games` several times a second during play.
-- Row-level for inserts and kickoff moves (the WHEN is evaluated per row, the function runs only
-- for a row that moved); statement-level for deletes and truncation.
CREATE TRIGGER games_kickoff_insert AFTER INSERT ON games
    FOR EACH ROW EXECUTE FUNCTION public.svc_read_model_part_changed('games.kickoff');
CREATE TRIGGER games_kickoff_update AFTER UPDATE OF kickoff_sort ON games
    FOR EACH ROW WHEN (OLD.kickoff_sort IS DISTINCT FROM NEW.kickoff_sort)
    EXECUTE FUNCTION public.svc_read_model_part_changed('games.kickoff');
CREATE TRIGGER games_kickoff_delete AFTER DELETE OR TRUNCATE ON games
    FOR EACH STATEMENT EXECUTE FUNCTION public.svc_read_model_part_changed('games.kickoff');
