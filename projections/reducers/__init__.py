"""Pure reducers: `(state, event) -> (state, deltas)` for each log key (game, player, team, entry).

Deterministic and idempotent: the same event twice, or older news after newer, changes nothing
and emits no delta. No I/O and no wall clock here; drivers live in `projections.batch` and the
adapters around it.
"""

from __future__ import annotations

from projections.deltas import Delta
from projections.reducers.games import reduce_game
from projections.reducers.content import reduce_library, reduce_recipe, reduce_strategy
from projections.reducers.common import Owned
from projections.reducers.markets import reduce_market
from projections.reducers.players import reduce_player
from projections.reducers.teams import reduce_team
from projections.quote_event import QuoteEvent
from projections.state import KeyState
from schemas.events import (
    GameRescheduled, GameScheduled, GameStateChanged, InjuryReported, MarketReopened, MarketSuspended,
    NewsPublished, PlayerRegistered, PlayerUpdated, PriceQuoted, RecipePublished, RecipeRetired, RecipeRevised,
    ReferencePublished, ReferenceRetired, ReferenceRevised, StatLineRecorded, StrategyPublished, StrategyRetired,
    StrategyRevised, TeamRegistered,
)


def _game(state, event, window_us, own):
    return reduce_game(state, event)


def _player(state, event, window_us, own):
    return reduce_player(state, event)


def _team(state, event, window_us, own):
    return reduce_team(state, event)


def _library(state, event, window_us, own):
    return reduce_library(state, event)


def _strategy(state, event, window_us, own):
    return reduce_strategy(state, event)


def _recipe(state, event, window_us, own):
    return reduce_recipe(state, event)


_REDUCERS = {
    GameScheduled: _game, GameRescheduled: _game, GameStateChanged: _game,
    PriceQuoted: reduce_market, QuoteEvent: reduce_market, MarketSuspended: reduce_market, MarketReopened: reduce_market,
    PlayerRegistered: _player, PlayerUpdated: _player, InjuryReported: _player, NewsPublished: _player,
    StatLineRecorded: _player, TeamRegistered: _team,
    ReferencePublished: _library, ReferenceRevised: _library, ReferenceRetired: _library,
    StrategyPublished: _strategy, StrategyRevised: _strategy, StrategyRetired: _strategy,
    RecipePublished: _recipe, RecipeRevised: _recipe, RecipeRetired: _recipe,
}


def reduce(state: KeyState | None, event, window_us: int, own: Owned | None = None) -> tuple[KeyState, list[Delta]]:
    """Fold one event into its key's state. `window_us`: the consensus window (event time);
    `own`: objects the current fold made, which reducers may change in place (copy-on-write per
    batch). Without it nothing of `state` changes; the result is the same with or without it."""
    return _REDUCERS[type(event)](state, event, window_us, own)
