"""nflverse weekly player stats (`load_player_stats()`, one row per player and week).

Events per row: the player (registered as first seen in the file; updated when a later row
shows another team or position) and the stat line, linked to the game the player's team
played that season and week. A row whose game is not known yet is dead-lettered (ingest the
schedule first; re-ingesting the stats file afterwards adds them). Stat values keep their
exact digits: integers stay integers, the rest are decimals; empty (undefined) ratios are
left out. The file gives no time for a line: its `source_ts` is an ordering time (the game's
kickoff + `FINAL_AFTER`), never served as the source's time; a player's identity from a row is
as of the game's kickoff.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

from ingest import csv_rows
from ingest.csv_rows import BadValue, Row
from ingest.identity import Team, nfl_team, player_id
from ingest.nflverse import COMPETITION, SOURCE, Roster, each_row
from ingest.nflverse_games import FINAL_AFTER
from ingest.records import FormatError, Identity, Item, Parsed, Record, Rejected, Resolution, WeekGame
from schemas import bounds
from schemas.events import AnyEvent, StatLineRecorded, StatValue

NAME = "nflverse-player-stats"
SEASON_TYPES = {"REG": "regular", "POST": "postseason", "PRE": "preseason"}
# identity columns; every other column is a stat. Newer nflverse releases say `team`
IDENTITY = frozenset({
    "player_id", "player_name", "player_display_name", "position", "position_group", "headshot_url",
    "recent_team", "team", "season", "week", "season_type", "opponent_team", "opponent",
})
REQUIRED = ("player_id", "season", "week")


def parse(path: Path, ingest_ts: datetime, rows: list[Row] | None = None) -> Parsed:
    table = csv_rows.read_table(path, REQUIRED)
    team_column = next((c for c in ("recent_team", "team") if c in table.header), None)
    if team_column is None:
        raise FormatError(f"{path.name}: missing column recent_team (or team)")
    stat_columns = [c for c in table.header if c not in IDENTITY]
    chosen = table.rows if rows is None else rows
    return Parsed(NAME, path.name, len(chosen), _items(chosen, len(table.header), team_column, stat_columns, ingest_ts))


def _items(rows: list[Row], width: int, team_column: str, stat_columns: list[str], ingest_ts: datetime) -> Iterator[Item]:
    roster = Roster(ingest_ts)
    return each_row(rows, width, lambda index, location, row: (
        _row(index, location, row, team_column, stat_columns, roster, ingest_ts),))


def _row(
    index: int, location: str, row: Row, team_column: str, stat_columns: list[str], roster: Roster,
    ingest_ts: datetime,
) -> Record:
    gsis = csv_rows.required(row, "player_id")
    season = csv_rows.season(row)
    week = csv_rows.integer(row, "week", 0, bounds.WEEK_MAX)
    if week is None:
        raise BadValue("week is empty")
    team: Team = nfl_team(csv_rows.required(row, team_column))
    name = csv_rows.name(row, "player_display_name") or csv_rows.required_name(row, "player_name")
    position = csv_rows.text(row, "position")
    raw_type = csv_rows.text(row, "season_type")
    season_type = SEASON_TYPES.get(raw_type) if raw_type else None
    if raw_type and season_type is None:
        raise BadValue(f"unknown season_type {raw_type[:40]!r}")
    stats: dict[str, StatValue] = {}
    for column in stat_columns:
        value = csv_rows.text(row, column)
        if value is not None:
            stats[column] = csv_rows.number(value, column)
    # the opponent is not used to find the game: one source row names its own team as the
    # opponent (CHI vs CHI, 2024 week 1); the team and week name the game unambiguously
    pid = player_id(COMPETITION, gsis)
    query = WeekGame(COMPETITION, season, week, team.team_id)
    line_id = f"{gsis}/{season}/{week}"

    def build(res: Resolution) -> list[AnyEvent] | Rejected:
        game = res.week_game(query)
        if game is None:
            return Rejected(index, location, row.raw,
                            f"no known game for {team.key} in {season} week {week} (ingest the schedule first)")
        # the player was on this team as of the game: its kickoff is the source's time for that; the
        # line itself has no time in the file, so it is ordered after the game (kickoff + 4 h) and
        # served with no source time (schemas.reference.untimed_result)
        at = game.kickoff_at + FINAL_AFTER
        events, _ = roster.observe(gsis, pid, name, position, team.team_id, game.kickoff_at)
        events.append(StatLineRecorded(
            source=SOURCE, source_id=line_id, source_ts=at, ingest_ts=ingest_ts, player_id=pid,
            team_id=team.team_id, game_id=game.game_id, season=season, week=week, season_type=season_type,
            stats=stats,
        ))
        return events

    return Record(index, location, row.raw, build, week_games=(query,),
                  identities=(Identity("player", SOURCE, gsis, pid),))
