"""Snapshot payloads built from read-model rows, in the same shape as the deltas' `data`
(docs/wire-deltas.md), so a client applies deltas straight onto a snapshot. Pure: rows in,
payloads out, as the structs the deltas carry (`schemas.wire.DATA_BY_TYPE`).

A `game:` snapshot is the `game.state` payload; a `market:` snapshot is the `market.update`
payload with every line (none removed). Folding a topic's deltas from seq 1 gives the same
payload as its snapshot at that seq (tested).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import date, datetime, timezone
from typing import Any

from domain.devig import DEFAULT_METHOD  # the one method deltas carry
from schemas.read_models import LineData, record, wire_line
from schemas.wire import ExpectedLatency, GameStateData, Liveness, MarketData, Score



def _number(value: Any) -> float | None:
    return None if value is None else float(value)


def _utc(value: datetime | None) -> datetime | None:
    return None if value is None else value.astimezone(timezone.utc)


def game_snapshot(row: Mapping[str, Any]) -> GameStateData:
    """`game.state` data from a `games` row (its `status` the one served)."""
    home, away = row["score_home"], row["score_away"]
    kickoff_date = row["kickoff_date"]
    return GameStateData(
        game_id=row["id"], status=row["status"],
        score=None if home is None and away is None else Score(home=home, away=away),
        period=row["period"], clock=row["clock"], possession=row["possession"], last_play=row["last_play"],
        kickoff_at=_utc(row["kickoff_at"]),
        kickoff_date=kickoff_date.isoformat() if isinstance(kickoff_date, date) else kickoff_date,
        venue=row["venue"],
    )


def market_snapshot(row: Mapping[str, Any], lines: Iterable[Mapping[str, Any]]) -> MarketData:
    """`market.update` data with all lines, from a `markets` row and its `market_lines` rows
    (`outcomes` decoded; the columns of `LineData`, which the lines are decoded into)."""
    return MarketData(
        id=row["id"], game_id=row["game_id"], kind=row["kind"], type=row["type"], period=row["period"],
        participant_id=row["participant_id"], name=row["name"], status=row["status"],
        status_reason=row["status_reason"],
        main_point=_number(row["main_point"]), books=row["books"],
        lines=sorted((wire_line(record(LineData, line), DEFAULT_METHOD) for line in lines),
                     key=lambda line: line.line_key),
        removed_lines=[],
    )


def apply_delta(state: dict[str, Any] | None, delta_type: str, data: dict[str, Any]) -> dict[str, Any]:
    """A client's view after one delta: game data replaces the state; market data replaces the
    header and upserts or removes the lines it names."""
    if delta_type == "game.state" or state is None:
        out = dict(data)
        if delta_type != "game.state":
            out["lines"] = sorted(out["lines"], key=lambda line: line["line_key"])
            out["removed_lines"] = []
        return out
    lines = {line["line_key"]: line for line in state["lines"]}
    for key in data["removed_lines"]:
        lines.pop(key, None)
    for line in data["lines"]:
        lines[line["line_key"]] = line
    return {**data, "lines": [lines[k] for k in sorted(lines)], "removed_lines": []}


def freshness(stale_after_ms: int | None, source: str, as_of: datetime, now: datetime) -> tuple[ExpectedLatency, Liveness]:
    """`expected_latency` and `liveness` of a snapshot. The expected latency is the
    interval the topic's values are refreshed within (the REST `stale_after_ms`); liveness says
    whether the newest change is within that limit (`live`), older (`stale`), or settled (a
    final game and its markets: nothing more will change)."""
    limit = None if stale_after_ms is None else stale_after_ms / 1000
    if limit is None:
        state = "settled"
    else:
        state = "live" if (now - as_of).total_seconds() <= limit else "stale"
    return (
        ExpectedLatency(seconds=limit, basis="refresh_interval", source=source),
        Liveness(state=state, as_of=_utc(as_of), limit_seconds=limit),
    )
