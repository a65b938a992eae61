-- A stream (GET /v1/stream/{topic}) keeps a session too, so that a browser's EventSource can
-- reconnect by itself: its URL still carries the ticket that opened it, which is spent, so the
-- ticket's keyed hash names the stream's session and serves as its resume grant (120 s after a
-- drop, that topic only). NULL for socket sessions, which resume with their own token.
ALTER TABLE access.wire_sessions ADD COLUMN stream_ticket bytea UNIQUE;
