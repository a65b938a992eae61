"""How each stat carries over from a player's games to a season (docs/stats.md).

Most stats are counts or sums (yards, touchdowns, EPA, fantasy points): a season adds them
up. A rate never adds up. The season value of a rate is recomputed from its parts the way
the source itself computes its season summaries (nflverse's `calculate_player_stats` with
`weekly = FALSE` in nflfastR):

- `Ratio`: the season sums of numerator and denominator divided (`pacr`, `racr`, `fg_pct`,
  `pat_pct`), with the source's rules for a zero or negative denominator;
- `Share`: a player's part of a team total (`target_share`, `air_yards_share`): each game's
  team total is recovered from the player's part and share there (part / share; games where
  either is missing or zero say nothing), then season part / season team total;
- `Weighted`: a fixed combination of other season rates (`wopr` = 1.5 target share + 0.7 air
  yards share);
- `Mean`: a rate whose parts the data does not carry (`dakota`, a model of play-by-play
  data; `passing_cpoe`): the mean of the games' values, served on the `rate` basis only;
- `Largest`: a season's best (`fg_long`).

Pure: no I/O. One definition per stat: the season builder and the docs read this table.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Mapping

from projections.stat_numbers import as_fraction

Value = int | Decimal
RB_FB = frozenset({"RB", "FB"})


@dataclass(frozen=True)
class Ratio:
    numerator: str
    denominator: str
    # the season value when the denominator is not positive: None keeps the quotient
    # (racr of a running back may be negative), "zero" serves 0 as the source does
    nonpositive: str = "zero"


@dataclass(frozen=True)
class Share:
    part: str  # the player's part; the team total of each game is part / share


@dataclass(frozen=True)
class Weighted:
    terms: tuple[tuple[str, Fraction], ...]  # (season rate, weight)


@dataclass(frozen=True)
class Mean:
    pass


@dataclass(frozen=True)
class Largest:
    pass


Rule = Ratio | Share | Weighted | Mean | Largest

RULES: dict[str, Rule] = {
    # passing air conversion ratio: passing yards per passing air yard
    "pacr": Ratio("passing_yards", "passing_air_yards"),
    # receiving air conversion ratio; negative air yards keep a negative ratio for RBs and FBs only
    "racr": Ratio("receiving_yards", "receiving_air_yards", nonpositive="racr"),
    "target_share": Share("targets"),
    "air_yards_share": Share("receiving_air_yards"),
    # weighted opportunity rating (Josh Hermsmeyer), as nflverse defines it
    "wopr": Weighted((("target_share", Fraction(3, 2)), ("air_yards_share", Fraction(7, 10)))),
    # adjusted EPA + CPOE composite: a model over play-by-play data, not recomputable from a line
    "dakota": Mean(),
    "passing_cpoe": Mean(),
    "fg_pct": Ratio("fg_made", "fg_att"),
    "pat_pct": Ratio("pat_made", "pat_att"),
    "fg_long": Largest(),
}


def is_summed(stat: str) -> bool:
    return stat not in RULES


def _sum(lines: list[Mapping[str, Value]], stat: str) -> Fraction | None:
    values = [as_fraction(line[stat]) for line in lines if stat in line]
    return sum(values, Fraction(0)) if values else None


class _NoParts:
    """The games do not carry a rate's parts: the season serves the mean of the games' values."""


NO_PARTS = _NoParts()


def _ratio(rule: Ratio, lines: list[Mapping[str, Value]], position: str | None) -> Fraction | None | _NoParts:
    top, bottom = _sum(lines, rule.numerator), _sum(lines, rule.denominator)
    if top is None or bottom is None:
        return NO_PARTS
    if bottom == 0:
        return None if top == 0 else Fraction(0)  # 0/0 is undefined; x/0 the source serves as 0
    if bottom < 0 and (rule.nonpositive == "zero" or (rule.nonpositive == "racr" and position not in RB_FB)):
        return Fraction(0)
    return top / bottom


def _team_total(part: Value, share: Value) -> Fraction | None:
    """A game's team total from the player's part and share of it. A whole-number part is a
    count (targets, air yards) and so is its team total: the quotient is rounded to the
    nearest integer, undoing the rounding of the share the source printed (15 digits)."""
    p, s = as_fraction(part), as_fraction(share)
    if p == 0 or s == 0:
        return None  # the source's share says nothing about the team here (0/0)
    total = p / s
    return Fraction(round(total)) if isinstance(part, int) else total


def _share(rule: Share, stat: str, lines: list[Mapping[str, Value]]) -> Fraction | None | _NoParts:
    if not any(rule.part in line for line in lines if stat in line):
        return NO_PARTS
    part = Fraction(0)
    team = Fraction(0)
    for line in lines:
        if stat in line and rule.part in line:
            total = _team_total(line[rule.part], line[stat])
            if total is not None:
                part += as_fraction(line[rule.part])
                team += total
    if team == 0:
        return Fraction(0) if all(as_fraction(line[stat]) == 0 for line in lines if stat in line) else None
    return part / team


def season_rates(lines: list[Mapping[str, Value]], position: str | None) -> dict[str, Fraction]:
    """Every rule stat the games carry, as a season value (see the module doc)."""
    present = {stat for line in lines for stat in line if stat in RULES}
    out: dict[str, Fraction] = {}
    for stat in sorted(present, key=lambda s: isinstance(RULES[s], Weighted)):  # combinations last
        rule = RULES[stat]
        value: Fraction | None | _NoParts
        if isinstance(rule, Ratio):
            value = _ratio(rule, lines, position)
        elif isinstance(rule, Share):
            value = _share(rule, stat, lines)
        elif isinstance(rule, Weighted):
            value = _weighted(rule, lines, out)
        elif isinstance(rule, Largest):
            value = max(as_fraction(line[stat]) for line in lines if stat in line)
        else:
            value = NO_PARTS
        if isinstance(value, _NoParts):
            value = mean(lines, stat)
        if value is not None:
            out[stat] = value
    return dict(sorted(out.items()))


def mean(lines: list[Mapping[str, Value]], stat: str) -> Fraction:
    """The mean of the games' values, over the games that carry one."""
    values = [as_fraction(line[stat]) for line in lines if stat in line]
    return sum(values, Fraction(0)) / len(values)


def _weighted(rule: Weighted, lines: list[Mapping[str, Value]], season: dict[str, Fraction]) -> Fraction | None | _NoParts:
    names = [name for name, _ in rule.terms]
    if not all(any(name in line for line in lines) for name in names):
        return NO_PARTS
    if any(name not in season for name in names):
        return None  # a part is undefined over the season, so is the combination
    return sum((weight * season[name] for name, weight in rule.terms), Fraction(0))


__all__ = ["RULES", "Ratio", "Share", "Weighted", "Mean", "Largest", "is_summed", "season_rates"]
