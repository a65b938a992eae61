"""Wire deltas as reducers emit them, and the `data` payload of each delta type.

A delta is emitted only when something a Wire client sees changed; its seq is the topic's last
seq plus one, kept in the state of the log key that owns the topic (both `game:` and
`market:` topics belong to the game's key). Payloads are the topic's full visible state for
game topics, and the market header plus the lines that changed for market topics (the
`docs/wire-deltas.md` page documents each member).
"""

from __future__ import annotations

from typing import Any, Callable, Final

import msgspec
from msgspec.structs import astuple

from projections.event_time import from_us
from domain.devig import DEFAULT_METHOD
from projections.lines import Consensus, LineState
from projections.state import GameState, MarketState
from schemas.read_models import LineData, LineOutcome
from schemas.wire import GameStateData, MarketData, Score

GAME_STATE = "game.state"
MARKET_UPDATE = "market.update"
MARKET_SUSPENDED = "market.suspended"


class Delta:
    """One delta. Its `data` is built only when asked for (a rebuild needs the seqs, not the
    payloads): the state it describes is immutable, so building it later gives the same data."""

    __slots__ = ("wire_topic", "type", "seq", "source_ts", "source", "_build", "_args")

    def __init__(self, wire_topic: str, type: str, seq: int, source_ts: int, source: str,
                 build: Callable[..., Any], *args: Any) -> None:
        self.wire_topic = wire_topic
        self.type = type
        self.seq = seq
        self.source_ts = source_ts
        self.source = source
        self._build = build
        self._args = args

    @property
    def data(self) -> Any:
        """The delta type's payload: the struct `schemas.wire.DATA_BY_TYPE` names for its type."""
        return self._build(*self._args)

    def __repr__(self) -> str:
        return f"Delta({self.wire_topic!r}, {self.type!r}, seq={self.seq})"


def number(value) -> float | None:
    """Points go out as JSON numbers (the exact half-point lines all fit a float)."""
    return None if value is None else float(value)


# ---- games ----------------------------------------------------------------------------------


def field(game: GameState, name: str):
    item = game.fields.get(name)
    return None if item is None else item[0]


def game_visible(game: GameState | None) -> tuple | None:
    """What a `game:` topic shows; None until the game is scheduled."""
    if game is None or not game.scheduled:
        return None
    kickoff = field(game, "kickoff") or (None, None)
    p = game.play
    state = (p.status, p.score_home, p.score_away, p.period, p.clock, p.possession, p.last_play) if p else (
        "scheduled", None, None, None, None, None, None)
    return (*state, kickoff[0], kickoff[1], field(game, "venue"))


def game_data(game: GameState) -> GameStateData:
    visible = game_visible(game)
    assert visible is not None, "game_data of an unscheduled game"
    (status, home, away, period, clock, possession, last_play, kickoff_at, kickoff_date, venue) = visible
    return GameStateData(
        game_id=game.game_id, status=status,
        score=None if home is None and away is None else Score(home=home, away=away),
        period=period, clock=clock, possession=possession, last_play=last_play,
        kickoff_at=None if kickoff_at is None else from_us(kickoff_at), kickoff_date=kickoff_date, venue=venue,
    )


# ---- markets --------------------------------------------------------------------------------


# A market's fields by position in its `astuple`: the fold reads some twenty of them per quote,
# each a generic attribute lookup from compiled code (~160 instructions) where one `astuple`
# and C array reads do (Final: compiled, static C values).
def field_names(struct: Any) -> tuple[str, ...]:
    """A msgspec struct type's field names in `astuple` order (what the positions index)."""
    return tuple([f.name for f in msgspec.structs.fields(struct)])


_MARKET_FIELDS = field_names(MarketState)
M_MARKET_ID: Final = _MARKET_FIELDS.index("market_id")
M_GAME_ID: Final = _MARKET_FIELDS.index("game_id")
M_KIND: Final = _MARKET_FIELDS.index("kind")
M_TYPE: Final = _MARKET_FIELDS.index("type")
M_PERIOD: Final = _MARKET_FIELDS.index("period")
M_PARTICIPANT_ID: Final = _MARKET_FIELDS.index("participant_id")
M_ORIGIN: Final = _MARKET_FIELDS.index("origin")
M_AS_OF: Final = _MARKET_FIELDS.index("as_of")
M_NAME: Final = _MARKET_FIELDS.index("name")
M_SUSPEND_ALL: Final = _MARKET_FIELDS.index("suspend_all")
M_SUSPEND_BOOK: Final = _MARKET_FIELDS.index("suspend_book")
M_LINES: Final = _MARKET_FIELDS.index("lines")
M_MAIN_KEY: Final = _MARKET_FIELDS.index("main_key")
M_STATUS: Final = _MARKET_FIELDS.index("status")
M_REASON: Final = _MARKET_FIELDS.index("reason")
M_SEQ: Final = _MARKET_FIELDS.index("seq")


def market_header(m: MarketState | None) -> tuple | None:
    """What a `market:` topic shows besides its lines; None until a quote named the market."""
    return None if m is None else header_of(astuple(m))


def header_of(f: tuple[Any, ...]) -> tuple | None:
    """`market_header` of a market's `astuple`."""
    if f[M_ORIGIN] is None:
        return None
    main_key: str | None = f[M_MAIN_KEY]
    # typed locals: compiled, a native dict lookup and attribute reads (an Any's are generic)
    lines: dict[str, LineState] = f[M_LINES]
    main = lines.get(main_key) if main_key is not None else None
    consensus = main.consensus if main is not None else None
    books = consensus.books if consensus is not None else 0
    named = f[M_NAME]
    name = named[0] if named else None
    return (f[M_STATUS], f[M_REASON], main_key, books, name)


def line_outcomes(consensus: Consensus, prices: list[float | None],
                  probabilities: dict[str, tuple[float, ...] | None]) -> list[LineOutcome]:
    """A line's outcomes as rows and deltas show them (`prices`: null when not served;
    `probabilities`: per devig method, every outcome's, or None when the method gave none)."""
    return [
        LineOutcome(
            selection=o.selection, name=o.name, participant_id=o.participant_id, point=number(o.point),
            price=prices[i],
            probability={method: None if values is None else values[i] for method, values in probabilities.items()},
        )
        for i, o in enumerate(consensus.names)
    ]


def line_data(key: str, point, consensus: Consensus, is_main: bool) -> LineData:
    served = consensus.served  # one bookmaker's numbers are never shown (docs/odds.md)
    prices: list[float | None] = list(consensus.prices) if served else [None] * len(consensus.names)
    probabilities = tuple(consensus.probabilities) if served else None
    return LineData(
        line_key=key, point=number(point), is_main=is_main, books=consensus.books,
        hold=consensus.hold if served else None,
        outcomes=line_outcomes(consensus, prices, {DEFAULT_METHOD: probabilities}),
        basis=consensus.basis,  # type: ignore[arg-type]  # one of LineBasis
    )


def market_view(m: MarketState, changed: list[str], header: tuple) -> tuple:
    """What a market delta shows (`header`: its `market_header`), taken when the delta is made:
    within a fold the market may change in place afterwards (see `reducers.common.Owned`).
    Consensus objects and points are immutable."""
    return view_of(astuple(m), changed, header)


def view_of(f: tuple[Any, ...], changed: list[str], header: tuple) -> tuple:
    """`market_view` of a market's `astuple`."""
    all_lines: dict[str, LineState] = f[M_LINES]
    lines = []
    for key in changed:  # sorted
        line = all_lines.get(key)
        lines.append((key, None, None) if line is None else (key, line.point, line.consensus))
    main = all_lines.get(header[2]) if header[2] is not None else None
    return (f[M_MARKET_ID], f[M_GAME_ID], f[M_KIND], f[M_TYPE], f[M_PERIOD], f[M_PARTICIPANT_ID], header,
            main.point if main is not None else None, lines)


def not_kept() -> Any:
    """The payload of a delta made only to be counted (a rebuild's, `reduce_market(views=False)`):
    its view was never taken, so there is nothing to build it from."""
    raise RuntimeError("this delta was made to be counted (a rebuild's): its payload was not kept")


def market_data(view: tuple) -> MarketData:
    market_id, game_id, kind, type_, period, participant_id, header, main_point, changed = view
    status, reason, main_key, books, name = header
    lines = []
    removed = []
    for key, point, consensus in changed:
        if consensus is None:
            removed.append(key)
        else:
            lines.append(line_data(key, point, consensus, key == main_key))
    return MarketData(
        id=market_id, game_id=game_id, kind=kind, type=type_, period=period, participant_id=participant_id,
        name=name, status=status, status_reason=reason, main_point=number(main_point), books=books, lines=lines,
        removed_lines=removed,
    )
