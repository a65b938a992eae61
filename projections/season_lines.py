"""Season stat lines from per-game lines: the `total` and the `per_game` basis.

Per (source, season, season type): each stat summed over the player's games (integers stay
integers, decimals stay exact); per game = total / games, an integer when it divides evenly,
else a decimal rounded half-even to three places.
"""

from __future__ import annotations

from decimal import ROUND_HALF_EVEN, Decimal
from typing import Iterable

from projections.state import GameLine

_PLACES = Decimal("0.001")
SeasonKey = tuple[str, str, str]  # (source, season, season_type or '')


def season_key(line: GameLine) -> SeasonKey:
    return (line.origin.source, line.season, line.season_type or "")


def group(lines: Iterable[GameLine]) -> dict[SeasonKey, list[GameLine]]:
    groups: dict[SeasonKey, list[GameLine]] = {}
    for line in lines:
        groups.setdefault(season_key(line), []).append(line)
    return groups


def totals(lines: list[GameLine]) -> dict[str, int | Decimal]:
    out: dict[str, int | Decimal] = {}
    for line in lines:
        for name, value in line.stats.items():
            out[name] = out.get(name, 0) + value
    return dict(sorted(out.items()))


def per_game(total: dict[str, int | Decimal], games: int) -> dict[str, int | Decimal]:
    out: dict[str, int | Decimal] = {}
    for name, value in total.items():
        q = Decimal(value) / games
        if q == q.to_integral_value():
            out[name] = int(q)
        else:
            out[name] = q.quantize(_PLACES, rounding=ROUND_HALF_EVEN).normalize()
    return out


def latest(lines: list[GameLine]) -> GameLine:
    """The season's latest game line (by week, then by stamp): whose team the season shows."""
    return max(lines, key=lambda g: (-1 if g.week is None else g.week, g.origin.stamp))
