"""Worked examples for the OpenAPI document, built by the same builders the routes use from
rows shaped like the read models (Baltimore at Kansas City, 2024 week 1, nflverse data)."""

from __future__ import annotations

from datetime import date, datetime, timezone
from typing import Any

import msgspec

from api.conventions import RG_LINE
from api.resources import games, markets, players, reference, search
from api.resources import library
from api.resources.lists import (
    CompetitionList, GameList, MarketList, ReferenceEntryList, SearchResultList, Slate, SportList,
)
from domain.devig import hold, overround
from schemas.read_model_tables import AvailabilityRecord, InjuryRecord, NewsRecord, PlayerRecord
from schemas.read_models import (
    GameRecord, KnownProvenance, LineOutcome, MarketLineRecord, MarketRecord, SourceTimes, StatLineRecord,
)
from schemas.natural_keys import competition_id, game_id, market_id, player_id, season_id, sport_id, team_id

REQUEST_ID = "req_0123456789abcdefghjk"
_T = datetime(2024, 9, 6, 4, 0, tzinfo=timezone.utc)
_PROV = {"source": "nflverse", "source_ts": "2024-09-06T00:20:00Z", "ingest_ts": "2024-09-06T04:00:00Z"}
# nflverse gives no time for a result: its provenance has no source time (docs/ingest.md)
_RESULT_PROV = {"source": "nflverse", "source_ts": None, "ingest_ts": "2024-09-06T04:00:00Z"}
KC, BAL = team_id("nfl", "KC"), team_id("nfl", "BAL")
GAME = game_id("nfl", KC, BAL, date(2024, 9, 5))
H2H = market_id(GAME, "game", "h2h", "full", None)
SPREADS = market_id(GAME, "game", "spreads", "full", None)
MAHOMES = player_id("nfl", "00-0033873")


def _team(side: str, tid: str, name: str, abbreviation: str) -> dict[str, Any]:
    return {
        f"{side}_team_id": tid, f"{side}_name": name, f"{side}_abbreviation": abbreviation,
        f"{side}_competition": "nfl", f"{side}_provenance": _PROV, f"{side}_source": "nflverse", f"{side}_as_of": _T,
    }


_KICKOFF = datetime(2024, 9, 6, 0, 20, tzinfo=timezone.utc)
_GAME = GameRecord(
    id=GAME, name="Baltimore Ravens at Kansas City Chiefs", sport="american_football",
    competition="nfl", season="2024", week=1, season_type="REG", kickoff_at=_KICKOFF, kickoff_date=None,
    kickoff_sort=_KICKOFF, venue="GEHA Field at Arrowhead Stadium", neutral_site=False, home_team_id=KC,
    away_team_id=BAL, status="final", score_home=27, score_away=20, period=None, clock=None, possession=None,
    last_play=None, state_provenance=msgspec.convert(_RESULT_PROV, SourceTimes), source="nflverse", as_of=_T,
    provenance=msgspec.convert({**_PROV, "known_by": [{"source": "nflverse", "source_id": "2024_01_BAL_KC"}]},
                               KnownProvenance),
    last_seq=3,
)
# the game's row as the games query reads it: its record's columns, then its two teams'
GAME_ROW: dict[str, Any] = {
    **msgspec.structs.asdict(_GAME),
    **_team("home", KC, "Kansas City Chiefs", "KC"), **_team("away", BAL, "Baltimore Ravens", "BAL"),
}


def _market_row(mid: str, mtype: str, main_point: float | None) -> dict[str, Any]:
    """A market's row as the markets queries read it: its record's columns, then its game's."""
    m = MarketRecord(
        id=mid, game_id=GAME, kind="game", type=mtype, period="full", participant_id=None, name=None,
        status="open", status_reason=None, main_point=main_point, books=0, source="nflverse closing lines",
        as_of=_T, provenance=msgspec.convert(_PROV, SourceTimes), last_seq=1,
    )
    return {
        **msgspec.structs.asdict(m), "game_status": "final",
        "game_name": GAME_ROW["name"], "game_competition": "nfl", "game_kickoff_at": GAME_ROW["kickoff_at"],
    }


def _probabilities(p: float) -> dict[str, float]:
    return {m: p for m in ("multiplicative", "additive", "power", "shin", "odds_ratio")}


def _outcome(selection: str, name: str, team: str, point: float, price: float, p: float) -> LineOutcome:
    return LineOutcome(selection=selection, name=name, participant_id=team, point=point, price=price,
                       probability=_probabilities(p))


# the stored figures of the example prices, as the projector stores them (domain.devig)
_SPREAD_PRICES = (1.9803921568627452, 1.8474576271186440)
_ALTERNATE_PRICES = (1.9090909090909092, 1.9090909090909092)
_SPREAD_LINE = MarketLineRecord(
    market_id=SPREADS, line_key="-3", point=-3.0, is_main=True, books=0, hold=hold(_SPREAD_PRICES),
    overround=overround(_SPREAD_PRICES), methods={},
    source="nflverse closing lines", basis="published_line", as_of=_T,
    provenance=SourceTimes(source="nflverse closing lines", source_ts=_T, ingest_ts=_T),
    outcomes=[
        _outcome("home", "Kansas City Chiefs", KC, -3.0, _SPREAD_PRICES[0], 0.4944444444444444),
        _outcome("away", "Baltimore Ravens", BAL, 3.0, _SPREAD_PRICES[1], 0.5055555555555556),
    ],
)


def game_list() -> GameList:
    return GameList(data=[games.game(GAME_ROW, REQUEST_ID)], has_more=True, next_cursor="kZQ2Yjc2ZGY0NWU4NzQ3Njg4k84ABiFO")


def game_detail() -> games.GameDetail:
    from api.resources.stats import stat_line

    line = StatLineRecord(
        line_key=f"{MAHOMES}|game|{GAME}", subject_id=MAHOMES, team_id=KC, game_id=GAME, season="2024", week=1,
        season_type="REG", basis="total",
        stats={"completions": 20, "attempts": 28, "passing_yards": 291, "passing_tds": 1, "passing_epa": "8.43"},
        source="nflverse", as_of=_T, provenance=msgspec.convert(_PROV, SourceTimes),
    )
    team = msgspec.structs.replace(line, line_key=f"{KC}|game|{GAME}", subject_id=KC,
                                   stats={"completions": 20, "attempts": 28, "passing_yards": 291})
    refs = [games.market_ref(_market_row(H2H, "h2h", None)), games.market_ref(_market_row(SPREADS, "spreads", -3))]
    return games.game_detail(GAME_ROW, refs, [stat_line(line)], [stat_line(team)], REQUEST_ID)


def slate() -> Slate:
    refs = [games.market_ref(_market_row(H2H, "h2h", None))]
    item = games.slate_game(GAME_ROW, refs, REQUEST_ID)
    return Slate(
        as_of=_T, source="nflverse", stale_after_ms=None, attribution=item.attribution, request_id=REQUEST_ID,
        live_topics=item.live_topics, rg_line=RG_LINE, date=date(2024, 9, 5), timezone="America/New_York",
        starts_at=datetime(2024, 9, 5, 4, 0, tzinfo=timezone.utc), ends_at=datetime(2024, 9, 6, 4, 0, tzinfo=timezone.utc),
        game_count=1, data=[item], has_more=False, next_cursor=None,
    )


def market_list() -> MarketList:
    return MarketList(
        data=[markets.market(_market_row(H2H, "h2h", None), REQUEST_ID), markets.market(_market_row(SPREADS, "spreads", -3), REQUEST_ID)],
        has_more=False, next_cursor=None,
    )


def market_detail() -> markets.MarketDetail:
    alternate = msgspec.structs.replace(
        _SPREAD_LINE, line_key="-2.5", point=-2.5, is_main=False, books=3, basis="consensus", source="The Odds API",
        hold=hold(_ALTERNATE_PRICES), overround=overround(_ALTERNATE_PRICES), outcomes=[
            _outcome("home", "Kansas City Chiefs", KC, -2.5, _ALTERNATE_PRICES[0], 0.5),
            _outcome("away", "Baltimore Ravens", BAL, 2.5, _ALTERNATE_PRICES[1], 0.5),
        ],
    )
    return markets.market_detail(
        _market_row(SPREADS, "spreads", -3), [_SPREAD_LINE, alternate], "multiplicative", "devig.multiplicative@1", REQUEST_ID,
    )


def sport_list() -> SportList:
    row = {"id": sport_id("american_football"), "slug": "american_football", "name": "American Football",
           "source": "svc registry", "as_of": _T}
    comps = [{"id": competition_id("nfl"), "slug": "nfl", "name": "NFL", "as_of": _T}]
    return SportList(data=[reference.sport(row, comps, REQUEST_ID)], has_more=False, next_cursor=None)


def competition_list() -> CompetitionList:
    row = {"id": competition_id("nfl"), "slug": "nfl", "name": "NFL", "sport": "american_football",
           "source": "svc registry", "as_of": _T}
    seasons = [
        {"id": season_id("nfl", label), "label": label, "year": int(label), "starts_on": date(int(label), 9, start),
         "ends_on": date(int(label) + 1, 2, end), "as_of": _T}
        for label, start, end in (("2025", 4, 8), ("2024", 5, 9), ("2023", 7, 11))
    ]
    return CompetitionList(data=[reference.competition(row, seasons, REQUEST_ID)], has_more=False, next_cursor=None)


def player() -> players.Player:
    times = msgspec.convert(_PROV, SourceTimes)
    mahomes = PlayerRecord(
        id=MAHOMES, sport="american_football", competition="nfl", name="Patrick Mahomes", position="QB", team_id=KC,
        source="nflverse", as_of=_T, provenance=msgspec.convert({**_PROV, "known_by": []}, KnownProvenance),
    )
    # the player's row as api.queries.players reads it: its record's columns, then its team's
    row = {**msgspec.structs.asdict(mahomes), "team_name": "Kansas City Chiefs", "team_abbreviation": "KC",
           "team_competition": "nfl", "team_provenance": _PROV, "team_source": "nflverse", "team_as_of": _T}
    reported = datetime(2024, 9, 20, 20, 0, tzinfo=timezone.utc)
    report = InjuryRecord(
        player_id=MAHOMES, team_id=KC, status="Questionable", roster_status=None, detail="Ankle",
        secondary_detail=None, practice="Limited Participation in Practice", game_day=None, season=2024, week=3,
        game_id=None, reported_at=reported, source="nflverse", as_of=_T, provenance=times,
    )
    availability = [AvailabilityRecord(player_id=MAHOMES, source="nflverse", status="questionable", game_id=None,
                                       season=2024, week=3, as_of=_T, provenance=times)]
    news = [NewsRecord(player_id=MAHOMES, event_id="ev_0123456789abcdef", kind="injury",
                       headline="Patrick Mahomes (ankle) questionable for week 3", published_at=reported,
                       source="nflverse", as_of=_T, provenance=times)]
    season = StatLineRecord(
        line_key=f"{MAHOMES}|season|nflverse|2024|REG|total", subject_id=MAHOMES, team_id=KC, game_id=None,
        season="2024", week=None, season_type="REG", basis="total", stats={"passing_yards": 770, "passing_tds": 4},
        source="nflverse", as_of=_T, provenance=msgspec.convert(_PROV, SourceTimes),
    )
    last = msgspec.structs.replace(season, line_key=f"{MAHOMES}|game|{GAME}", game_id=GAME, week=1,
                                   stats={"passing_yards": 291, "passing_tds": 1})
    return players.player(row, availability, report, news, [season], [last], REQUEST_ID)


def search_results() -> SearchResultList:
    base = {"context": {}, "player_position": None, "player_team_name": None, "player_team_id": None, "game_home_name": None,
            "game_away_name": None, "game_season": None, "game_week": None, "game_kickoff_at": None,
            "team_competition": None, "team_abbreviation": None, "competition_sport": None}
    rows = [
        {**base, "id": MAHOMES, "kind": "player", "name": "Patrick Mahomes", "player_position": "QB",
         "player_team_name": "Kansas City Chiefs", "player_team_id": KC},
        {**base, "id": KC, "kind": "team", "name": "Kansas City Chiefs", "team_competition": "nfl", "team_abbreviation": "KC"},
    ]
    return SearchResultList(data=[search.search_result(r) for r in rows], has_more=False, next_cursor=None)


_VIG = {
    "id": "ref_wpraa3fpn9gm1q25qj5t", "slug": "vig", "kind": "term", "title": "Vig (vigorish)",
    "aliases": ["vigorish", "juice", "the juice", "margin", "cut", "commission", "bookmaker margin"],
    "summary": ("The margin a bookmaker builds into its prices, so that the implied probabilities of a market add up "
                "to more than 100%."),
    "body": "A two-way market at -110 on both sides implies 52.38% + 52.38% = 104.76%...",
    "jurisdictions": [], "products": ["sportsbook"], "operators": [], "formulas": ["odds.overround"],
    "wagering": True,
    "sources": [{"title": "Formula card odds.overround@1", "publisher": "svc", "url": "/v1/formulas/odds.overround",
                 "accessed_on": "2026-11-25"}],
    "reviewed_at": date(2026, 11, 25), "review_due": date(2027, 11, 25), "version": 1, "source": "svc editorial",
    "as_of": datetime(2026, 11, 25, tzinfo=timezone.utc), "related": ["ref_92p209kwhtvcegqdqxf1"],
    "provenance": {"source": "svc editorial", "source_ts": "2026-11-25T00:00:00Z",
                   "ingest_ts": "2026-11-30T09:00:00Z"},
}


def reference_entry() -> library.ReferenceEntry:
    return library.reference_entry(_VIG, REQUEST_ID, date(2026, 11, 30))


def reference_list() -> ReferenceEntryList:
    return ReferenceEntryList(data=[reference_entry()], has_more=False, next_cursor=None)
