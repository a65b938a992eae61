"""Read-model rows from state: what one batch must write, found by comparing each touched
key's state at the start of the batch with its state at the end (unchanged parts are the very
same objects, so the comparison is by identity and cheap).

Pure: tuples in the column order of `TABLES`; JSON values are pre-encoded text. Final rows
depend only on the states, never on how the log was cut into batches, so a rebuild writes
exactly what the live run wrote. The other devig methods are computed here, once per batch for
each touched line (memoised per book price set), not per event.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime, time
from decimal import Decimal
from functools import lru_cache
from typing import Any, cast
from zoneinfo import ZoneInfo

import msgspec

from projections import season_lines
from projections.consensus import MIN_BOOKS, consensus_inputs, eligible_quotes, is_suspended, other_methods
from projections.deltas import field as game_field, line_outcomes
from projections.event_time import from_us, opt_dt
from domain.devig import DEFAULT_METHOD, METHODS, overround as overround_of
from projections.search_terms import normalise
from projections.lines import BookQuote, LineState
from projections.state import (
    ContentState, GameState, LibraryState, MarketState, Origin, PlayerState, RecipeState, StoredQuote, StrategyState,
    TeamState,
)
from schemas.events import MarketKind
from schemas.library import entry_id
from schemas.strategies import chain_number
from schemas.natural_keys import competition_id, season_id, sport_id
from schemas.read_models import (
    GAME_KEY, MARKET_KEY, MARKET_LINE_KEY, STAT_LINE_KEY, DevigNote, GameRecord, KnownBy, KnownProvenance,
    MarketLineRecord, MarketRecord, SourceTimes, StatLineRecord, columns, row_values,
)
from schemas.read_model_tables import (
    AVAILABILITY_KEY, BOOK_PRICE_KEY, COMPETITION_KEY, CONTENT_KEY, INJURY_KEY, NEWS_KEY, PLAYER_KEY, REVISION_KEY,
    SEARCH_KEY, SPORT_KEY, TEAM_KEY, AvailabilityRecord, BookPriceRecord, CompetitionRecord, InjuryRecord, NewsRecord,
    PlayerRecord, RecipeRecord, ReferenceEntryRecord, RevisionRecord, SearchRecord, SportRecord, StrategyRecord,
    TeamRecord,
)
from schemas.reference import COMPETITIONS, SPORTS, untimed_result
from schemas.season_dates import season_dates
from schemas.team_nicknames import nicknames
from schemas.wire import game_topic, market_topic

REGISTRY_SOURCE = "svc"  # sports and competitions come from our registry

# table -> ((column, postgres type), ...), conflict key: every read model's from its record model
# (schemas/read_models.py, schemas/read_model_tables.py); `jsonb` and `text[]` values are JSON text
_REVISIONS = (columns(RevisionRecord), REVISION_KEY)  # every content kind keeps its history alike
TABLES: dict[str, tuple[tuple[tuple[str, str], ...], tuple[str, ...]]] = {
    "games": (columns(GameRecord), GAME_KEY),
    "markets": (columns(MarketRecord), MARKET_KEY),
    "market_lines": (columns(MarketLineRecord), MARKET_LINE_KEY),
    "book_prices": (columns(BookPriceRecord), BOOK_PRICE_KEY),
    "teams": (columns(TeamRecord), TEAM_KEY),
    "players": (columns(PlayerRecord), PLAYER_KEY),
    "injuries": (columns(InjuryRecord), INJURY_KEY),
    "availability": (columns(AvailabilityRecord), AVAILABILITY_KEY),
    "news": (columns(NewsRecord), NEWS_KEY),
    "stat_lines": (columns(StatLineRecord), STAT_LINE_KEY),
    "search_index": (columns(SearchRecord), SEARCH_KEY),
    "sports": (columns(SportRecord), SPORT_KEY),
    "competitions": (columns(CompetitionRecord), COMPETITION_KEY),
    "reference_entries": (columns(ReferenceEntryRecord), CONTENT_KEY),
    "reference_revisions": _REVISIONS,
    "strategies": (columns(StrategyRecord), CONTENT_KEY),
    "strategy_revisions": _REVISIONS,
    "recipes": (columns(RecipeRecord), CONTENT_KEY),
    "recipe_revisions": _REVISIONS,
    # the projector's own bookkeeping, not read models
    "topic_seq": ((("topic", "text"), ("last_seq", "bigint")), ("topic",)),
    "projector_state": ((("part", "text"), ("state", "bytea")), ("part",)),
}

_json = msgspec.json.Encoder(decimal_format="string", order="deterministic")
_state = msgspec.msgpack.Encoder(decimal_format="string")


def js(value: Any) -> str:
    return _json.encode(value).decode()


def pack(value: Any) -> bytes:
    return _state.encode(value)


def source_times(origin: Origin, result: bool = False) -> SourceTimes:
    """The provenance of one origin as its record field. `result`: the origin is a game result or
    a player's game line, whose time a source may not give (`schemas.reference.untimed_result`):
    then `source_ts` is null, never the ordering time."""
    untimed = result and untimed_result(origin.source)
    return SourceTimes(source=origin.source, source_ts=None if untimed else from_us(origin.source_ts),
                       ingest_ts=from_us(origin.ingest_ts))


def known_provenance(origin: Origin, known_by: tuple[tuple[str, str], ...]) -> KnownProvenance:
    return KnownProvenance(
        source=origin.source, source_ts=from_us(origin.source_ts), ingest_ts=from_us(origin.ingest_ts),
        known_by=[KnownBy(source=s, source_id=i) for s, i in known_by],
    )


def result_time(origin: Origin) -> int:
    """When a result or game line is as of: the source's time, or when we read it if the source
    gives none (its ordering time is not a time anyone stated)."""
    return origin.ingest_ts if untimed_result(origin.source) else origin.source_ts


def _num(value) -> float | None:
    return None if value is None else float(value)


@dataclass
class RowSet:
    """Everything one batch writes, per table; `deletes` are keys whose rows must go."""

    rows: dict[str, list[tuple]] = field(default_factory=lambda: {t: [] for t in TABLES})
    lines_deleted: list[tuple[str, str]] = field(default_factory=list)
    news_players: list[str] = field(default_factory=list)  # news rewritten whole for these
    seasons: set[tuple[str, str]] = field(default_factory=set)  # (competition, label) to recompute
    quotes: list[tuple[str, BookQuote]] = field(default_factory=list)  # book quotes written (for the cache)
    search_deleted: list[str] = field(default_factory=list)  # search_index rows to delete (retired entries)

    def add(self, table: str, row: tuple) -> None:
        self.rows[table].append(row)

    def count(self) -> int:
        return sum(len(r) for r in self.rows.values()) + len(self.lines_deleted) + len(self.search_deleted)


# ---- games and markets ----------------------------------------------------------------------


def _kickoff_sort(game: GameState, competition: str) -> datetime | None:
    kickoff = game_field(game, "kickoff")
    if kickoff is None:
        return None
    if kickoff[0] is not None:
        return from_us(kickoff[0])
    zone = COMPETITIONS[competition].timezone if competition in COMPETITIONS else "UTC"
    return datetime.combine(date.fromisoformat(kickoff[1]), time(0), ZoneInfo(zone))


def game_record(game: GameState) -> GameRecord | None:
    f = {name: value for name, (value, _) in game.fields.items()}
    needed = ("name", "sport", "competition", "home_team_id", "away_team_id")
    if game.origin is None or any(f.get(n) is None for n in needed):
        return None
    kickoff_sort = _kickoff_sort(game, f["competition"])
    if kickoff_sort is None:
        return None  # a game with neither time nor day cannot be listed in kickoff order
    kickoff_at, kickoff_date = f.get("kickoff") or (None, None)
    p = game.play
    return GameRecord(
        id=game.game_id, name=f["name"], sport=f["sport"], competition=f["competition"], season=f.get("season"),
        week=f.get("week"), season_type=f.get("season_type"), kickoff_at=opt_dt(kickoff_at),
        kickoff_date=None if kickoff_date is None else date.fromisoformat(kickoff_date), kickoff_sort=kickoff_sort,
        venue=f.get("venue"), neutral_site=bool(f.get("neutral_site")), home_team_id=f["home_team_id"],
        away_team_id=f["away_team_id"], status="scheduled" if p is None else p.status,
        score_home=None if p is None else p.score_home, score_away=None if p is None else p.score_away,
        period=None if p is None else p.period, clock=None if p is None else p.clock,
        possession=None if p is None else p.possession, last_play=None if p is None else p.last_play,
        state_provenance=None if p is None else source_times(p.origin, result=True),
        source=game.origin.source, as_of=from_us(game.as_of), provenance=known_provenance(game.origin, game.known_by),
        last_seq=game.seq,
    )


def game_row(game: GameState) -> tuple | None:
    record = game_record(game)
    return None if record is None else row_values(record)


# the fields a game's search entry is made of: its `as_of` is the newest of their stamps, so the
# entry is a function of them alone (written again only when one of them changed; replayed or
# rebuilt, the same row)
_SEARCH_FIELDS = ("name", "competition", "home_team_id", "away_team_id", "season", "week", "kickoff")


def game_search_row(game: GameState) -> tuple:
    f = {name: value for name, (value, _) in game.fields.items()}
    stamps = [game.fields[name][1][0] for name in _SEARCH_FIELDS if name in game.fields]
    kickoff_at, kickoff_date = f.get("kickoff") or (None, None)
    context = {
        "home_team_id": f.get("home_team_id"), "away_team_id": f.get("away_team_id"), "season": f.get("season"),
        "week": f.get("week"), "kickoff_at": opt_dt(kickoff_at), "kickoff_date": kickoff_date,
    }
    # both teams' nicknames too, so "niners at rams" finds the game (schemas.team_nicknames)
    terms = normalise(f["name"], *nicknames(f.get("home_team_id") or ""), *nicknames(f.get("away_team_id") or ""))
    as_of = max(stamps) if stamps else game.as_of
    return row_values(SearchRecord(id=game.game_id, kind="game", name=f["name"], competition=f.get("competition"),
                                   context=context, terms=terms, as_of=from_us(as_of)))


def market_record(m: MarketState) -> MarketRecord:
    assert m.origin is not None, "a market row before any quote named the market"
    main = m.lines.get(m.main_key) if m.main_key is not None else None
    books = main.consensus.books if main is not None and main.consensus is not None else 0
    return MarketRecord(
        # a quote has named the market (the assert above), so its kind is one of MarketKind
        id=m.market_id, game_id=m.game_id, kind=cast(MarketKind, m.kind), type=m.type, period=m.period,
        participant_id=m.participant_id,
        name=m.name[0] if m.name else None, status=m.status, status_reason=m.reason,
        main_point=None if main is None else _num(main.point), books=books, source=m.origin.source,
        as_of=from_us(m.as_of), provenance=source_times(m.origin), last_seq=m.seq,
    )


def market_row(m: MarketState) -> tuple:
    return row_values(market_record(m))


@lru_cache(maxsize=1 << 14)
def _methods(odds: tuple[tuple[float, ...], ...]) -> tuple[dict[str, tuple[float, ...] | None], dict[str, DevigNote]]:
    """A line's probabilities under the other methods and its `methods` notes, which depend on
    the eligible books' prices only (memoised: lines keep being re-quoted at the same prices)."""
    probabilities: dict[str, tuple[float, ...] | None] = {}
    notes: dict[str, DevigNote] = {DEFAULT_METHOD: DevigNote(books=len(odds), flags=(), message=None, parameter=None)}
    for method, (values, note) in other_methods(odds).items():
        probabilities[method] = values
        notes[method] = DevigNote(books=note["books"], flags=tuple(note["flags"]), message=note["message"],
                                  parameter=note["parameter"])
    return probabilities, notes


def market_line_record(m: MarketState, key: str, line: LineState, window_us: int) -> MarketLineRecord:
    c = line.consensus
    assert c is not None, "a line row without a consensus"
    basis, _, inputs = consensus_inputs(eligible_quotes(line.books, m.suspend_all, m.suspend_book, window_us))
    probabilities: dict[str, tuple[float, ...] | None]
    notes: dict[str, DevigNote]
    if c.served:
        others, notes = _methods(tuple([q.odds for q in inputs]))
        probabilities = {DEFAULT_METHOD: tuple(c.probabilities), **others}
        prices: list[float | None] = list(c.prices)
        hold: float | None = c.hold
        overround: float | None = overround_of(list(c.prices))  # of the prices the hold is of
    else:  # one bookmaker: its prices under another name are not served (notes say why)
        probabilities = {method: None for method in METHODS}
        prices, hold, overround, notes = [None] * len(c.names), None, None, _unserved_notes(c.books)
    source = ", ".join(sorted({q.origin.source for q in inputs}))
    as_of = from_us(max(q.origin.source_ts for q in inputs))
    return MarketLineRecord(
        market_id=m.market_id, line_key=key, point=_num(line.point), is_main=key == m.main_key, books=c.books,
        hold=hold, overround=overround, outcomes=line_outcomes(c, prices, probabilities), methods=notes,
        source=source, as_of=as_of,
        provenance=SourceTimes(source=source, source_ts=as_of,
                               ingest_ts=from_us(max(q.origin.ingest_ts for q in inputs))),
        basis=basis,  # type: ignore[arg-type]  # one of LineBasis (consensus.consensus_inputs)
    )


def market_line_row(m: MarketState, key: str, line: LineState, window_us: int) -> tuple:
    return row_values(market_line_record(m, key, line, window_us))


def _unserved_notes(books: int) -> dict[str, DevigNote]:
    message = (f"{books} bookmaker{'' if books == 1 else 's'} quote{'s' if books == 1 else ''} this line: a consensus "
               f"needs at least {MIN_BOOKS}, and one bookmaker's price is not served")
    return {method: DevigNote(books=books, flags=("too_few_books",), message=message, parameter=None)
            for method in METHODS}


def book_row(m: MarketState, key: str, q: BookQuote, suspended: bool) -> tuple:
    """A `book_prices` row (`BookPriceRecord`'s columns, in its field order), built as the tuple
    itself: one is written per quote, the projector's hottest row (tests/unit/test_read_models.py
    holds it to `row_values` of the record)."""
    outcomes = [
        {"selection": o.selection, "name": o.name, "participant_id": o.participant_id, "price": o.price,
         "price_format": o.price_format, "point": o.point}
        for o in q.outcomes
    ]
    o = q.origin
    return (
        m.market_id, key, q.book, q.kind, suspended, js(outcomes), o.source, from_us(o.source_ts), o.event_id,
        q.book_name, from_us(o.ingest_ts), m.game_id, None,  # state: rebuilt from these columns on load
    )


def _search_entry_written(old: GameState | None, new: GameState) -> bool:
    """Whether the game's search entry as `new` would write it is written already (as `old`
    wrote it). A score, clock or status change leaves the entry as it was: rewriting it (it
    used to carry the game's `as_of`) told every API process the search index had changed, and
    each rebuilt its kept search pages and its answers' name index, many times a second during
    play."""
    if old is None or old.origin is None:
        return False  # no entry yet (a game is listed, and indexed, once it has an origin)
    if old.fields is new.fields:  # the entry is made of the fields (and of static nicknames) only
        return True
    return game_record(old) is not None and game_search_row(old) == game_search_row(new)


def _game_changes(old: GameState | None, new: GameState, out: RowSet, window_us: int) -> None:
    header_changed = old is None or (
        old.fields is not new.fields or old.origin is not new.origin or old.known_by is not new.known_by
        or old.play is not new.play or old.as_of != new.as_of or old.seq != new.seq
    )
    if header_changed:
        row = game_row(new)
        if row is not None:
            out.add("games", row)
            if not _search_entry_written(old, new):
                out.add("search_index", game_search_row(new))
            season = game_field(new, "season")
            if season is not None:
                out.seasons.add((game_field(new, "competition"), season))
        out.add("projector_state", ("g:" + new.game_id, pack(msgspec.structs.replace(new, markets={}))))
        if old is None or old.seq != new.seq:
            out.add("topic_seq", (game_topic(new.game_id), new.seq))
    old_markets = old.markets if old is not None else {}
    for market_id, m in new.markets.items():
        before = old_markets.get(market_id)
        if before is m:
            continue
        out.add("projector_state", ("m:" + market_id, pack(msgspec.structs.replace(m, lines={}))))
        if m.origin is None:
            continue  # not quoted yet: nothing to serve
        out.add("markets", market_row(m))
        if before is None or before.seq != m.seq:
            out.add("topic_seq", (market_topic(market_id), m.seq))
        suspension_changed = before is None or (
            before.suspend_all is not m.suspend_all or before.suspend_book is not m.suspend_book
        )
        before_lines = before.lines if before is not None else {}
        before_main = before.main_key if before is not None else None
        for key in m.lines.keys() | before_lines.keys():
            line = m.lines.get(key)
            old_line = before_lines.get(key)
            was_main, is_main = key == before_main, key == m.main_key
            if line is old_line and was_main == is_main and not suspension_changed:
                continue
            if line is None or line.consensus is None:
                if old_line is not None and old_line.consensus is not None:
                    out.lines_deleted.append((market_id, key))
            elif line is not old_line or was_main != is_main:
                out.add("market_lines", market_line_row(m, key, line, window_us))
            if line is None:
                continue
            old_books = old_line.books if old_line is not None else {}
            for book, q in line.books.items():
                if old_books.get(book) is q and not suspension_changed:
                    continue
                out.add("book_prices", book_row(m, key, q, is_suspended(q, m.suspend_all, m.suspend_book)))
                out.quotes.append((quote_part(market_id, key, book), q))


def quote_part(market_id: str, key: str, book: str) -> str:
    return f"q:{market_id}|{key}|{book}"


# ---- players --------------------------------------------------------------------------------


def _stat_numbers(stats: dict[str, int | Decimal]) -> dict[str, int | str]:
    """A game line's numbers as stored: whole numbers, and decimals as their digits (as JSON
    encodes a Decimal)."""
    return {key: value if isinstance(value, int) else str(value) for key, value in stats.items()}


def _field(p: PlayerState, name: str) -> Any:
    entry = p.fields.get(name)
    return None if entry is None else entry[0]


def _player_changes(old: PlayerState | None, new: PlayerState, out: RowSet) -> None:
    pid = new.player_id
    f = {name: value for name, (value, _) in new.fields.items()}
    identity_changed = old is None or (
        old.fields is not new.fields or old.origin is not new.origin or old.known_by is not new.known_by
        or old.as_of != new.as_of
    )
    if identity_changed and new.origin is not None and f.get("name") and f.get("sport") and f.get("competition"):
        out.add("players", row_values(PlayerRecord(
            id=pid, sport=f["sport"], competition=f["competition"], name=f["name"], position=f.get("position"),
            team_id=f.get("team_id"), source=new.origin.source, as_of=from_us(new.as_of),
            provenance=known_provenance(new.origin, new.known_by),
        )))
        out.add("search_index", row_values(SearchRecord(
            id=pid, kind="player", name=f["name"], competition=f["competition"],
            context={"position": f.get("position"), "team_id": f.get("team_id")}, terms=normalise(f["name"]),
            as_of=from_us(new.as_of),
        )))
    i = new.injury
    if i is not None and (old is None or old.injury is not i):
        out.add("injuries", row_values(InjuryRecord(
            player_id=pid, team_id=i.team_id, status=i.status, roster_status=i.roster_status, detail=i.detail,
            secondary_detail=i.secondary_detail, practice=i.practice, game_day=i.game_day, season=i.season,
            week=i.week, game_id=i.game_id, reported_at=opt_dt(i.reported_at), source=i.origin.source,
            as_of=from_us(i.origin.source_ts), provenance=source_times(i.origin),
        )))
    old_availability = old.availability if old is not None else {}
    for source, a in new.availability.items():
        if old_availability.get(source) is not a:
            out.add("availability", row_values(AvailabilityRecord(
                player_id=pid, source=source, status=a.status, game_id=a.game_id, season=a.season, week=a.week,
                as_of=from_us(a.origin.source_ts), provenance=source_times(a.origin),
            )))
    if old is None or old.news is not new.news:
        out.news_players.append(pid)
        for n in new.news:
            out.add("news", row_values(NewsRecord(
                player_id=pid, event_id=n.origin.event_id, kind=n.kind, headline=n.headline,
                published_at=opt_dt(n.published_at), source=n.origin.source, as_of=from_us(n.origin.source_ts),
                provenance=source_times(n.origin),
            )))
    old_lines = old.lines if old is not None else {}
    # a season's rates may depend on the position (racr), so a new position rewrites them all:
    # the rows then depend on the state only, never on where batches were cut
    moved = old is not None and _field(old, "position") != f.get("position")
    if old is None or old.lines is not new.lines or moved:
        touched = set()
        for key, line in new.lines.items():
            if moved:
                touched.add(season_lines.season_key(line))
            if old_lines.get(key) is line:
                continue
            touched.add(season_lines.season_key(line))
            if line.game_id is not None:
                out.add("stat_lines", row_values(StatLineRecord(
                    line_key=f"{pid}|game|{key}", subject_id=pid, team_id=line.team_id, game_id=line.game_id,
                    season=line.season, week=line.week, season_type=line.season_type, basis="total",
                    stats=_stat_numbers(line.stats), source=line.origin.source, as_of=from_us(result_time(line.origin)),
                    provenance=source_times(line.origin, result=True),
                )))
        groups = season_lines.group(new.lines.values())
        for skey in sorted(touched):
            lines = groups[skey]
            source, season, season_type = skey
            as_of = max(result_time(g.origin) for g in lines)
            prov = SourceTimes(source=source, source_ts=None if untimed_result(source) else from_us(as_of),
                               ingest_ts=from_us(max(g.origin.ingest_ts for g in lines)))
            team = season_lines.latest(lines).team_id
            for basis, stats in season_lines.season_stats(lines, f.get("position")).items():
                out.add("stat_lines", row_values(StatLineRecord(
                    line_key=f"{pid}|season|{source}|{season}|{season_type}|{basis}", subject_id=pid, team_id=team,
                    game_id=None, season=season, week=None, season_type=season_type or None, basis=basis,
                    stats=stats, source=source, as_of=from_us(as_of), provenance=prov,
                )))
    out.add("projector_state", ("p:" + pid, pack(new)))


# ---- teams ----------------------------------------------------------------------------------


def _team_changes(new: TeamState, out: RowSet) -> None:
    f = {name: value for name, (value, _) in new.fields.items()}
    if new.origin is not None and f.get("name") and f.get("sport") and f.get("competition"):
        out.add("teams", row_values(TeamRecord(
            id=new.team_id, sport=f["sport"], competition=f["competition"], name=f["name"],
            abbreviation=f.get("abbreviation"), aliases=list(new.aliases), source=new.origin.source,
            as_of=from_us(new.as_of), provenance=known_provenance(new.origin, new.known_by),
        )))
        out.add("search_index", row_values(SearchRecord(
            id=new.team_id, kind="team", name=f["name"], competition=f["competition"],
            context={"competition": f["competition"], "abbreviation": f.get("abbreviation")},
            terms=normalise(f["name"], f.get("abbreviation"), *new.aliases, *nicknames(new.team_id)),
            as_of=from_us(new.as_of),
        )))
    out.add("projector_state", ("t:" + new.team_id, pack(new)))


# ---- content: reference library entries, strategies, recipes -------------------------------------


def _content_provenance(source: str, new: ContentState) -> SourceTimes:
    return SourceTimes(source=source, source_ts=from_us(new.as_of),
                       ingest_ts=from_us(new.history[-1].origin.ingest_ts))


def _revision_rows(table: str, part: str, old: ContentState | None, new: ContentState, out: RowSet) -> None:
    """The revisions the batch added to an entry's history, and its stored state."""
    done = len(old.history) if old is not None else 0
    for r in new.history[done:]:
        out.add(table, row_values(RevisionRecord(
            entry_id=new.entry_id, revision=r.revision, action=r.action, version=r.version, entry=r.entry,
            reason=r.reason, source=r.origin.source, as_of=from_us(r.origin.source_ts),
            provenance=source_times(r.origin),
        )))
    out.add("projector_state", (part + new.entry_id, pack(new)))


def _library_changes(old: LibraryState | None, new: LibraryState, out: RowSet) -> None:
    eid = new.entry_id
    e = new.entry
    if e is not None and new.origin is not None:
        prov = _content_provenance(e.source, new)
        terms = normalise(e.title, *e.aliases)
        out.add("reference_entries", row_values(ReferenceEntryRecord(
            id=eid, slug=e.slug, kind=e.kind, status=new.status, title=e.title, aliases=list(e.aliases),
            summary=e.summary, body=e.body, jurisdictions=list(e.jurisdictions), products=list(e.products),
            operators=list(e.operators), related=[entry_id(s) for s in e.related], formulas=list(e.formulas),
            wagering=e.wagering, sources=e.sources, reviewed_at=e.reviewed_at, review_due=e.review_due,
            version=new.version, revision=len(new.history), terms=terms, source=e.source, as_of=from_us(new.as_of),
            provenance=prov,
        )))
        if new.status == "published":
            context = {"topic": e.slug, "jurisdiction": ", ".join(e.jurisdictions) or None, "summary": e.summary}
            out.add("search_index", row_values(SearchRecord(
                id=eid, kind=e.kind, name=e.title, competition=None, context=context, terms=terms,
                as_of=from_us(new.as_of),
            )))
        else:
            out.search_deleted.append(eid)
    _revision_rows("reference_revisions", "r:", old, new, out)


def _strategy_changes(old: StrategyState | None, new: StrategyState, out: RowSet) -> None:
    e = new.entry
    if e is not None and new.origin is not None:
        out.add("strategies", row_values(StrategyRecord(
            id=new.entry_id, slug=e.slug, family=e.family, ledger_row=e.ledger_row, status=new.status, name=e.name,
            verdict=e.verdict, route=e.route, record=e, version=new.version, revision=len(new.history),
            reviewed_at=e.evidence.reviewed_at, review_due=e.evidence.review_due, source=e.source,
            as_of=from_us(new.as_of), provenance=_content_provenance(e.source, new),
        )))
    _revision_rows("strategy_revisions", "s:", old, new, out)


def _recipe_changes(old: RecipeState | None, new: RecipeState, out: RowSet) -> None:
    e = new.entry
    if e is not None and new.origin is not None:
        out.add("recipes", row_values(RecipeRecord(
            id=new.entry_id, number=chain_number(e.id), status=new.status, name=e.name, record=e,
            version=new.version, revision=len(new.history), reviewed_at=e.reviewed_at, review_due=e.review_due,
            source=e.source, as_of=from_us(new.as_of), provenance=_content_provenance(e.source, new),
        )))
    _revision_rows("recipe_revisions", "c:", old, new, out)


# ---- sports and competitions (commutative across keys) ----------------------------------------


def reference_rows(refs: dict[tuple[str, str], Origin], out: RowSet) -> None:
    """Sports and competitions named by the batch's events, each as of its newest input.
    Upserts keep the row with the greatest `input_key`, so batch order never matters."""
    for (kind, slug), origin in sorted(refs.items()):
        prov = SourceTimes(source=REGISTRY_SOURCE, source_ts=from_us(origin.source_ts),
                           ingest_ts=from_us(origin.ingest_ts))
        input_key = f"{origin.source_ts:020d}|{origin.event_id}"
        as_of = from_us(origin.source_ts)
        if kind == "sport":
            name = SPORTS[slug].name if slug in SPORTS else slug.replace("_", " ").title()
            out.add("sports", row_values(SportRecord(id=sport_id(slug), slug=slug, name=name, source=REGISTRY_SOURCE,
                                                     as_of=as_of, provenance=prov, input_key=input_key)))
        else:
            c = COMPETITIONS.get(slug)
            name, sport, zone = (c.name, c.sport, c.timezone) if c else (slug, "", "UTC")
            out.add("competitions", row_values(CompetitionRecord(
                id=competition_id(slug), slug=slug, name=name, sport=sport, timezone=zone, source=REGISTRY_SOURCE,
                as_of=as_of, provenance=prov, input_key=input_key,
            )))
            out.add("search_index", row_values(SearchRecord(
                id=competition_id(slug), kind="competition", name=name, competition=slug, context={"sport": sport},
                terms=normalise(name, slug), as_of=as_of,
            )))


def season_ids(pairs: set[tuple[str, str]]) -> list[tuple[str, str, str, int | None, date | None, date | None, str | None]]:
    """(id, competition, label, year, starts_on, ends_on, source of the dates) per season: the
    dates from the sourced table (`schemas.season_dates`), never from the games loaded."""
    out: list[tuple[str, str, str, int | None, date | None, date | None, str | None]] = []
    for competition, label in sorted(pairs):
        year = int(label[:4]) if label[:4].isdigit() else None
        d = season_dates(competition, label)
        out.append((season_id(competition, label), competition, label, year,
                    None if d is None else d.starts_on, None if d is None else d.ends_on,
                    None if d is None else d.source))
    return out


# ---- the batch --------------------------------------------------------------------------------


def batch_rows(start: dict[str, Any], states: dict[str, Any], refs: dict[tuple[str, str], Origin],
               window_us: int) -> RowSet:
    """Rows for every key the batch touched (`start`: each key's state before the batch)."""
    out = RowSet()
    for key, old in start.items():
        new = states.get(key)
        if new is None or new is old:
            continue
        if isinstance(new, GameState):
            _game_changes(old, new, out, window_us)
        elif isinstance(new, PlayerState):
            _player_changes(old, new, out)
        elif isinstance(new, LibraryState):
            _library_changes(old, new, out)
        elif isinstance(new, StrategyState):
            _strategy_changes(old, new, out)
        elif isinstance(new, RecipeState):
            _recipe_changes(old, new, out)
        else:
            _team_changes(new, out)
    reference_rows(refs, out)
    return out


def decode_part(part: str, blob: bytes):
    """A stored part by its key's kind: g(ame), m(arket), p(layer), t(eam), r(eference entry),
    s(trategy), c(hain: a recipe) or q(uote)."""
    if part[0] == "q":
        return msgspec.msgpack.decode(blob, type=StoredQuote).quote()
    kind = {"g": GameState, "m": MarketState, "p": PlayerState, "t": TeamState, "r": LibraryState,
            "s": StrategyState, "c": RecipeState}[part[0]]
    return msgspec.msgpack.decode(blob, type=kind)


__all__ = ["TABLES", "RowSet", "batch_rows", "decode_part", "season_ids", "quote_part"]
