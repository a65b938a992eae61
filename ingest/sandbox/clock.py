"""The sandbox clock: the sandbox day (2024-09-08, New York) played on the wall clock.

A run of `svc sandbox play` maps the day onto real time from the moment it starts (its anchor):
the books' opening at 09:00 New York time is the anchor, and every later instant of the day
comes `speed` times sooner than it did (at 60x the 14 h 50 min day takes under 15 minutes;
`max` packs it into one second). Kickoffs, game states, price moves, finals and stat lines
carry these times, so a sandbox game is `live` by the clock while it is played, and the Wire's
liveness and REST's `stale_after_ms` read it as they read live data.

Each run has times of its own, so its events are new events (an event's ID covers its time) that
win over the previous run's (the newest source time wins): a finished day played again starts
over. A run opens, for every game of a day played before, with the game back to `scheduled`
and its markets reopened (`reset_events`). Reference data (teams, players, injury reports and
their news) keeps the source's own times: it is the same in every run. Pure.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import msgspec

from ingest.sandbox.day import OPEN_AT, Day
from ingest.sandbox.simulation import SOURCE
from schemas import natural_keys
from schemas.events import AnyEvent, GameScheduled, GameStateChanged, MarketReopened, stamp

DAY_START = OPEN_AT  # the sandbox day's first instant: the books open
MAX_RUN_SECONDS = 1.0  # `--speed max`: the whole day within this much wall-clock time


@dataclass(frozen=True)
class SandboxClock:
    anchor: datetime  # the wall-clock instant the day's start maps to
    speed: float  # day seconds per wall-clock second

    def at(self, t: datetime) -> datetime:
        """The wall-clock instant of the day's instant `t` in this run."""
        return self.anchor + (t - DAY_START) / self.speed


def day_seconds(day: Day) -> float:
    """From the books' opening to the day's last event."""
    return (max(e.source_ts for e in day.ingame) - DAY_START).total_seconds()


def run_speed(day: Day, speed: float | None) -> float:
    """A run's clock speed: `speed`, or for `max` (None) whatever puts the day in MAX_RUN_SECONDS."""
    return day_seconds(day) / MAX_RUN_SECONDS if speed is None else speed


def _on_clock(event: AnyEvent, clock: SandboxClock) -> AnyEvent:
    if isinstance(event, GameScheduled):
        # the schedule comes when the day opens; the source's own time is not of the day
        kickoff = None if event.kickoff_at is None else clock.at(event.kickoff_at)
        return stamp(msgspec.structs.replace(event, source_ts=clock.anchor, kickoff_at=kickoff))
    return stamp(msgspec.structs.replace(event, source_ts=clock.at(event.source_ts)))


def pregame_on(day: Day, clock: SandboxClock) -> list[AnyEvent]:
    """The pre-game part in this run: games and opening prices on the clock, reference data as is."""
    return [_on_clock(e, clock) if isinstance(e, GameScheduled) or e.source == SOURCE else e for e in day.pregame]


def ingame_on(day: Day, clock: SandboxClock) -> list[AnyEvent]:
    """The in-game part in this run, in time order (the clock keeps the order)."""
    return [_on_clock(e, clock) for e in day.ingame]


def reset_events(day: Day, clock: SandboxClock, run: int, ingest_ts: datetime) -> list[AnyEvent]:
    """A replayed day's start: each game scheduled again (no score, no play) and its markets,
    suspended at the last run's final, open again; none for the first run."""
    if run <= 1:
        return []
    out: list[AnyEvent] = []
    for spec in day.games:
        ident = f"{spec.source_id}#run{run}"
        out.append(GameStateChanged(
            source=SOURCE, source_id=f"{ident}-reset", source_ts=clock.anchor, ingest_ts=ingest_ts,
            game_id=spec.game_id, status="scheduled",
        ))
        for market in ("h2h", "spreads", "totals"):
            out.append(MarketReopened(
                source=SOURCE, source_id=f"{ident}-{market}-reopen", source_ts=clock.anchor, ingest_ts=ingest_ts,
                game_id=spec.game_id, market_id=natural_keys.market_id(spec.game_id, "game", market, "full", None),
            ))
    return [stamp(e) for e in out]

