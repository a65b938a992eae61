-- The strategy registry (projections/reducers/content.py; docs/strategies.md): one row per
-- strategy and per recipe with its newest record, and every revision. The API serves status
-- 'published' only. `record` is the file as the log carries it (schemas/strategies.py).

CREATE TABLE strategies (
    id           text PRIMARY KEY,       -- stg_ (the hash of the slug)
    slug         text NOT NULL UNIQUE,   -- the registry ID: kelly-criterion
    family       text NOT NULL,          -- B1 ... B14, F1 ... F9
    ledger_row   int NOT NULL,           -- 1 ... 134, in ledger order
    status       text NOT NULL,          -- published, retired
    name         text NOT NULL,
    verdict      text NOT NULL,
    route        text NOT NULL,
    record       jsonb NOT NULL,
    version      int NOT NULL,           -- moves when the verdict or its evidence changes
    revision     int NOT NULL,           -- revisions applied (strategy_revisions rows)
    reviewed_at  date NOT NULL,
    review_due   date NOT NULL,
    source       text NOT NULL,
    as_of        timestamptz NOT NULL,   -- the day its evidence was reviewed
    provenance   jsonb NOT NULL
);
CREATE INDEX strategies_ledger ON strategies (ledger_row) WHERE status = 'published';

CREATE TABLE strategy_revisions (
    entry_id    text NOT NULL,
    revision    int NOT NULL,
    action      text NOT NULL,             -- published, revised, retired
    version     int NOT NULL,
    entry       jsonb,                     -- the record as published (null: retired)
    reason      text,
    source      text NOT NULL,
    as_of       timestamptz NOT NULL,
    provenance  jsonb NOT NULL,
    PRIMARY KEY (entry_id, revision)
);

CREATE TABLE recipes (
    id           text PRIMARY KEY,       -- C1 ... C46
    number       int NOT NULL,           -- 1 ... 46: the order recipes are listed in
    status       text NOT NULL,
    name         text NOT NULL,
    record       jsonb NOT NULL,
    version      int NOT NULL,
    revision     int NOT NULL,
    reviewed_at  date NOT NULL,
    review_due   date NOT NULL,
    source       text NOT NULL,
    as_of        timestamptz NOT NULL,
    provenance   jsonb NOT NULL
);

CREATE TABLE recipe_revisions (
    entry_id    text NOT NULL,
    revision    int NOT NULL,
    action      text NOT NULL,
    version     int NOT NULL,
    entry       jsonb,
    reason      text,
    source      text NOT NULL,
    as_of       timestamptz NOT NULL,
    provenance  jsonb NOT NULL,
    PRIMARY KEY (entry_id, revision)
);

CREATE TRIGGER strategies_notify AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON strategies
    FOR EACH STATEMENT EXECUTE FUNCTION public.svc_read_model_changed();
CREATE TRIGGER recipes_notify AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON recipes
    FOR EACH STATEMENT EXECUTE FUNCTION public.svc_read_model_changed();
