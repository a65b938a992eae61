-- Read models of one dataset. Applied to each dataset schema (`live`, `test`) and to the
-- scratch schemas of `svc projections rebuild|verify`, with search_path set to that schema:
-- every name here is unqualified on purpose.
--
-- Every served row keeps `source` (as shown to readers), `as_of` (when the value was true:
-- for derived values, the time of the newest input) and `provenance`
-- ({source, source_ts, ingest_ts, known_by: [{source, source_id}]}).
-- Rows that a Wire topic updates keep that topic's `last_seq`: a snapshot read here plus
-- deltas with seq > last_seq is always consistent.

-- ---- projector bookkeeping (never served) -------------------------------------------------

-- which log these read models came from; a different epoch on the broker means rebuild
CREATE TABLE projection_meta (
    id          int PRIMARY KEY DEFAULT 1 CHECK (id = 1),
    epoch       text NOT NULL,
    updated_at  timestamptz NOT NULL DEFAULT now()
);

-- exactly-once: the newest offset applied per partition, written in the same transaction as
-- the read models; a redelivered record at or below it is a no-op
CREATE TABLE tracking (
    topic       text NOT NULL,
    partition   int NOT NULL,
    last_offset bigint NOT NULL,
    epoch       text NOT NULL,
    PRIMARY KEY (topic, partition)
);

-- per Wire topic (`game:gm_…`, `market:mkt_…`): the last seq handed out
CREATE TABLE topic_seq (
    topic     text PRIMARY KEY,
    last_seq  bigint NOT NULL
);

-- deltas committed with the read models that produced them, relayed to `wire.deltas`
-- after commit and deleted once the broker acknowledged them (a crash in between means the
-- relay sends them again: exact duplicates, which consumers drop by seq)
CREATE TABLE outbox (
    wire_topic  text NOT NULL,
    seq         bigint NOT NULL,
    envelope    bytea NOT NULL,
    PRIMARY KEY (wire_topic, seq)
);

-- ---- reference data --------------------------------------------------------------------------

CREATE TABLE sports (
    id          text PRIMARY KEY,          -- spt_
    slug        text NOT NULL UNIQUE,      -- american_football, soccer
    name        text NOT NULL,
    source      text NOT NULL,
    as_of       timestamptz NOT NULL,
    provenance  jsonb NOT NULL
);

CREATE TABLE competitions (
    id          text PRIMARY KEY,          -- cmp_
    slug        text NOT NULL UNIQUE,      -- nfl, epl, serie_a
    name        text NOT NULL,
    sport       text NOT NULL,             -- sport slug
    timezone    text NOT NULL,             -- IANA zone the competition keeps its calendar in
    source      text NOT NULL,
    as_of       timestamptz NOT NULL,
    provenance  jsonb NOT NULL
);

CREATE TABLE seasons (
    id           text PRIMARY KEY,         -- ssn_
    competition  text NOT NULL,            -- competition slug
    label        text NOT NULL,            -- "2024", "2024-25"
    year         int,
    starts_on    date,
    ends_on      date,
    source       text NOT NULL,
    as_of        timestamptz NOT NULL,
    UNIQUE (competition, label)
);

CREATE TABLE teams (
    id            text PRIMARY KEY,        -- tm_
    sport         text NOT NULL,
    competition   text NOT NULL,
    name          text NOT NULL,
    abbreviation  text,
    aliases       text[] NOT NULL DEFAULT '{}',
    source        text NOT NULL,
    as_of         timestamptz NOT NULL,
    provenance    jsonb NOT NULL
);

-- ---- games -----------------------------------------------------------------------------------

CREATE TABLE games (
    id                text PRIMARY KEY,    -- gm_
    name              text NOT NULL,
    sport             text NOT NULL,
    competition       text NOT NULL,
    season            text,
    week              int,
    season_type       text,
    kickoff_at        timestamptz,
    kickoff_date      date,
    -- kickoff order: kickoff_at, or the start of kickoff_date in the competition's zone
    kickoff_sort      timestamptz NOT NULL,
    venue             text,
    neutral_site      boolean NOT NULL DEFAULT false,
    home_team_id      text NOT NULL,
    away_team_id      text NOT NULL,
    status            text NOT NULL DEFAULT 'scheduled',
    score_home        int,
    score_away        int,
    period            text,
    clock             text,
    possession        text,
    last_play         text,
    state_provenance  jsonb,
    source            text NOT NULL,
    as_of             timestamptz NOT NULL,
    provenance        jsonb NOT NULL,
    last_seq          bigint NOT NULL DEFAULT 0
);
CREATE INDEX games_kickoff ON games (kickoff_sort, id);
CREATE INDEX games_competition ON games (competition, season, week, kickoff_sort, id);

-- ---- markets ---------------------------------------------------------------------------------

-- a market is (game, kind, type, period, participant); its lines are the points quoted
CREATE TABLE markets (
    id              text PRIMARY KEY,      -- mkt_
    game_id         text NOT NULL,
    kind            text NOT NULL,         -- game, prop, future, exchange
    type            text NOT NULL,         -- h2h, spreads, totals, prop type
    period          text NOT NULL,
    participant_id  text,
    name            text,
    status          text NOT NULL DEFAULT 'open',  -- open, suspended
    main_point      numeric,               -- the main line's point (null for h2h)
    books           int NOT NULL DEFAULT 0,        -- eligible books on the main line
    source          text NOT NULL,
    as_of           timestamptz NOT NULL,
    provenance      jsonb NOT NULL,
    last_seq        bigint NOT NULL DEFAULT 0
);
CREATE INDEX markets_game ON markets (game_id, kind, type, period, id);

-- consensus per line. `outcomes` is a JSON array in a fixed selection order, each
-- {selection, name, participant_id, point, price (median decimal price, number),
--  probability: {multiplicative, additive, power, shin, odds_ratio} (consensus no-vig, numbers)}
-- `methods` holds per devig method {hold?, flags, message} notes; `hold` and `books` follow the
-- rules of the projection issue. No book names and no per-book price ever appear here.
CREATE TABLE market_lines (
    market_id   text NOT NULL,
    line_key    text NOT NULL,             -- the point as text, '' for lines without a point
    point       numeric,
    is_main     boolean NOT NULL,
    books       int NOT NULL,
    hold        double precision,
    outcomes    jsonb NOT NULL,
    methods     jsonb NOT NULL DEFAULT '{}',
    source      text NOT NULL,
    as_of       timestamptz NOT NULL,
    PRIMARY KEY (market_id, line_key)
);

-- INTERNAL: each book's latest prices per line. No API route reads this table.
CREATE TABLE book_prices (
    market_id   text NOT NULL,
    line_key    text NOT NULL,
    book        text NOT NULL,
    kind        text NOT NULL,
    suspended   boolean NOT NULL DEFAULT false,
    outcomes    jsonb NOT NULL,
    source      text NOT NULL,
    source_ts   timestamptz NOT NULL,
    event_id    text NOT NULL,
    PRIMARY KEY (market_id, line_key, book)
);

-- ---- players ---------------------------------------------------------------------------------

CREATE TABLE players (
    id          text PRIMARY KEY,          -- plr_
    sport       text NOT NULL,
    competition text NOT NULL,
    name        text NOT NULL,
    position    text,
    team_id     text,
    source      text NOT NULL,
    as_of       timestamptz NOT NULL,
    provenance  jsonb NOT NULL
);
CREATE INDEX players_team ON players (team_id);

-- the player's current injury report (one row per player at most)
CREATE TABLE injuries (
    player_id      text PRIMARY KEY,
    team_id        text,
    status         text,
    roster_status  text,
    detail         text,
    practice       text,
    game_day       text,
    season         int,
    week           int,
    game_id        text,
    reported_at    timestamptz,
    source         text NOT NULL,
    as_of          timestamptz NOT NULL,
    provenance     jsonb NOT NULL
);

-- latest availability status per player and source (spec 2.8 `availability`)
CREATE TABLE availability (
    player_id   text NOT NULL,
    source      text NOT NULL,
    status      text NOT NULL,
    game_id     text,
    season      int,
    week        int,
    as_of       timestamptz NOT NULL,
    provenance  jsonb NOT NULL,
    PRIMARY KEY (player_id, source)
);

-- the latest five news items per player, newest first by (published_at, event_id)
CREATE TABLE news (
    player_id     text NOT NULL,
    event_id      text NOT NULL,
    kind          text NOT NULL,
    headline      text NOT NULL,
    published_at  timestamptz,
    source        text NOT NULL,
    as_of         timestamptz NOT NULL,
    provenance    jsonb NOT NULL,
    PRIMARY KEY (player_id, event_id)
);

-- stat lines of players (and teams): per game (game_id set, basis 'total') and per season
-- (game_id null, basis 'total' or 'per_game'). `stats` values are integers or decimal strings.
CREATE TABLE stat_lines (
    line_key     text PRIMARY KEY,         -- built by the projector from the columns below
    subject_id   text NOT NULL,            -- plr_ or tm_
    team_id      text,
    game_id      text,
    season       text,
    week         int,
    season_type  text,
    basis        text,
    stats        jsonb NOT NULL,
    source       text NOT NULL,
    as_of        timestamptz NOT NULL,
    provenance   jsonb NOT NULL
);
CREATE INDEX stat_lines_subject ON stat_lines (subject_id, season, game_id);
CREATE INDEX stat_lines_game ON stat_lines (game_id);

-- ---- search ----------------------------------------------------------------------------------

-- one row per searchable entity; `terms` is the normalised text matched with pg_trgm
CREATE TABLE search_index (
    id           text PRIMARY KEY,         -- cmp_, tm_, plr_, gm_
    kind         text NOT NULL,            -- competition, team, player, game
    name         text NOT NULL,
    competition  text,                     -- competition slug, for the filter
    context      jsonb NOT NULL DEFAULT '{}',
    terms        text NOT NULL,
    as_of        timestamptz NOT NULL
);
CREATE INDEX search_index_terms ON search_index USING gin (terms public.gin_trgm_ops);
