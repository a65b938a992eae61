"""nflverse weekly injury reports (one row per player, team and week).

Events per row: the player (registered as first seen; updated when a later row shows another
team, position or name) and the injury report, reported at `date_modified`, linked to the
team's game of that week when the schedule is known (left unlinked otherwise: a report
stands on its own). A designation (Questionable, Doubtful, Out) is also a news item written
from a template ("Patrick Mahomes (ankle) questionable for week 3"), and a player showing up
with another team a transaction item ("… now with the Denver Broncos"). `practice_status` is often a line break and spaces inside quotes: blank
after trimming, so no practice status. The designation in words and what it says of game day
come from `DESIGNATION`, which maps every report status the source uses.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import msgspec

from ingest import csv_rows
from ingest.csv_rows import BadValue, Row
from ingest.identity import nfl_team, player_id
from ingest.nflverse import COMPETITION, SOURCE, Roster, each_row
from ingest.records import Identity, Item, Parsed, Record, Resolution, WeekGame
from schemas import bounds
from schemas.events import AnyEvent, InjuryReported, NewsPublished

NAME = "nflverse-injuries"
REQUIRED = ("season", "team", "week", "gsis_id", "full_name", "date_modified")
# `report_status` -> (`status`: the designation in words, `game_day`: active, inactive or out),
# for every value the source uses (docs/ingest.md, "Injury reports"). The designations are the
# NFL's: Out "will not play", Doubtful "unlikely to participate", Questionable "uncertain to
# play"; Note is a listing without an injury designation (rest, personal, ...); a row with no
# report status is a practice-report entry with no game status at all. `game_day` is what the
# designation says of game day (the report is not the game-day inactive list): out; inactive
# when unlikely to play; active when the player is not ruled out (Questionable keeps its
# uncertainty in `status`).
DESIGNATION: dict[str | None, tuple[str, str]] = {
    "Out": ("Out", "out"),
    "Doubtful": ("Doubtful", "inactive"),
    "Questionable": ("Questionable", "active"),
    "Note": ("Note", "active"),
    None: ("Not designated", "active"),
}
DESIGNATIONS = ("Questionable", "Doubtful", "Out")  # a report status that is news (Note is not)
INJURY_NEWS = "{name} ({injury}) {designation} for week {week}"
INJURY_NEWS_NO_DETAIL = "{name} {designation} for week {week}"
TRANSACTION_NEWS = "{name} now with the {team}"


def parse(path: Path, ingest_ts: datetime, rows: list[Row] | None = None) -> Parsed:
    table = csv_rows.read_table(path, REQUIRED)
    chosen = table.rows if rows is None else rows
    return Parsed(NAME, path.name, len(chosen), _items(chosen, len(table.header), ingest_ts))


def reported_at(row: Row) -> datetime:
    value = csv_rows.required(row, "date_modified")
    try:
        at = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise BadValue(f"date_modified is not a timestamp: {value[:40]!r}") from None
    if at.tzinfo is None:
        raise BadValue(f"date_modified has no time zone: {value[:40]!r}")
    if problem := bounds.year_problem(at, "date_modified"):
        raise BadValue(problem)
    return at


def _items(rows: list[Row], width: int, ingest_ts: datetime) -> Iterator[Item]:
    roster = Roster(ingest_ts)
    return each_row(rows, width, lambda index, location, row: (_row(index, location, row, roster, ingest_ts),))


def _row(index: int, location: str, row: Row, roster: Roster, ingest_ts: datetime) -> Record:
    gsis = csv_rows.required(row, "gsis_id")
    season_text = csv_rows.season(row)
    season = int(season_text)
    week = csv_rows.integer(row, "week", 0, bounds.WEEK_MAX)
    team = nfl_team(csv_rows.required(row, "team"))
    name = csv_rows.required_name(row, "full_name")
    position = csv_rows.text(row, "position")
    at = reported_at(row)
    status = csv_rows.name(row, "report_status")
    # a value the source has not used before keeps its words, with no game-day reading
    words, game_day = DESIGNATION.get(status, (status, None))
    report = InjuryReported(
        source=SOURCE, source_id=f"{gsis}/{season}/{week}", source_ts=at, ingest_ts=ingest_ts,
        player_id=player_id(COMPETITION, gsis), team_id=team.team_id, season=season, week=week,
        game_type=csv_rows.text(row, "game_type"), status=words,
        detail=csv_rows.name(row, "report_primary_injury") or csv_rows.name(row, "practice_primary_injury"),
        secondary_detail=csv_rows.name(row, "report_secondary_injury") or csv_rows.name(row, "practice_secondary_injury"),
        practice=csv_rows.name(row, "practice_status"), game_day=game_day, reported_at=at,
    )
    pid = report.player_id
    query = WeekGame(COMPETITION, season_text, week, team.team_id) if week is not None else None

    def build(res: Resolution) -> list[AnyEvent]:
        events, moved_from = roster.observe(gsis, pid, name, position, team.team_id, at)
        if moved_from is not None:
            events.append(NewsPublished(
                source=SOURCE, source_id=report.source_id, source_ts=at, ingest_ts=ingest_ts, player_id=pid,
                kind="transaction", headline=TRANSACTION_NEWS.format(name=name, team=team.name)[:200],
                published_at=at,
            ))
        game = res.week_game(query) if query is not None else None
        events.append(report if game is None else _with_game(report, game.game_id))
        if status in DESIGNATIONS and week is not None:
            template = INJURY_NEWS if report.detail else INJURY_NEWS_NO_DETAIL
            headline = template.format(name=name, injury=(report.detail or "").lower(), designation=status.lower(), week=week)
            events.append(NewsPublished(
                source=SOURCE, source_id=report.source_id, source_ts=at, ingest_ts=ingest_ts, player_id=pid,
                kind="injury", headline=" ".join(headline.split())[:200], published_at=at,
            ))
        return events

    return Record(index, location, row.raw, build, week_games=(query,) if query else (),
                  identities=(Identity("player", SOURCE, gsis, pid),))


def _with_game(report: InjuryReported, game_id: str) -> InjuryReported:
    return msgspec.structs.replace(report, game_id=game_id)
