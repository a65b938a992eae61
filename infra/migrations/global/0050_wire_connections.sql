-- Open Wire connections (spec 8: per address and per account), counted across API processes.
-- Each connection refreshes `seen_at` with its pings; rows of a process that died stop being
-- refreshed and are not counted (or kept) once stale.

CREATE TABLE access.wire_connections (
    id          text PRIMARY KEY,
    address     text NOT NULL,        -- the keyed hash of the client's address
    account_id  text NOT NULL,
    seen_at     timestamptz NOT NULL
);
CREATE INDEX wire_connections_address ON access.wire_connections (address, seen_at);
CREATE INDEX wire_connections_account ON access.wire_connections (account_id, seen_at);
