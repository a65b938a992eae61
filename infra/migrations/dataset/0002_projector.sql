-- Projector internals, and served columns the first schema lacked. Additive only: every
-- table and column of 0001 keeps its name and meaning.

-- bumped by each swap of a rebuilt schema: a live projector holding state of an older
-- generation must reload before it writes again
ALTER TABLE projection_meta ADD COLUMN generation bigint NOT NULL DEFAULT 0;

-- INTERNAL: the projector's working state per log key ('g:' game, 'm:' market, 'p:' player,
-- 't:' team; msgpack), written with the read models; each book's quote is in book_prices.state.
-- Postgres is the truth; the rocksdict cache under <data_dir>/projector/ only speeds up starts.
CREATE TABLE projector_state (
    part   text PRIMARY KEY,
    state  bytea NOT NULL
);

ALTER TABLE book_prices
    ADD COLUMN book_name  text,
    ADD COLUMN ingest_ts  timestamptz,
    ADD COLUMN game_id    text,
    ADD COLUMN state      bytea;          -- the quote as the projector holds it (msgpack)

-- why a market is suspended (the newest suspension's reason); null while open
ALTER TABLE markets ADD COLUMN status_reason text;

-- {source, source_ts, ingest_ts} of the line's newest eligible quote
ALTER TABLE market_lines ADD COLUMN provenance jsonb;

ALTER TABLE injuries ADD COLUMN secondary_detail text;

-- sports and competitions are as of their newest input event; the upsert keeps the row with
-- the greatest '<source_ts µs, 20 digits>|<event_id>', so any batch order gives the same row
ALTER TABLE sports ADD COLUMN input_key text NOT NULL DEFAULT '';
ALTER TABLE competitions ADD COLUMN input_key text NOT NULL DEFAULT '';

CREATE INDEX news_player ON news (player_id, published_at DESC, event_id DESC);
