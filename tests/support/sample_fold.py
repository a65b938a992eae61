"""The real sample files through the adapters and the reducers, in memory (no broker, no
Postgres): what the projector would hold for each key after ingesting them in `svc sample
load` order. Pure tests of figures against the source files start here; the API tests' database
is these events written by the real projector (`projection_harness.project`).

The IDs tests look up are the ones ingest gave (a game by the source's own ID), never rebuilt
from what a test believes the resolver does."""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import lru_cache
from typing import Any

from infra.settings import Settings
from ingest.batches import collect
from ingest.resolution import MemoryResolver
from ingest.samples import SAMPLES, live_files
from projections.reducers import reduce
from schemas.events import GameScheduled, event_key
from schemas.natural_keys import player_id, team_id

INGESTED = datetime(2026, 1, 1, tzinfo=timezone.utc)
WINDOW_US = Settings().consensus_window_seconds * 1_000_000


NFLVERSE = "nflverse"
ODDS_API = "The Odds API"
NFL_OPENER_2022 = "nfl_2022_h2h_spreads_totals_american.json"  # 19 books: a real multi-book consensus
EPL_2024 = "soccer_epl_2024_h2h_decimal.json"


@lru_cache(maxsize=1)
def file_events() -> dict[str, tuple]:
    """Each live sample file's events (by file name), ingested in order by one resolver."""
    resolver = MemoryResolver()
    return {path.name: tuple(collect(parse(path, INGESTED).items, resolver).events) for parse, path in live_files()}


@lru_cache(maxsize=1)
def sample_events() -> tuple:
    return tuple(e for events in file_events().values() for e in events)


@lru_cache(maxsize=1)
def _games_by_source() -> dict[tuple[str, str], str]:
    return {(k.source, k.source_id): e.game_id for e in sample_events() if isinstance(e, GameScheduled)
            for k in e.known_by}


def game_of(source: str, source_id: str) -> str:
    """The game ID ingest gave the game `source` calls `source_id`."""
    return _games_by_source()[(source, source_id)]


def nfl_game_id(row: dict[str, str]) -> str:
    """The game of an nflverse schedule row."""
    return game_of(NFLVERSE, row["game_id"])


def nfl_team(abbr: str) -> str:
    return team_id("nfl", abbr)


def nfl_player(gsis: str) -> str:
    return player_id("nfl", gsis)


@dataclass(frozen=True)
class OddsApiGame:
    """The 2022 NFL opener with its per-book prices, for independent recomputation in tests."""

    game_id: str
    event: dict[str, Any]


@dataclass(frozen=True)
class Sample:
    """The sample files as tests read them: the nflverse schedule rows and the 2022 opener."""

    schedule: list[dict[str, str]]
    opener: OddsApiGame


@lru_cache(maxsize=1)
def sample() -> Sample:
    with open(SAMPLES / "nflverse" / "games_2023_2025.csv", newline="") as f:
        schedule = list(csv.DictReader(f))
    with open(SAMPLES / "oddsapi" / NFL_OPENER_2022) as f:
        event = json.load(f)[0]  # Buffalo Bills at Los Angeles Rams, 2022-09-09
    return Sample(schedule=schedule, opener=OddsApiGame(game_of(ODDS_API, event["id"]), event))


@lru_cache(maxsize=1)
def sample_states() -> dict:
    """Each log key's state after every sample event, folded in file order."""
    states: dict = {}
    for e in sample_events():
        key = event_key(e)
        states[key], _ = reduce(states.get(key), e, WINDOW_US)
    return states
