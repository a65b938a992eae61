-- The credential that minted a wire ticket decides which browser origins may use it (spec 6.1):
-- `key` (an API key), `session` (the first-party site) or `card` (a card tool). A socket's session
-- keeps its ticket's kind, so a resume is held to the same origins.
ALTER TABLE access.wire_tickets ADD COLUMN kind text NOT NULL DEFAULT 'key' CHECK (kind IN ('key', 'session', 'card'));
ALTER TABLE access.wire_sessions ADD COLUMN kind text NOT NULL DEFAULT 'key' CHECK (kind IN ('key', 'session', 'card'));
