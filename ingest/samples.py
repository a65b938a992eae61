"""`svc sample load`: every sample file into `live`, and the sandbox day's pre-game part into
`test`; the reference library and the strategy registry into both. Idempotent: a second load appends nothing (every event
is a duplicate).

The files live in `ingest/samples/` (with their provenance README), so a clone needs nothing
outside the repository. Order matters for linking: the schedule first, so that player stats
and injury reports find their games.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

from infra.settings import Settings
from ingest import nflverse_games, nflverse_injuries, nflverse_player_stats, odds_api
from ingest.event_log import open_event_log
from ingest.library import ingest_library, library_root
from ingest.strategies import ingest_registry, registry_root
from ingest.pipeline import ingest
from ingest.records import Parsed
from ingest.sandbox.play import load_pregame
from ingest.summary import Summary

SAMPLES = Path(__file__).resolve().parent / "samples"
Parser = Callable[[Path, datetime], Parsed]


def live_files(samples: Path = SAMPLES) -> list[tuple[Parser, Path]]:
    nfl = samples / "nflverse"
    return [
        (nflverse_games.parse, nfl / "games_2023_2025.csv"),
        (nflverse_player_stats.parse, nfl / "player_stats_2024_weeks01-03.csv"),
        (nflverse_injuries.parse, nfl / "injuries_2024_weeks01-10.csv"),
        *((odds_api.parse, p) for p in sorted((samples / "oddsapi").glob("*.json"))),
    ]


async def load(
    settings: Settings, live: bool = True, test: bool = True, progress: Callable[[str, Summary], None] | None = None,
) -> dict[str, Summary]:
    """Per file (and `sandbox pre-game`, and the reference library per dataset), the run's summary."""
    out: dict[str, Summary] = {}
    if live:
        async with open_event_log(settings, "live") as log:
            out["live/reference library"] = await ingest_library(library_root(), log, settings)
            out["live/strategy registry"] = await ingest_registry(registry_root(), log, settings)
            for parse, path in live_files():
                name = f"live/{path.parent.name}/{path.name}"
                parsed = parse(path, datetime.now(timezone.utc))
                out[name] = await ingest(parsed, log, (lambda s, n=name: progress(n, s)) if progress else None)
    if test:
        out["test/sandbox pre-game"] = await load_pregame(settings, SAMPLES)
        async with open_event_log(settings, "test") as log:  # test keys read the library too
            out["test/reference library"] = await ingest_library(library_root(), log, settings)
            out["test/strategy registry"] = await ingest_registry(registry_root(), log, settings)
    return out
