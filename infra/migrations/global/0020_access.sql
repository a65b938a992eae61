-- Access: accounts, API keys and credit usage (spec 5, 8). Shared by both datasets; a key's
-- `mode` says which dataset it reads.

CREATE TABLE access.accounts (
    id                  text PRIMARY KEY,                 -- acct_
    name                text NOT NULL UNIQUE,
    plan                text NOT NULL CHECK (plan IN ('free', 'pro', 'developer', 'scale')),
    -- billing months start on this day of the month (clamped to short months), 00:00 UTC
    billing_anchor_day  int NOT NULL CHECK (billing_anchor_day BETWEEN 1 AND 31),
    created_at          timestamptz NOT NULL DEFAULT now()
);

-- Only a keyed hash of a key is kept: HMAC-SHA256(server secret, key). The key carries `handle`
-- so its row is found by index and then compared in constant time.
CREATE TABLE access.api_keys (
    id          text PRIMARY KEY,                         -- key_ (shown by `svc keys list`)
    handle      text NOT NULL UNIQUE,
    key_hash    bytea NOT NULL CHECK (octet_length(key_hash) = 32),
    account_id  text NOT NULL REFERENCES access.accounts (id),
    mode        text NOT NULL CHECK (mode IN ('live', 'test')),
    scopes      text[] NOT NULL DEFAULT '{}',
    created_at  timestamptz NOT NULL DEFAULT now(),
    revoked_at  timestamptz
);
CREATE INDEX api_keys_account ON access.api_keys (account_id);

-- Credits used per subject, mode and period; one atomic upsert per charged call.
-- subject: `acct_...`, or `addr:` + a keyed hash of a key-less caller's address.
-- period: `dYYYYMMDD` (key-less UTC day) or `mYYYYMMDD` (billing month starting that day).
CREATE TABLE access.usage (
    subject     text NOT NULL,
    mode        text NOT NULL CHECK (mode IN ('live', 'test')),
    period      text NOT NULL,
    used        bigint NOT NULL CHECK (used >= 0),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (subject, mode, period)
);
