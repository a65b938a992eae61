"""The answer question set (tests/support/answer_questions.toml) and the check of one answer
against it: the category, the key figures worked out by hand or recomputed here from the sample
files (exact fractions, independent of the engine's code), refusals and problems.

Used by the integration test and by `make bench` (share answered correctly)."""

from __future__ import annotations

import csv
import tomllib
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from pathlib import Path
from typing import Any

from domain import prices
from domain.ids import is_id
from schemas.library import entry_id
from schemas.strategies import strategy_id
from tests.support.sample_fold import SAMPLES, nfl_game_id

QUESTIONS = Path(__file__).with_name("answer_questions.toml")
REL = 1e-9


@dataclass(frozen=True)
class Question:
    q: str
    spec: dict[str, Any]

    @property
    def held_out(self) -> bool:
        return bool(self.spec.get("held_out"))

    @property
    def out_of_scope(self) -> bool:
        return "refusal" in self.spec


def load_questions() -> list[Question]:
    data = tomllib.loads(QUESTIONS.read_text(encoding="utf-8"))
    return [Question(item["q"], item) for item in data["q"]]


@lru_cache(maxsize=1)
def schedule() -> dict[str, dict[str, str]]:
    with open(SAMPLES / "nflverse" / "games_2023_2025.csv", newline="", encoding="utf-8") as fh:
        return {row["game_id"]: row for row in csv.DictReader(fh)}


@lru_cache(maxsize=1)
def player_weeks() -> list[dict[str, str]]:
    with open(SAMPLES / "nflverse" / "player_stats_2024_weeks01-03.csv", newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _decimal(american: str) -> Fraction:
    return prices.decimal_of_american(Fraction(american))


def closing_line(game: str, market: str) -> dict[str, Fraction]:
    """Hold and multiplicative no-vig probabilities of the file's closing prices, by hand."""
    row = schedule()[game]
    sides = {"h2h": (("home", "home_moneyline"), ("away", "away_moneyline")),
             "spreads": (("home", "home_spread_odds"), ("away", "away_spread_odds")),
             "totals": (("over", "over_odds"), ("under", "under_odds"))}[market]
    implied = {sel: 1 / _decimal(row[col]) for sel, col in sides}
    booksum = sum(implied.values())
    out = {"hold": 1 - 1 / booksum}
    out.update({sel: p / booksum for sel, p in implied.items()})
    return out


def _close(a: float, b: float | Fraction) -> bool:
    b = float(b)
    return abs(a - b) <= max(REL * max(abs(a), abs(b)), 1e-9)


def check(question: Question, status: int, body: dict[str, Any]) -> str | None:
    """None when the answer is right; else what is wrong."""
    spec = question.spec
    if "problem" in spec:
        if status not in (403, 422) or body.get("code") != spec["problem"]:
            return f"expected problem {spec['problem']}, got {status} {body.get('code') or body.get('category')}"
        return None
    if status != 201:
        return f"status {status}: {body.get('code')} {body.get('detail')}"
    if "refusal" in spec:
        refusal = body.get("refusal") or {}
        if body["tier"] != "refusal" or body["category"] != 0 or body["figures"]:
            return f"expected a refusal, got category {body['category']} tier {body['tier']}"
        if refusal.get("reason") != spec["refusal"]:
            return f"refusal reason {refusal.get('reason')}, expected {spec['refusal']}"
        return None
    if body["category"] != spec["category"]:
        return f"category {body['category']}, expected {spec['category']}"
    if body["tier"] == "refusal":
        return f"refused ({(body.get('refusal') or {}).get('message')})"
    figures = body["figures"]
    by_field: dict[str, list[dict]] = {}
    for f in figures:
        by_field.setdefault(f["field"], []).append(f)
    for field, value in (spec.get("figures") or {}).items():
        if not any(_close(f["value"], value) for f in by_field.get(field, ())):
            return f"figure {field}: {[f['value'] for f in by_field.get(field, ())]}, expected {value}"
    cited = {c["ref"] for c in body["citations"]}
    if "game" in spec:
        game_id = nfl_game_id(schedule()[spec["game"]])
        if game_id not in cited:
            return f"game {spec['game']} ({game_id}) not cited"
        row = schedule()[spec["game"]]
        if spec["category"] == 5 and row["home_score"]:
            if not any(_close(f["value"], int(row["home_score"])) for f in by_field.get("score_home", ())):
                return "home score differs from the file"
            if not any(_close(f["value"], int(row["away_score"])) for f in by_field.get("score_away", ())):
                return "away score differs from the file"
    if "market" in spec:
        expected = closing_line(spec["game"], spec["market"])
        holds = [f["value"] for f in by_field.get("hold", ())]
        if not any(_close(h, expected["hold"]) for h in holds):
            return f"hold {holds}, expected {float(expected['hold'])}"
        for sel, p in expected.items():
            if sel == "hold":
                continue
            if not any(_close(f["value"], p) for f in by_field.get("no_vig_probability", ()) if f["selection_id"] == sel):
                return f"no-vig probability of {sel} differs: expected {float(p)}"
        if not any(f["topic"] is None or f["topic"].startswith("market:") for f in by_field.get("hold", ())):
            return "market figures name no market topic"
    if "count" in spec:
        text = body["sentences"][0]["text"]
        if not text.startswith(f"{spec['count']} game"):
            return f"slate count: {text}"
    if "player" in spec:
        labels = [c["label"] for c in body["citations"] if c["kind"] == "player"]
        if not any(lbl.startswith(spec["player"]) for lbl in labels):
            return f"player {labels}, expected {spec['player']}"
        refs = [c["ref"] for c in body["citations"] if c["kind"] == "player"]
        if not all(is_id("player", r) for r in refs):
            return "player citation without a plr_ ID"
        for stat, value in (spec.get("stats") or {}).items():
            if not any(_close(f["value"], value) for f in by_field.get(stat, ())):
                return f"stat {stat}: {[f['value'] for f in by_field.get(stat, ())]}, expected {value}"
    if "strategy" in spec:
        first = next((c for c in body["citations"] if c["kind"] == "strategy"), None)
        if first is None or first["ref"] != strategy_id(spec["strategy"]) or not first["reviewed_at"]:
            return f"strategy {first and first['url']}, expected {spec['strategy']}"
    if "slug" in spec:
        first = next((c for c in body["citations"] if c["kind"] == "reference"), None)
        if first is None or first["ref"] != entry_id(spec["slug"]):
            return f"reference {first and first['url']}, expected {spec['slug']}"
    return None


def season_total(player: str, stat: str, season: str = "2024") -> int:
    """A player's season total of one counting stat, summed from the weekly file by hand."""
    return sum(int(float(r[stat] or 0)) for r in player_weeks()
               if r["player_display_name"] == player and r["season"] == season and r["season_type"] == "REG")
