-- Wire tickets (spec 2.12, 4.17): single-use, valid at most 60 seconds. Like API keys, only a
-- keyed hash of a ticket is kept, so a database dump cannot be replayed against the Wire.

CREATE TABLE access.wire_tickets (
    ticket_hash  bytea PRIMARY KEY CHECK (octet_length(ticket_hash) = 32),
    key_id       text NOT NULL,                           -- the key that minted it
    account_id   text NOT NULL,
    plan         text NOT NULL,
    mode         text NOT NULL CHECK (mode IN ('live', 'test')),   -- the dataset it serves
    transport    text NOT NULL CHECK (transport IN ('ws', 'sse')),
    topics       text[],                                  -- NULL: any topic the plan allows
    created_at   timestamptz NOT NULL,
    expires_at   timestamptz NOT NULL CHECK (expires_at > created_at),
    redeemed_at  timestamptz
);
-- minting deletes tickets long past their expiry through this index
CREATE INDEX wire_tickets_expiry ON access.wire_tickets (expires_at);
