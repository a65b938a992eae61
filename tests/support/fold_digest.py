"""Fold a varied log through the batch core and print, as JSON, a digest of everything the fold
produced (rows per table, deleted lines, seasons, book quotes, Wire envelopes in order, final
states) and which projections modules ran compiled.

`python -m tests.support.fold_digest [--sources]`: `--sources` imports the sources of compiled
modules instead of their builds. tests/unit/test_compiled_core.py runs it both ways; the
digests must be equal (run with a fixed PYTHONHASHSEED: some row lists follow set order).
"""

from __future__ import annotations

import sys


def _log(seed: int) -> list:
    import random
    from datetime import date, timedelta

    from schemas.natural_keys import market_id
    from tests.support import projection_events as ev

    rng = random.Random(seed)
    games = [ev.game(home="KC", away=a, day=date(2024, 9, 5) + timedelta(days=7 * i))
             for i, a in enumerate(["BAL", "CIN", "ATL", "DEN"])]
    players = [ev.player(f"00-{i}", f"Player {i}", minute=i) for i in range(4)]
    events: list = [ev.team("KC", aliases=["Chiefs"]), ev.team("BAL"), *games, *players]
    events += ev.season_quotes(games, [f"book{i}" for i in range(5)], 6, seed=seed)
    for minute in range(400):
        g = rng.choice(games)
        mtype = rng.choice(["h2h", "spreads", "totals", "h2h_3way"])
        mid = market_id(g.game_id, "game", "h2h" if mtype == "h2h_3way" else mtype, "full", None)
        at = minute + rng.random()
        roll = rng.random()
        if roll < 0.55:
            n = 3 if mtype == "h2h_3way" else 2
            point = None if mtype.startswith("h2h") else rng.choice(["-3", "-3.5", "47.5", "0"])
            prices = [rng.choice([-150, -120, -110, -105, 100, 110, 130, 250]) for _ in range(n)]
            if rng.random() < 0.05:
                prices[0] = 50  # not a price: the quote cannot price its line
            events.append(ev.quote(g.game_id, rng.choice("abcdef"), prices, market_type=mtype, point=point,
                                   minute=at, kind=rng.choice(["game", "game", "exchange"])))
        elif roll < 0.65:
            events.append(ev.suspended(g.game_id, mid, book=rng.choice([None, "a", "b"]), minute=at))
        elif roll < 0.72:
            events.append(ev.reopened(g.game_id, mid, book=rng.choice([None, "a", "b"]), minute=at))
        elif roll < 0.8:
            events.append(ev.state(g.game_id, rng.choice(["live", "final"]), minute=at,
                                   home=rng.randint(0, 40), away=rng.randint(0, 40)))
        elif roll < 0.87:
            events.append(ev.news(rng.choice(players).player_id, f"news {minute}", minute=at))
        elif roll < 0.94:
            p = rng.choice(players)
            events.append(ev.stat_line(p.player_id, g.game_id, 1 + minute % 4, {"yards": rng.randint(0, 300)},
                                       minute=at))
        else:
            events.append(ev.injury(rng.choice(players).player_id, "Questionable", week=1 + minute % 4, minute=at))
    rng.shuffle(events)  # out of order, as feeds are: newest-wins rules must hold either way
    return events


def digest(seed: int = 7, batch: int = 97) -> dict:
    import hashlib
    from datetime import datetime, timezone

    import msgspec

    from projections.batch import BatchCore
    from projections.compiled import loaded
    from projections.lines import fields_of
    from schemas.events import encode, event_key, event_topic

    class Rec(msgspec.Struct):
        topic: str
        partition: int
        offset: int
        value: bytes

    records, offsets = [], {}
    for e in _log(seed):
        tp = (event_topic(e), len(event_key(e)) % 2)
        offsets[tp] = offsets.get(tp, -1) + 1
        records.append(Rec(tp[0], tp[1], offsets[tp], encode(e)))
    core = BatchCore(window_us=30 * 60 * 1_000_000)
    emit_ts = datetime(2026, 1, 1, tzinfo=timezone.utc)
    h = hashlib.sha256()
    deltas = 0
    for i in range(0, len(records), batch):
        b = core.fold(records[i:i + batch], emit_ts)
        deltas += len(b.envelopes)
        for envelope in b.envelopes:
            h.update(repr(envelope).encode())
        for table, rows in sorted(b.rows.rows.items()):
            h.update(repr((table, sorted(map(repr, rows)))).encode())
        h.update(repr((b.rows.lines_deleted, sorted(b.rows.seasons), sorted(map(repr, b.rows.quotes)))).encode())
    for key in sorted(core.states):
        h.update(msgspec.msgpack.encode(core.states[key], enc_hook=fields_of))
    return {"digest": h.hexdigest(), "events": len(records), "deltas": deltas, "compiled": loaded()}


def main(argv: list[str]) -> None:
    import json

    if "--sources" in argv:
        from projections.compiled import sources_first

        sources_first()
    print(json.dumps(digest()))


if __name__ == "__main__":
    main(sys.argv[1:])
