-- The reference library (projections/reducers/library.py; docs/reference.md): one row per
-- entry with its newest text, and every revision. The API serves status 'published' only.

CREATE TABLE reference_entries (
    id             text PRIMARY KEY,       -- ref_ (the hash of the slug)
    slug           text NOT NULL UNIQUE,   -- the file name: vig, us-nj-sports-betting
    kind           text NOT NULL,          -- term, rule, law, tax, policy, guide, help
    status         text NOT NULL,          -- published, retired
    title          text NOT NULL,
    aliases        text[] NOT NULL DEFAULT '{}',
    summary        text NOT NULL,
    body           text NOT NULL,          -- Markdown
    jurisdictions  text[] NOT NULL DEFAULT '{}',   -- ISO 3166 codes, upper case
    products       text[] NOT NULL DEFAULT '{}',
    operators      text[] NOT NULL DEFAULT '{}',
    related        text[] NOT NULL DEFAULT '{}',   -- ref_ IDs
    formulas       text[] NOT NULL DEFAULT '{}',   -- formula card IDs
    wagering       boolean NOT NULL,
    sources        jsonb NOT NULL,         -- [{title, publisher, url, published_on, accessed_on}]
    reviewed_at    date NOT NULL,
    review_due     date NOT NULL,
    version        int NOT NULL,           -- moves when what the entry says changes
    revision       int NOT NULL,           -- revisions applied (reference_revisions rows)
    terms          text NOT NULL,          -- title and aliases, normalised: matched with pg_trgm
    source         text NOT NULL,
    as_of          timestamptz NOT NULL,   -- the day it was reviewed
    provenance     jsonb NOT NULL,
    -- full text: title and aliases weigh most, then the summary, then the body
    document       tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('english'::regconfig, terms), 'A')
        || setweight(to_tsvector('english'::regconfig, summary), 'B')
        || setweight(to_tsvector('english'::regconfig, body), 'C')
    ) STORED
);
CREATE INDEX reference_entries_topic ON reference_entries (kind, title, id) WHERE status = 'published';
CREATE INDEX reference_entries_document ON reference_entries USING gin (document);
CREATE INDEX reference_entries_terms ON reference_entries USING gin (terms public.gin_trgm_ops);

-- every event of an entry's history, in log order
CREATE TABLE reference_revisions (
    entry_id    text NOT NULL,
    revision    int NOT NULL,              -- 1, 2, ...
    action      text NOT NULL,             -- published, revised, retired
    version     int NOT NULL,              -- the entry's version after this revision
    entry       jsonb,                     -- the entry as published (null: retired)
    reason      text,                      -- why it was retired
    source      text NOT NULL,
    as_of       timestamptz NOT NULL,
    provenance  jsonb NOT NULL,
    PRIMARY KEY (entry_id, revision)
);

CREATE TRIGGER reference_entries_notify AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON reference_entries
    FOR EACH STATEMENT EXECUTE FUNCTION public.svc_read_model_changed();
