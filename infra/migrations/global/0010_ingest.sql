-- Ingest bookkeeping, kept per dataset (`live`, `test`): which entity each source's own ID is,
-- the index that lets a game from one source find the same real game from another, and which
-- events each log (dataset + epoch) already holds. Written by ingest only; never served.

-- (source, source's own ID) -> our ID. Games also keep the kickoff this source last gave,
-- so a changed kickoff is recognised as a reschedule of the same game.
CREATE TABLE ingest.identities (
    dataset       text NOT NULL,
    kind          text NOT NULL,                  -- game, team, player
    source        text NOT NULL,
    source_id     text NOT NULL,
    entity_id     text NOT NULL,
    kickoff_at    timestamptz,
    kickoff_date  date,
    first_seen    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (dataset, kind, source, source_id)
);
CREATE INDEX identities_entity ON ingest.identities (dataset, entity_id);

-- every game any source named: matched by competition, teams and kickoff window (other
-- sources' games), and by season, week and team (player stats and injury reports)
CREATE TABLE ingest.games (
    dataset       text NOT NULL,
    game_id       text NOT NULL,
    competition   text NOT NULL,
    home_team_id  text NOT NULL,
    away_team_id  text NOT NULL,
    kickoff_sort  timestamptz NOT NULL,           -- kickoff, or the start of its local day
    kickoff_at    timestamptz,
    season        text,
    week          int,
    owner         text NOT NULL,                  -- the source that named it first: only it moves the kickoff
    PRIMARY KEY (dataset, game_id)
);
CREATE INDEX games_teams ON ingest.games (dataset, competition, home_team_id, away_team_id, kickoff_sort);
CREATE INDEX games_week_home ON ingest.games (dataset, competition, season, week, home_team_id);
CREATE INDEX games_week_away ON ingest.games (dataset, competition, season, week, away_team_id);

-- a log is a dataset's topics in one epoch (a fresh embedded broker is a new, empty log)
CREATE TABLE ingest.logs (
    log_id      serial PRIMARY KEY,
    dataset     text NOT NULL,
    epoch       text NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    UNIQUE (dataset, epoch)
);

-- events acknowledged by the broker, per log: a re-ingested record is a duplicate, not a new event
-- (byte-wise collation: IDs are ASCII, and the hot path inserts one row per event)
CREATE TABLE ingest.appended (
    log_id    int NOT NULL REFERENCES ingest.logs (log_id) ON DELETE CASCADE,
    event_id  text COLLATE "C" NOT NULL,
    PRIMARY KEY (log_id, event_id)
);
