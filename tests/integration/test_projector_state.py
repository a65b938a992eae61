"""The working state survives a restart exactly: loaded from the rocksdict cache when its
watermark matches Postgres, from Postgres (`projector_state` + `book_prices`) otherwise, and
both give the state the projector had in memory."""

from __future__ import annotations

from infra.db import connect
from projections.cache import MEMTABLE_BYTES, MEMTABLES, StateCache, cache_path, watermark
from tests.support import projection_events as ev
from tests.support.projection_harness import projector, run_to_end

GAMES = ev.schedule(4)


def log():
    g = GAMES[0].game_id
    p = ev.player("00-1", "A Player")
    return [
        ev.team("KC", aliases=["Chiefs"]), *GAMES, p, *ev.season_quotes(GAMES, ("a", "b", "c"), 6, seed=3),
        ev.suspended(g, ev.quote(g, "a", [-110, -110], market_type="totals", point="47.5").market_id, book="b",
                     minute=30),
        ev.state(g, "live", minute=31, home=3, away=0), ev.injury(p.player_id, "Out", minute=2),
        ev.news(p.player_id, "Signed", minute=3), ev.stat_line(p.player_id, g, 1, {"yards": 12}, minute=4),
    ]


async def test_cache_and_postgres_give_the_state_the_projector_had(settings, topics):
    await ev.publish(settings, log())
    async with projector(settings) as p:
        await run_to_end(p)
        in_memory = dict(p.core.states)
        tracking = dict(p.core.tracking)
    async with projector(settings) as cached:
        assert cached.stats.loaded_from == "cache"
        assert cached.core.states == in_memory and cached.core.tracking == tracking
    # a cache whose watermark Postgres does not match is ignored
    conn = await connect(settings.database_url)
    try:
        await conn.execute("UPDATE live.tracking SET last_offset = last_offset WHERE true")  # same values
        await conn.execute("UPDATE live.projection_meta SET generation = generation + 1")
    finally:
        await conn.close()
    async with projector(settings) as reloaded:
        assert reloaded.stats.loaded_from == "postgres"
        assert reloaded.core.states == in_memory
        assert await run_to_end(reloaded) == 0


def test_the_cache_memtable_stays_bounded_however_much_is_written(tmp_path):
    """A catch-up writes the touched state after every batch; the cache's memory must not grow
    with what has been written (RocksDB's 64 MiB default memtable did), and what was written
    last is what it loads."""
    cache = StateCache(cache_path(tmp_path, "live"))
    try:
        batch = 2 << 20  # bytes of state parts per write, about a 20,000-event catch-up batch's
        parts = 256
        written = 0
        largest = 0
        for n in range(40):  # 80 MiB in all, more than the default memtable holds before a flush
            value = n.to_bytes(4, "big") * (batch // parts // 4)
            cache.write(((f"game:{k}", value) for k in range(parts)), (), watermark("live", "e", n, {}))
            written += batch
            largest = max(largest, cache.memtable_bytes())
        assert written > 2 * 32 << 20
        # the configured bound, and a budget that does not follow the constants (the default held 64 MiB)
        assert largest <= MEMTABLE_BYTES * MEMTABLES + batch, largest
        assert largest <= 16 << 20, largest
        parts_read, quotes = cache.load()
        assert quotes == [] and len(parts_read) == parts
        assert {value[:4] for _, value in parts_read} == {(39).to_bytes(4, "big")}
        assert cache.watermark() == watermark("live", "e", 39, {})
    finally:
        cache.close()
