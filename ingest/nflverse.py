"""What the three nflverse adapters share: the source's names, the per-row checks, and the
roster that turns "this row names player X" into registration and update events."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from datetime import datetime

from ingest.csv_rows import Row, row_problem
from ingest.records import RECORD_ERRORS, Item, Rejected, reason_of
from schemas.events import AnyEvent, KnownBy, PlayerRegistered, PlayerUpdated

SOURCE = "nflverse"
COMPETITION = "nfl"
SPORT = "american_football"


def each_row(rows: list[Row], width: int, parse: Callable[[int, str, Row], Iterable[Item]]) -> Iterator[Item]:
    """Parse every row; a row of the wrong width, with a field it cannot hold or with a bad value
    is rejected with its reason (and the file goes on)."""
    for index, row in enumerate(rows):
        location = f"line {row.line}"
        if row.width != width:
            yield Rejected(index, location, row.raw, f"expected {width} fields, found {row.width}")
            continue
        problem = row_problem(row)
        if problem:
            yield Rejected(index, location, row.raw, problem)
            continue
        try:
            # a row's items are all made before any is handed on: a row is rejected whole or not
            items = list(parse(index, location, row))
        except RECORD_ERRORS as exc:
            yield Rejected(index, location, row.raw, reason_of(exc))
            continue
        yield from items


class Roster:
    """Who each player is as the file last said: a player is registered when first seen and
    updated when a later row shows another name, position or team."""

    def __init__(self, ingest_ts: datetime) -> None:
        self.ingest_ts = ingest_ts
        self.first_seen: dict[str, PlayerRegistered] = {}
        self.current: dict[str, tuple[str, str | None, str]] = {}

    def observe(self, gsis: str, player_id: str, name: str, position: str | None, team_id: str,
                at: datetime) -> tuple[list[AnyEvent], str | None]:
        """The player's events for a row seen at `at`, and the team they moved from (if they did)."""
        registered = self.first_seen.get(gsis)
        if registered is None:
            registered = self.first_seen[gsis] = PlayerRegistered(
                source=SOURCE, source_id=gsis, source_ts=at, ingest_ts=self.ingest_ts, player_id=player_id,
                sport=SPORT, competition=COMPETITION, name=name, position=position, team_id=team_id,
                known_by=[KnownBy(SOURCE, gsis)],
            )
        events: list[AnyEvent] = [registered]
        now = (name, position, team_id)
        before = self.current.setdefault(gsis, now)
        if now == before:
            return events, None
        self.current[gsis] = now
        events.append(PlayerUpdated(
            source=SOURCE, source_id=gsis, source_ts=at, ingest_ts=self.ingest_ts, player_id=player_id,
            name=name, position=position, team_id=team_id,
        ))
        return events, (before[2] if before[2] != team_id else None)
