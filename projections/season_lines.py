"""Season stat lines from per-game lines: the `total`, `per_game` and `rate` bases.

Per (source, season, season type), over the player's games (rules per stat: `stat_rules`,
docs/stats.md):

- `total`: each summed stat added up over the games;
- `per_game`: each summed stat's total / games;
- `rate`: each rate's season value, recomputed from its parts (or the mean of the games'
  values where the games do not carry the parts). Rates never appear on the other bases.

Values are exact (`stat_numbers.stat_text`): integers, terminating decimals in full, others
rounded half to even at 12 places.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Iterable

from projections import stat_rules
from projections.stat_numbers import StatOut, as_fraction, stat_text
from projections.state import GameLine

SeasonKey = tuple[str, str, str]  # (source, season, season_type or '')
BASES = ("total", "per_game", "rate")


def season_key(line: GameLine) -> SeasonKey:
    return (line.origin.source, line.season, line.season_type or "")


def group(lines: Iterable[GameLine]) -> dict[SeasonKey, list[GameLine]]:
    groups: dict[SeasonKey, list[GameLine]] = {}
    for line in lines:
        groups.setdefault(season_key(line), []).append(line)
    return groups


def totals(lines: list[GameLine]) -> dict[str, Fraction]:
    """Each summed stat over the games (rates left out)."""
    out: dict[str, Fraction] = {}
    for line in lines:
        for name, value in line.stats.items():
            if stat_rules.is_summed(name):
                out[name] = out.get(name, Fraction(0)) + as_fraction(value)
    return dict(sorted(out.items()))


def per_game(total: dict[str, Fraction], games: int) -> dict[str, Fraction]:
    return {name: value / games for name, value in total.items()}


def rates(lines: list[GameLine], position: str | None) -> dict[str, Fraction]:
    return stat_rules.season_rates([line.stats for line in lines], position)


def served(stats: dict[str, Fraction]) -> dict[str, StatOut]:
    return {name: stat_text(value) for name, value in stats.items()}


def season_stats(lines: list[GameLine], position: str | None) -> dict[str, dict[str, StatOut]]:
    """The season's lines by basis, every basis always (a row whose stats became empty must be
    overwritten, not left behind; the API does not serve a season line without stats)."""
    total = totals(lines)
    return {"total": served(total), "per_game": served(per_game(total, len(lines))),
            "rate": served(rates(lines, position))}


def latest(lines: list[GameLine]) -> GameLine:
    """The season's latest game line (by week, then by stamp): whose team the season shows."""
    return max(lines, key=lambda g: (-1 if g.week is None else g.week, g.origin.stamp))
