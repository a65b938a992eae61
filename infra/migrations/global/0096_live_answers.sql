-- Live answers (api/answers/live.py): an answer whose figures can still move is re-derived when
-- they do and published on its Wire topic `answer:{answer_id}`, each version superseding the last.
-- `basis` is what re-derives it (the game read, the market types and devig method asked for; JSON,
-- never the question), `dataset` the read models it reads, `version` the topic's seq (1: the
-- answer as first served) and `latest` the newest version (null: `body` is still the newest).
ALTER TABLE access.answers
    ADD COLUMN dataset text,
    ADD COLUMN basis   bytea,
    ADD COLUMN version integer NOT NULL DEFAULT 1,
    ADD COLUMN latest  bytea;
