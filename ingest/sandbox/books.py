"""Simulated sportsbooks: fair prices from a game state, shaded and margined per book.

The fair model is the usual normal approximation: the final home margin is normal with mean
`margin now + pre-game expected margin x time left` and standard deviation 13.5 points x
sqrt(time left). Each book adds its own margin (vig), a line shade and a little seeded noise,
so the books disagree a little and consensus is meaningful.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Decimal

from domain import prices
from domain.prices import QuoteFormat
from schemas.events import Outcome

MARGIN_SD = 13.5  # points, whole game
TOTAL_SD = 10.0
MIN_DECIMAL = 1.01
MAX_DECIMAL = 101.0


@dataclass(frozen=True)
class SimBook:
    key: str
    name: str
    price_format: QuoteFormat
    vig: float  # overround above 1, split multiplicatively
    shade: float  # points this book shades the line towards the home side


BOOKS: tuple[SimBook, ...] = (
    SimBook("sim_north", "Sim North", "american", 0.045, 0.0),
    SimBook("sim_south", "Sim South", "american", 0.050, 0.5),
    SimBook("sim_east", "Sim East", "decimal", 0.040, -0.5),
    SimBook("sim_west", "Sim West", "decimal", 0.055, 0.0),
)


@dataclass(frozen=True)
class GameView:
    """What a book prices from: score margin and total now, time left, pre-game expectations."""

    margin: int  # home minus away
    points: int  # home plus away
    left: float  # fraction of the game left, 1 before kickoff
    expected_margin: float  # pre-game expected home margin (= -home handicap)
    expected_total: float


def phi(x: float) -> float:
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


def half_point(x: float) -> Decimal:
    """Nearest half point, as lines are quoted."""
    return Decimal(round(x * 2)) / 2


def price(p: float, book: SimBook) -> Decimal:
    """The book's price for an outcome of fair probability p, in its own format."""
    d = min(MAX_DECIMAL, max(MIN_DECIMAL, 1.0 / (p * (1.0 + book.vig))))
    if book.price_format == "decimal":
        return Decimal(str(d)).quantize(Decimal("0.01"), rounding=ROUND_HALF_EVEN)
    american = prices.american(d)
    step = 5 if abs(american) < 1000 else 50
    value = int(round(american / step) * step)
    if -100 < value < 100:
        value = 100 if american > 0 else -100
    return Decimal(value)


def quotes(view: GameView, book: SimBook, rng: random.Random) -> dict[str, tuple[Decimal | None, list[tuple[str, float, Decimal | None]]]]:
    """Per market type: (line point, [(selection, fair probability, outcome point)])."""
    left = max(view.left, 0.0)
    sd = MARGIN_SD * math.sqrt(left) + 0.5
    mean = view.margin + view.expected_margin * left + rng.uniform(-0.4, 0.4)
    p_home = min(0.995, max(0.005, phi(mean / sd)))
    handicap = half_point(-(mean + book.shade))  # home handicap
    p_cover = min(0.97, max(0.03, phi((mean + float(handicap)) / sd)))
    total_mean = view.points + view.expected_total * left + rng.uniform(-0.5, 0.5)
    line = half_point(total_mean + book.shade)
    p_over = min(0.97, max(0.03, phi((total_mean - float(line)) / (TOTAL_SD * math.sqrt(left) + 0.5))))
    return {
        "h2h": (None, [("home", p_home, None), ("away", 1.0 - p_home, None)]),
        "spreads": (handicap, [("home", p_cover, handicap), ("away", 1.0 - p_cover, -handicap if handicap else handicap)]),
        "totals": (line, [("over", p_over, line), ("under", 1.0 - p_over, line)]),
    }


def outcomes(
    market: list[tuple[str, float, Decimal | None]], book: SimBook, names: dict[str, str], participants: dict[str, str | None],
) -> list[Outcome]:
    return [
        Outcome(selection=sel, name=names[sel], participant_id=participants.get(sel), price=price(p, book),
                price_format=book.price_format, point=point)
        for sel, p, point in market
    ]
