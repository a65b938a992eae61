-- The partial index on published entries drew the planner away from the GIN indexes: it
-- rechecked trigram similarity on every entry (~15 ms) instead of the few candidates the
-- trigram and full-text indexes give (< 1 ms). Topic order sorts a few hundred rows without it.
DROP INDEX reference_entries_topic;
