-- Idempotency keys of POST calls that accept one (api/idempotency.py): the first answer to a
-- key is kept for a day and returned to a retry with the same request; the same key with another
-- request is refused (idempotency_key_reused), and while the first is still running a retry is
-- told so (idempotency_in_progress). `subject` is whose key it is (an account, or an address).
CREATE TABLE access.idempotency_keys (
    subject      text NOT NULL,
    key          text NOT NULL,
    operation    text NOT NULL,
    fingerprint  text NOT NULL,            -- a digest of the request (path and canonical body)
    status       int,                      -- null while the first request runs
    body         bytea,                    -- the first answer
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (subject, key)
);
CREATE INDEX idempotency_keys_created ON access.idempotency_keys (created_at);
