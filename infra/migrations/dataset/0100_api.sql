-- Indexes for the read API's list orders (owned by the API; applied to each dataset schema with
-- search_path set to it, like 0001). Every list is in kickoff order within its filters.

-- GET /v1/games?competition=…&season=… (no week): the page comes off the index in kickoff order
CREATE INDEX IF NOT EXISTS games_competition_season_kickoff ON games (competition, season, kickoff_sort, id);
-- GET /v1/games?status=…
CREATE INDEX IF NOT EXISTS games_status_kickoff ON games (status, kickoff_sort, id);
