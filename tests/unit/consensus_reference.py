"""A straightforward reference computation of a market's consensus, written from the rules in
the projection issue and nothing else (no code shared with the projector), for the tests."""

from __future__ import annotations

import statistics
from decimal import Decimal

ORDER = ("home", "away", "draw", "over", "under", "yes", "no")


def to_decimal(price: Decimal, fmt: str) -> float:
    if fmt == "decimal":
        return float(price)
    a = Decimal(price)
    return float(1 + (a / 100 if a > 0 else Decimal(100) / -a))


def reference_market(events, window_seconds: float):
    """events: PriceQuoted / MarketSuspended / MarketReopened of ONE market, any order.
    Returns (lines: {point text: dict}, main point text or None, status)."""
    latest = {}  # (point, book) -> quote
    suspensions = {}  # book or None -> newest suspend/reopen
    for e in events:
        stamp = (e.source_ts, e.event_id)
        if type(e).__name__ == "PriceQuoted":
            key = ("" if e.point is None else format(e.point.normalize(), "f"), e.book)
            if key not in latest or (latest[key].source_ts, latest[key].event_id) < stamp:
                latest[key] = e
        else:
            who = e.book
            if who not in suspensions or (suspensions[who].source_ts, suspensions[who].event_id) < stamp:
                suspensions[who] = e

    def suspended(q) -> bool:
        candidates = [s for s in (suspensions.get(None), suspensions.get(q.book)) if s is not None]
        if not candidates:
            return False
        newest = max(candidates, key=lambda s: (s.source_ts, s.event_id))
        return type(newest).__name__ == "MarketSuspended" and (newest.source_ts, newest.event_id) > (
            q.source_ts, q.event_id)

    lines = {}
    points = sorted({p for p, _ in latest})
    for point in points:
        quotes = sorted((q for (p, _), q in latest.items() if p == point), key=lambda q: q.book)
        usable = []
        for q in quotes:
            if q.kind == "exchange" or suspended(q):
                continue
            sels = [o.selection for o in q.outcomes]
            if len(sels) < 2 or len(set(sels)) != len(sels):
                continue
            usable.append(q)
        if not usable:
            continue
        sets = [tuple(sorted(o.selection for o in q.outcomes)) for q in usable]
        usual = max(set(sets), key=lambda s: (sets.count(s), len(s), s))
        complete = [q for q, s in zip(usable, sets) if s == usual]
        newest = max(q.source_ts for q in complete)
        eligible = [q for q in complete if (newest - q.source_ts).total_seconds() <= window_seconds]
        selections = sorted(usual, key=lambda s: (ORDER.index(s) if s in ORDER else len(ORDER), s))
        per_book_probs, per_book_prices = [], []
        for q in eligible:
            prices = {o.selection: to_decimal(o.price, o.price_format) for o in q.outcomes}
            implied = {s: 1 / prices[s] for s in selections}
            total = sum(implied.values())
            per_book_probs.append({s: implied[s] / total for s in selections})
            per_book_prices.append(prices)
        medians = {s: statistics.median([b[s] for b in per_book_probs]) for s in selections}
        norm = sum(medians.values())
        probs = {s: medians[s] / norm for s in selections}
        prices = {s: statistics.median([b[s] for b in per_book_prices]) for s in selections}
        hold = 1 - 1 / sum(1 / prices[s] for s in selections)
        lines[point] = {"books": len(eligible), "probability": probs, "price": prices, "hold": hold,
                        "selections": selections, "newest": max(q.source_ts for q in eligible),
                        # one bookmaker's price is no consensus: such a line's values are not served
                        "served": len(eligible) >= 2}

    # main line: only lines whose newest eligible quote is within the window of the market's
    # newest decide; a served line first, then most books, then the newest quotes, then closest to
    # even, then the lower point
    market_newest = max((line["newest"] for line in lines.values()), default=None)
    fresh = [p for p, line in lines.items() if (market_newest - line["newest"]).total_seconds() <= window_seconds]

    def rank(point):
        line = lines[point]
        n = len(line["selections"])
        even = sum(abs(p - 1 / n) for p in line["probability"].values())
        return (not line["served"], -line["books"], -line["newest"].timestamp(), even,
                Decimal(point) if point else Decimal(0))

    main = min(fresh, key=rank) if fresh else None
    all_quotes = list(latest.values())
    if all_quotes:
        status = "suspended" if all(suspended(q) for q in all_quotes) else "open"
    else:
        s = suspensions.get(None)
        status = "suspended" if s is not None and type(s).__name__ == "MarketSuspended" else "open"
    return lines, main, status
