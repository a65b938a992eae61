"""The Odds API v4 odds responses: a list of events, or the historical wrapper
`{"timestamp", "data"}`, with American or decimal prices.

One record is one event (a game). Events per record: the two teams, the game (matched to a
known game of the same competition and teams within the kickoff window, else created) and
one price quote per book and market line, `source_ts` the market's `last_update` (newer
responses) or the book's. Outcomes are put in a fixed order (home, away, draw; over, under)
whatever the response's order. `h2h_lay` is exchange lay odds: kept as kind `exchange`,
which consensus ignores. A market that fails a check (placeholder prices, a missing outcome,
lines that do not pair up) is dead-lettered at its JSON path; the rest of the event goes on.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from datetime import datetime
from decimal import Decimal
from pathlib import Path

import msgspec

from ingest import prices
from ingest.memo import remember
from ingest.identity import Team, UnknownTeam, local_day, season_label, team
from ingest.records import RECORD_ERRORS, FormatError, GameClaim, Identity, Item, Parsed, Record, Rejected, Resolution, reason_of
from schemas import bounds, natural_keys
from schemas.events import AnyEvent, GameRescheduled, GameScheduled, KnownBy, Outcome, PriceQuoted, TeamRegistered
from schemas.reference import COMPETITION_BY_ODDS_API_KEY

NAME = "odds-api"
SOURCE = "The Odds API"
# market keys: base type, optional period suffix (h2h_q1, spreads_h1, totals_p2, ...)
_MARKET = re.compile(r"^(?P<alt>alternate_)?(?P<base>h2h_lay|h2h|spreads|totals)(?:_(?P<period>q[1-4]|h[12]|p[1-3]|1st_\d+_innings))?$")


class OddsOutcome(msgspec.Struct):
    name: str
    price: Decimal
    point: Decimal | None = None
    description: str | None = None


class OddsMarket(msgspec.Struct):
    key: str
    outcomes: list[OddsOutcome]
    last_update: datetime | None = None


class OddsBook(msgspec.Struct):
    key: str
    title: str
    last_update: datetime
    markets: list[msgspec.Raw]


class OddsEvent(msgspec.Struct):
    id: str
    sport_key: str
    commence_time: datetime
    home_team: str
    away_team: str
    bookmakers: list[msgspec.Raw] = []
    sport_title: str | None = None


class Historical(msgspec.Struct):
    timestamp: datetime
    data: msgspec.Raw  # a list of events (odds) or one event (event odds)
    previous_timestamp: datetime | None = None
    next_timestamp: datetime | None = None


class WholeBook(msgspec.Struct):
    key: str
    title: str
    last_update: datetime
    markets: list[msgspec.Raw]  # each read once per distinct text (`_market_lines`)


class WholeEvent(msgspec.Struct):
    """An event decoded in one go: the fast path when all of it is valid."""

    bookmakers: list[WholeBook] = []


_top = msgspec.json.Decoder(list[msgspec.Raw] | Historical)
_many = msgspec.json.Decoder(list[msgspec.Raw])
_event = msgspec.json.Decoder(OddsEvent)
_whole = msgspec.json.Decoder(WholeEvent)
_book = msgspec.json.Decoder(OddsBook)
_market = msgspec.json.Decoder(OddsMarket)


def parse(path: Path, ingest_ts: datetime, price_format: str = "auto") -> Parsed:
    """`price_format`: auto (inferred per market), american or decimal (as requested from the API)."""
    try:
        top = _top.decode(path.read_bytes())
    except msgspec.DecodeError as exc:
        raise FormatError(f"{path.name}: not an Odds API odds response: {exc}") from None
    if isinstance(top, Historical):
        # the historical endpoints wrap the response with the snapshot time
        many = bytes(top.data).lstrip()[:1] == b"["
        elements = _many.decode(top.data) if many else [top.data]
        paths = [f"$.data[{i}]" for i in range(len(elements))] if many else ["$.data"]
        snapshot: datetime | None = top.timestamp
        if problem := bounds.year_problem(top.timestamp, "timestamp"):
            raise FormatError(f"{path.name}: {problem}")
    else:
        elements, snapshot = top, None
        paths = [f"$[{i}]" for i in range(len(elements))]
    return Parsed(NAME, path.name, len(elements), _items(elements, paths, snapshot, price_format, ingest_ts))


def _items(
    elements: list[msgspec.Raw], paths: list[str], snapshot: datetime | None, price_format: str, ingest_ts: datetime,
) -> Iterator[Item]:
    # a team is registered as of the first record that names it, so one file registers it once
    team_seen: dict[tuple[str, str], datetime] = {}
    for index, (raw, path) in enumerate(zip(elements, paths)):
        # an event is read whole before any of it is handed on: rejected whole, or in parts
        try:
            items = list(_event_items(index, raw, path, snapshot, price_format, ingest_ts, team_seen))
        except RECORD_ERRORS as exc:
            items = [Rejected(index, path, _text(raw), reason_of(exc))]
        yield from items


def _text(raw: msgspec.Raw | bytes) -> str:
    """A part of the response as text for a dead letter (a byte that is not UTF-8 escaped later)."""
    return bytes(raw).decode("utf-8", "surrogateescape")


def _event_items(
    index: int, raw: msgspec.Raw, path: str, snapshot: datetime | None, price_format: str, ingest_ts: datetime,
    team_seen: dict[tuple[str, str], datetime],
) -> Iterator[Item]:
    text = bytes(raw).decode()  # a byte that is not UTF-8: the event is rejected
    try:
        event = _event.decode(raw)
    except msgspec.ValidationError as exc:
        yield Rejected(index, path, text, f"invalid event: {exc}")
        return
    problem = (bounds.identifier_problem(event.id, "id") or bounds.year_problem(event.commence_time, "commence_time"))
    if problem:
        yield Rejected(index, path, text, problem)
        return
    competition = COMPETITION_BY_ODDS_API_KEY.get(event.sport_key)
    if competition is None:
        yield Rejected(index, path, text, f"unknown sport_key {event.sport_key[:40]!r}")
        return
    try:
        home, away = team(competition.slug, event.home_team), team(competition.slug, event.away_team)
    except UnknownTeam as exc:
        yield Rejected(index, path, text, str(exc))
        return
    if home.team_id == away.team_id:
        yield Rejected(index, path, text, "home and away are the same team")
        return
    # the names the source calls the teams: its IDs for them, kept clean like every name
    names = (bounds.clean_text(event.home_team), bounds.clean_text(event.away_team))
    try:
        quotes, book_times = _whole_event(raw, home, away, names, price_format)
    except _Fallback:
        # something in it is wrong: read it part by part, to dead-letter just that part
        quotes, book_times = [], []
        for b, braw in enumerate(event.bookmakers):
            bpath = f"{path}.bookmakers[{b}]"
            try:
                book = _book.decode(braw)
                title = _check_book(book)
            except RECORD_ERRORS as exc:
                yield Rejected(index, bpath, _text(braw), f"invalid bookmaker: {reason_of(exc)}")
                continue
            book_times.append(book.last_update)
            for m, mraw in enumerate(book.markets):
                try:
                    quotes.extend(_quotes(_market.decode(mraw), book, title, home, away, names, price_format))
                except RECORD_ERRORS as exc:
                    yield Rejected(index, f"{bpath}.markets[{m}]", _text(mraw), f"{book.key}: {reason_of(exc)}")
    # when the response says it knew the game: its snapshot time, else its newest book update
    seen_at = snapshot or max(book_times, default=event.commence_time)
    team_ts = tuple(team_seen.setdefault((t.team_id, called), seen_at) for t, called in zip((home, away), names))
    yield _record(
        index, path, text, event, names, competition.slug, competition.sport, home, away, quotes, seen_at, team_ts,
        ingest_ts,
    )


def _check_book(book: OddsBook | WholeBook) -> str:
    """The book's title, cleaned, once its key, title and update time are checked."""
    title = _BOOK_TITLES.get((book.key, book.title))
    if title is None:
        title = bounds.clean_text(book.title)
        problem = (bounds.identifier_problem(book.key, "bookmaker key")
                   or bounds.text_problem(title, "bookmaker title", bounds.NAME_MAX))
        if problem:
            raise _BadMarket(problem)
        remember(_BOOK_TITLES, (book.key, book.title), title, _LINES_MAX)
    if problem := bounds.year_problem(book.last_update, "last_update"):
        raise _BadMarket(problem)
    return title


# A file names the same few dozen books on every event: a key and title that passed their
# checks are not checked again (only the update time, which differs). Bounded like _LINES.
_BOOK_TITLES: dict[tuple[str, str], str] = {}


class _BadMarket(ValueError):
    pass


class _Fallback(Exception):
    pass


def _whole_event(
    raw: msgspec.Raw, home: Team, away: Team, names: tuple[str, str], price_format: str,
) -> tuple[list[_Quote], list[datetime]]:
    """Every quote of an event decoded in one go; `_Fallback` if any part of it is invalid."""
    try:
        whole = _whole.decode(raw)
        quotes: list[_Quote] = []
        context = _context(home, away, names, price_format)
        for book in whole.bookmakers:
            title = _check_book(book)
            key, updated = book.key, book.last_update
            for mraw in book.markets:
                kind, base, period, last_update, lines = _market_lines(mraw, home, away, names, price_format, context)
                at = last_update or updated
                for point, ordered in lines:
                    quotes.append(_Quote(key, title, at, kind, base, period, point, list(ordered)))
    except RECORD_ERRORS:
        raise _Fallback from None
    return quotes, [b.last_update for b in whole.bookmakers]


# Books post the same market text over and over: the standard -110/-110 at the same spread or
# total, from book after book and response after response. What a market's text becomes (its
# checked lines) depends only on that text, the two teams, the names the response calls them
# and the price format asked for, so a repeat is read and checked once. Keyed by the exact
# bytes (never by value: 1.5 and 1.50 are kept as written); bounded like the price caches.
# The rest of the key (teams, names, format) is the same for every market of an event: it is
# numbered once per event (`_context`) and a market's key is (that number, its bytes), which
# hashes in a third of the time of the five-part key (hashed for every market of a file).
# Numbers are never reused, so emptying the numbering leaves no key that could match a new one.
_LINES_MAX = 4_096
_Lines = tuple[str, str, str, "datetime | None", list[tuple["Decimal | None", list[Outcome]]]]
_LINES: dict[tuple[int, bytes], _Lines] = {}
_CONTEXTS: dict[tuple[str, str, tuple[str, str], str], int] = {}
_numbers = itertools.count()


def _context(home: Team, away: Team, names: tuple[str, str], price_format: str) -> int:
    """The number of what a market's lines depend on besides its text."""
    key = (home.team_id, away.team_id, names, price_format)
    number = _CONTEXTS.get(key)
    if number is None:
        number = remember(_CONTEXTS, key, next(_numbers), _LINES_MAX)
    return number


def _market_lines(mraw: msgspec.Raw, home: Team, away: Team, names: tuple[str, str], price_format: str,
                  context: int) -> _Lines:
    """`context`: `_context(home, away, names, price_format)`."""
    key = (context, bytes(mraw))
    found = _LINES.get(key)
    if found is None:
        market = _market.decode(mraw)
        kind, base, period = _market_kind(market.key)
        found = remember(_LINES, key, (kind, base, period, market.last_update,
                                       _lines(market, base, kind, home, away, names, price_format)), _LINES_MAX)
    return found


class _Quote(msgspec.Struct, frozen=True):
    book: str
    book_name: str
    at: datetime
    kind: str
    market_type: str
    period: str
    point: Decimal | None
    outcomes: list[Outcome]


def _market_kind(key: str) -> tuple[str, str, str]:
    """(kind, base type, period) of a market key, such as h2h_q1 -> (game, h2h, q1)."""
    found = _MARKET_KEYS.get(key)
    if found is None:
        match = _MARKET.match(key)
        if match is None:
            raise _BadMarket(f"unsupported market {key!r}")
        base = match["base"]
        found = _MARKET_KEYS[key] = ("exchange" if base == "h2h_lay" else "game", base, match["period"] or "full")
    return found


_MARKET_KEYS: dict[str, tuple[str, str, str]] = {}


def _quotes(
    market: OddsMarket, book: OddsBook, title: str, home: Team, away: Team, names: tuple[str, str],
    price_format: str,
) -> list[_Quote]:
    """One quote per line of the market (alternate markets hold several lines)."""
    kind, base, period = _market_kind(market.key)
    lines = _lines(market, base, kind, home, away, names, price_format)
    at = market.last_update or book.last_update  # the book's was checked with the book
    return [_Quote(book.key, title, at, kind, base, period, point, ordered) for point, ordered in lines]


def _lines(
    market: OddsMarket, base: str, kind: str, home: Team, away: Team, names: tuple[str, str], price_format: str,
) -> list[tuple[Decimal | None, list[Outcome]]]:
    """The market's lines, checked: (point, outcomes in the fixed order) each."""
    if not market.outcomes:
        raise _BadMarket(f"{market.key}: no outcomes")
    if len(market.outcomes) > 1_000:
        raise _BadMarket(f"{market.key}: {len(market.outcomes)} outcomes")
    for o in market.outcomes:
        if o.point is not None and not bounds.point_ok(o.point, base):
            raise _BadMarket(bounds.point_problem(o.point, base) or "bad point")
    fmt = price_format if price_format != "auto" else prices.infer_format([o.price for o in market.outcomes])
    if market.last_update is not None and (problem := bounds.year_problem(market.last_update, "last_update")):
        raise _BadMarket(problem)
    if base[0] == "h" or len(market.outcomes) <= 2:
        groups = [market.outcomes]
    else:  # several lines in one market: pair them up by point (a spread's two sides by its size)
        by_point: dict[Decimal | None, list[OddsOutcome]] = {}
        for o in market.outcomes:
            key = abs(o.point) if base == "spreads" and o.point is not None else o.point
            by_point.setdefault(key, []).append(o)
        groups = list(by_point.values())
    out = []
    for outcomes in groups:
        point, ordered = _outcomes(base, outcomes, home, away, names, fmt)
        prices.check_market([o.price for o in ordered], fmt, exchange=kind == "exchange")
        out.append((point, ordered))
    return out


# the fixed order outcomes are kept in, whatever the source's order
_ORDER = {"h2h": ("home", "away", "draw"), "h2h_lay": ("home", "away", "draw"),
          "spreads": ("home", "away"), "totals": ("over", "under")}


def _outcomes(
    base: str, outcomes: list[OddsOutcome], home: Team, away: Team, names: tuple[str, str], fmt: str,
) -> tuple[Decimal | None, list[Outcome]]:
    slots: dict[str, Outcome] = {}
    moneyline = base[0] == "h"
    for o in outcomes:
        name = bounds.clean_text(o.name)
        selection = _selection(base, name, home, away, names)
        if selection in slots:
            raise _BadMarket(f"outcome {name[:40]!r} appears twice")
        if not moneyline and o.point is None:
            raise _BadMarket(f"outcome {name[:40]!r} has no point")
        slots[selection] = Outcome(
            selection=selection, name=name,
            participant_id=home.team_id if selection == "home" else away.team_id if selection == "away" else None,
            price=o.price, price_format=fmt, point=None if moneyline else o.point,
        )
    order = _ORDER[base]
    if order[0] not in slots or order[1] not in slots:
        raise _BadMarket(f"outcomes {sorted(slots)} do not make a {base} market")
    ordered = [slots[s] for s in order if s in slots]
    if base == "spreads":
        h, a = ordered[0].point, ordered[1].point
        if h != -a:  # type: ignore[operator]
            raise _BadMarket(f"spread points {h} and {a} do not pair up")
        return h, ordered
    if base == "totals":
        if ordered[0].point != ordered[1].point:
            raise _BadMarket(f"total points {ordered[0].point} and {ordered[1].point} differ")
        return ordered[0].point, ordered
    return None, ordered


def _selection(base: str, name: str, home: Team, away: Team, names: tuple[str, str]) -> str:
    if base == "totals":
        folded = name.casefold()
        if folded in ("over", "under"):
            return folded
        raise _BadMarket(f"totals outcome {name[:40]!r} is neither Over nor Under")
    if name == names[0]:
        return "home"
    if name == names[1]:
        return "away"
    if _same_team(name, home):
        return "home"
    if _same_team(name, away):
        return "away"
    if base != "spreads" and name.casefold() in ("draw", "tie"):
        return "draw"
    raise _BadMarket(f"outcome {name[:40]!r} is neither team")


def _same_team(name: str, t: Team) -> bool:
    try:
        return team(t.competition, name).team_id == t.team_id
    except UnknownTeam:
        return False


def _record(
    index: int, path: str, text: str, event: OddsEvent, names: tuple[str, str], competition: str, sport: str,
    home: Team, away: Team, quotes: list[_Quote], seen_at: datetime, team_ts: tuple[datetime, datetime],
    ingest_ts: datetime,
) -> Record:
    kickoff = event.commence_time
    sides = ((home, names[0]), (away, names[1]))
    claim = GameClaim(
        SOURCE, event.id, competition, home.team_id, away.team_id, kickoff, None,
        season_label(competition, local_day(competition, kickoff)), None,
    )

    def build(res: Resolution) -> list[AnyEvent]:
        resolved = res.game(claim)
        game_id = resolved.game_id
        events: list[AnyEvent] = [
            TeamRegistered(
                source=SOURCE, source_id=called, source_ts=ts, ingest_ts=ingest_ts, team_id=t.team_id,
                sport=sport, competition=competition, name=t.name, abbreviation=t.abbreviation,
                aliases=sorted({*t.aliases, called} - {t.name}), known_by=[KnownBy(SOURCE, called)],
            )
            for (t, called), ts in zip(sides, team_ts)
        ]
        events.append(GameScheduled(
            source=SOURCE, source_id=event.id, source_ts=seen_at, ingest_ts=ingest_ts, game_id=game_id,
            sport=sport, competition=competition, season=claim.season, name=f"{names[1]} at {names[0]}",
            home_team_id=home.team_id, away_team_id=away.team_id, kickoff_at=kickoff,
            known_by=[KnownBy(SOURCE, event.id)],
        ))
        if resolved.seen_before and resolved.kickoff_at != kickoff:
            events.append(GameRescheduled(
                source=SOURCE, source_id=event.id, source_ts=seen_at, ingest_ts=ingest_ts, game_id=game_id,
                kickoff_at=kickoff,
            ))
        market_ids: dict[tuple[str, str, str], str] = {}
        for q in quotes:
            mkey = (q.kind, q.market_type, q.period)
            market_id = market_ids.get(mkey)
            if market_id is None:
                market_id = market_ids[mkey] = natural_keys.market_id(game_id, q.kind, q.market_type, q.period, None)
            events.append(PriceQuoted(
                source=SOURCE, source_id=event.id, source_ts=q.at, ingest_ts=ingest_ts, game_id=game_id,
                market_id=market_id, book=q.book, book_name=q.book_name, kind=q.kind, market_type=q.market_type,
                period=q.period, point=q.point, outcomes=q.outcomes,
            ))
        return events

    identities = tuple(Identity("team", SOURCE, called, t.team_id) for t, called in sides)
    # every quote's prices and points were checked in _quotes (price_ok, point_ok), once
    return Record(index, path, text, build, claims=(claim,), identities=identities, quotes_checked=True)
