-- Finished answers, kept so their asker can read one again by its ID (GET /v1/answers/{answer_id},
-- api/answers/store.py) for a day; after that the body is dropped and the ID answers
-- `answer_expired` for a week, then the row goes. Only the answer is kept, never its question.
CREATE TABLE access.answers (
    answer_id   text PRIMARY KEY,
    subject     text NOT NULL,             -- whose: the mode and subject (account) of the key that asked
    body        bytea,                     -- the answer as served (JSON); null once expired
    created_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL
);
CREATE INDEX answers_expires ON access.answers (expires_at);
