-- Wire socket sessions (spec 6.1): kept while connected and 120 seconds after a drop, so a client
-- can resume on any API process. Only a keyed hash of the current resume token is stored.

CREATE TABLE access.wire_sessions (
    id            text PRIMARY KEY,                      -- wses_
    token_hash    bytea,                                 -- the current resume token's HMAC
    key_id        text NOT NULL,
    account_id    text NOT NULL,
    plan          text NOT NULL,
    mode          text NOT NULL CHECK (mode IN ('live', 'test')),
    ticket_topics text[],                                -- the ticket's binding; NULL: any topic
    topics        text[] NOT NULL DEFAULT '{}',          -- subscribed now
    expires_at    timestamptz NOT NULL,                  -- the connection lifetime (24 h)
    detached_at   timestamptz,                           -- NULL while a connection holds it
    -- which connection holds it: a resume takes it over (the old connection may not have noticed
    -- its drop yet) and a late detach by an earlier holder changes nothing
    holder        int NOT NULL DEFAULT 1
);
CREATE INDEX wire_sessions_expiry ON access.wire_sessions (expires_at);
