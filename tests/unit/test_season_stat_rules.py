"""Season stat lines against hand computation from the nflverse weekly stats CSV (issue 20,
items 1 and 2): rates are recomputed from their season parts, never summed; means are exact
decimals when they terminate, else 12 places rounded half to even."""

from __future__ import annotations

import csv
from datetime import date
from decimal import Decimal
from fractions import Fraction

from hypothesis import given
from hypothesis import strategies as st

from ingest.nflverse_player_stats import IDENTITY
from projections import season_lines, stat_rules
from projections.reducers import reduce
from projections.stat_numbers import stat_text
from tests.support import projection_events as ev
from tests.support.sample_fold import SAMPLES

CSV = SAMPLES / "nflverse" / "player_stats_2024_weeks01-03.csv"
with open(CSV, newline="") as _f:
    ROWS = list(csv.DictReader(_f))
RATES = ("pacr", "dakota", "racr", "target_share", "air_yards_share", "wopr")


def rows_of(name: str) -> list[dict[str, str]]:
    out = [r for r in ROWS if r["player_display_name"] == name]
    assert out, name
    return out


def season_of(rows: list[dict[str, str]]) -> dict[str, dict]:
    """The player's rows through the reducer (as the projector folds them) and the season builder."""
    first = rows[0]
    p = ev.player(first["player_id"], first["player_display_name"], position=first["position"])
    state, _ = reduce(None, p, 0)
    for r in rows:
        stats = {k: (int(v) if v.lstrip("-").isdigit() else Decimal(v))
                 for k, v in r.items() if k not in IDENTITY and v != ""}
        line = ev.stat_line(p.player_id, ev.game(day=date(2024, 9, int(r["week"]))).game_id, int(r["week"]), stats)
        state, _ = reduce(state, line, 0)
    (lines,) = season_lines.group(state.lines.values()).values()
    return season_lines.season_stats(lines, first["position"])


def total(rows, column) -> Fraction:
    return sum((Fraction(r[column]) for r in rows if r[column] != ""), Fraction(0))


def team_total(rows, part, share) -> Fraction:
    """Each game's team total = the player's part / share, a whole count (targets, air yards)."""
    return sum((Fraction(round(Fraction(r[part]) / Fraction(r[share])))
                for r in rows if r[share] not in ("", "0") and r[part] not in ("", "0")), Fraction(0))


def test_justin_jefferson_season_rates_from_their_parts():
    rows = rows_of("Justin Jefferson")
    season = season_of(rows)
    rate = season["rate"]
    # receiving yards 59 + 133 + 81 = 273 over receiving air yards 63 + 115 + 78 = 256
    assert rate["racr"] == "1.06640625" == stat_text(total(rows, "receiving_yards") / total(rows, "receiving_air_yards"))
    # team targets per game: 6 / 0.2608695... = 23, 7 / 0.2916... = 24, 8 / 0.32 = 25
    assert team_total(rows, "targets", "target_share") == 72
    target_share = total(rows, "targets") / 72
    air_share = total(rows, "receiving_air_yards") / team_total(rows, "receiving_air_yards", "air_yards_share")
    assert rate["target_share"] == stat_text(target_share) == "0.291666666667"
    assert rate["air_yards_share"] == stat_text(air_share)
    assert Fraction(rate["air_yards_share"]) < 1  # summed it was 1.4155 (141%)
    assert rate["wopr"] == stat_text(Fraction(3, 2) * target_share + Fraction(7, 10) * air_share)
    # no rate on the summed bases, and no sum of a rate anywhere
    for basis in ("total", "per_game"):
        assert not set(RATES) & set(season[basis])
    assert season["total"]["receiving_yards"] == 273
    assert season["per_game"]["receiving_yards"] == 91 and season["per_game"]["targets"] == 7


def test_patrick_mahomes_pacr_and_his_one_target():
    rows = rows_of("Patrick Mahomes")
    rate = season_of(rows)["rate"]
    assert rate["pacr"] == stat_text(total(rows, "passing_yards") / total(rows, "passing_air_yards"))
    # 659 / 475 = 1.387368421052631..., not 4.27 (the sum of the three weeks' pacr)
    assert rate["pacr"] == stat_text(Fraction(291 + 151 + 217, 165 + 104 + 206)) == "1.387368421053"
    # receiving air yards -1 over the season: a quarterback's racr is then 0, as nflverse serves it
    assert total(rows, "receiving_air_yards") == -1 and rate["racr"] == 0
    assert rate["target_share"] == stat_text(Fraction(1, 27))  # one target of the team's 27 in week 1
    # dakota is a model of play-by-play data: the season serves the mean of the games
    dakota = [Fraction(r["dakota"]) for r in rows]
    assert rate["dakota"] == stat_text(sum(dakota, Fraction(0)) / len(dakota))


def test_every_player_every_rate_is_recomputed_or_a_mean_never_a_sum():
    by_player: dict[str, list[dict[str, str]]] = {}
    for r in ROWS:
        by_player.setdefault(r["player_id"], []).append(r)
    checked = 0
    for rows in by_player.values():
        rate = season_of(rows)["rate"]
        for stat, (num, den) in {"racr": ("receiving_yards", "receiving_air_yards"),
                                 "pacr": ("passing_yards", "passing_air_yards")}.items():
            if stat in rate and total(rows, den) > 0:
                assert rate[stat] == stat_text(total(rows, num) / total(rows, den)), (rows[0]["player_id"], stat)
                checked += 1
        for stat, part in {"target_share": "targets", "air_yards_share": "receiving_air_yards"}.items():
            if stat in rate and team_total(rows, part, stat):
                assert rate[stat] == stat_text(total(rows, part) / team_total(rows, part, stat))
                assert 0 <= Fraction(rate[stat]) <= 1 or stat == "air_yards_share"
                checked += 1
    assert checked > 500


def test_a_rate_without_its_parts_is_the_mean_of_the_games():
    lines = [{"racr": Decimal("1.5")}, {"racr": Decimal("0.25")}]
    assert stat_rules.season_rates(lines, "WR") == {"racr": Fraction(7, 8)}
    # with its parts, the parts decide: (10 + 30) / (20 + 10)
    lines = [{"racr": Decimal("0.5"), "receiving_yards": 10, "receiving_air_yards": 20},
             {"racr": 3, "receiving_yards": 30, "receiving_air_yards": 10}]
    assert stat_rules.season_rates(lines, "WR") == {"racr": Fraction(4, 3)}


def test_per_game_mean_is_exact_or_twelve_places():
    assert stat_text(Fraction(92, 3)) == "30.666666666667"  # was "30.667"
    assert stat_text(Fraction(501, 2)) == "250.5"
    assert stat_text(Fraction(1, 1024)) == "0.0009765625"  # terminating: every digit
    assert stat_text(Fraction(-7, 3)) == "-2.333333333333"
    assert stat_text(Fraction(1, 10**9)) == "0.000000001"  # never exponent notation
    assert stat_text(Fraction(6)) == 6


@given(st.integers(-10**9, 10**9), st.integers(1, 40))
def test_stat_text_is_the_exact_value_or_within_half_a_unit_of_the_twelfth_place(top, games):
    value = Fraction(top, games)
    text = stat_text(value)
    served = Fraction(text) if isinstance(text, str) else Fraction(text)
    if isinstance(text, str) and len(text.split(".")[1]) == 12 and served != value:
        assert abs(served - value) <= Fraction(1, 2 * 10**12)
    else:
        assert served == value
    assert "e" not in str(text).lower()

