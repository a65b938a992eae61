"""Pure reducers: `(state, event) -> (state, deltas)` for each log key (game, player, team, entry).

Deterministic and idempotent: the same event twice, or older news after newer, changes nothing
and emits no delta. No I/O and no wall clock here; drivers live in `projections.batch` and the
adapters around it.
"""

from __future__ import annotations

from projections.deltas import Delta
from projections.reducers.games import reduce_game
from projections.reducers.library import reduce_library
from projections.reducers.common import Owned
from projections.reducers.markets import reduce_market
from projections.reducers.players import reduce_player
from projections.reducers.teams import reduce_team
from projections.state import KeyState
from schemas.events import (
    GameRescheduled, GameScheduled, GameStateChanged, InjuryReported, MarketReopened, MarketSuspended,
    NewsPublished, PlayerRegistered, PlayerUpdated, PriceQuoted, ReferencePublished, ReferenceRetired,
    ReferenceRevised, StatLineRecorded, TeamRegistered,
)


def _game(state, event, window_us, own):
    return reduce_game(state, event)


def _player(state, event, window_us, own):
    return reduce_player(state, event)


def _team(state, event, window_us, own):
    return reduce_team(state, event)


def _library(state, event, window_us, own):
    return reduce_library(state, event)


_REDUCERS = {
    GameScheduled: _game, GameRescheduled: _game, GameStateChanged: _game,
    PriceQuoted: reduce_market, MarketSuspended: reduce_market, MarketReopened: reduce_market,
    PlayerRegistered: _player, PlayerUpdated: _player, InjuryReported: _player, NewsPublished: _player,
    StatLineRecorded: _player, TeamRegistered: _team,
    ReferencePublished: _library, ReferenceRevised: _library, ReferenceRetired: _library,
}


def reduce(state: KeyState | None, event, window_us: int, own: Owned | None = None) -> tuple[KeyState, list[Delta]]:
    """Fold one event into its key's state. `window_us`: the consensus window (event time);
    `own`: objects the current fold made, which reducers may change in place (copy-on-write per
    batch; the result is the same with or without it)."""
    return _REDUCERS[type(event)](state, event, window_us, own)
