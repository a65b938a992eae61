"""Resources as attributes of a client: `client.games.list(...)`, `client.games.retrieve(id)`.

Each method describes its call; the client it belongs to runs it (sync: the value; async: a
coroutine of it). Query parameters keep the API's names; `from_` stands for `from`.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any
from urllib.parse import quote

from ._core import Call
from .models import (
    Calculation, Competition, Formula, Game, GameDetail, Health, ListEnvelope, Market, MarketDetail,
    Player, ReferenceEntry, SearchResult, Slate, Sport, Status, Strategy, WireTicket,
)


def _id(value: str) -> str:
    return quote(value, safe="")


class Resource:
    def __init__(self, client: Any) -> None:
        self._client = client

    def _run(self, call: Call) -> Any:
        return self._client._call(call)


class Games(Resource):
    def list(self, *, competition: str | None = None, season: str | int | None = None, week: int | None = None,
             status: str | None = None, from_: datetime | str | None = None, to: datetime | str | None = None,
             limit: int | None = None, cursor: str | None = None):
        return self._run(Call("GET", "/v1/games", ListEnvelope[Game], paged=True, params=dict(
            competition=competition, season=season, week=week, status=status, from_=from_, to=to,
            limit=limit, cursor=cursor)))

    def retrieve(self, game_id: str):
        return self._run(Call("GET", f"/v1/games/{_id(game_id)}", GameDetail))


class Markets(Resource):
    def list(self, *, game_id: str | None = None, kind: str | None = None, type: str | None = None,
             period: str | None = None, limit: int | None = None, cursor: str | None = None):
        return self._run(Call("GET", "/v1/markets", ListEnvelope[Market], paged=True, params=dict(
            game_id=game_id, kind=kind, type=type, period=period, limit=limit, cursor=cursor)))

    def retrieve(self, market_id: str, *, devig: str | None = None):
        return self._run(Call("GET", f"/v1/markets/{_id(market_id)}", MarketDetail, params=dict(devig=devig)))


class Players(Resource):
    def retrieve(self, player_id: str):
        return self._run(Call("GET", f"/v1/players/{_id(player_id)}", Player))


class SlateResource(Resource):
    def retrieve(self, *, date: date | str | None = None, tz: str | None = None, sport: str | None = None,
                 competition: str | None = None, status: str | None = None, limit: int | None = None,
                 cursor: str | None = None):
        """The slate for a day: a page of games (`page.envelope` is the whole `Slate`)."""
        return self._run(Call("GET", "/v1/slate", Slate, paged=True, params=dict(
            date=date, tz=tz, sport=sport, competition=competition, status=status, limit=limit, cursor=cursor)))

    list = retrieve


class Search(Resource):
    def list(self, q: str, *, kind: str | None = None, competition: str | None = None,
             limit: int | None = None, cursor: str | None = None):
        return self._run(Call("GET", "/v1/search", ListEnvelope[SearchResult], paged=True, params=dict(
            q=q, kind=kind, competition=competition, limit=limit, cursor=cursor)))

    __call__ = list


class Sports(Resource):
    def list(self):
        return self._run(Call("GET", "/v1/sports", ListEnvelope[Sport], paged=True))


class Competitions(Resource):
    def list(self, *, sport: str | None = None, limit: int | None = None, cursor: str | None = None):
        return self._run(Call("GET", "/v1/competitions", ListEnvelope[Competition], paged=True,
                              params=dict(sport=sport, limit=limit, cursor=cursor)))


class Reference(Resource):
    def list(self, *, q: str | None = None, kind: str | None = None, jurisdiction: str | None = None,
             product: str | None = None, operator: str | None = None, limit: int | None = None,
             cursor: str | None = None):
        return self._run(Call("GET", "/v1/reference", ListEnvelope[ReferenceEntry], paged=True, params=dict(
            q=q, kind=kind, jurisdiction=jurisdiction, product=product, operator=operator, limit=limit,
            cursor=cursor)))

    def retrieve(self, topic_id: str):
        return self._run(Call("GET", f"/v1/reference/{_id(topic_id)}", ReferenceEntry))


class Formulas(Resource):
    def list(self):
        return self._run(Call("GET", "/v1/formulas", ListEnvelope[Formula], paged=True))

    def retrieve(self, card_id: str):
        return self._run(Call("GET", f"/v1/formulas/{_id(card_id)}", Formula))


class Strategies(Resource):
    def list(self, *, family: str | None = None, verdict: str | None = None, route: str | None = None):
        return self._run(Call("GET", "/v1/strategies", ListEnvelope[Strategy], paged=True,
                              params=dict(family=family, verdict=verdict, route=route)))

    def retrieve(self, strategy_id: str):
        return self._run(Call("GET", f"/v1/strategies/{_id(strategy_id)}", Strategy))


class Calculations(Resource):
    """The betting-maths calculations: keyword arguments are the request body's members."""

    def _calc(self, name: str, body: dict[str, Any], idempotency_key: str | None):
        return self._run(Call("POST", f"/v1/calculations/{name}", Calculation,
                              body={k: v for k, v in body.items() if v is not None},
                              idempotency_key=idempotency_key))

    def devig(self, *, odds: list, method: str | None = None, format: str | None = None,
              idempotency_key: str | None = None, **extra: Any):
        return self._calc("devig", dict(odds=odds, method=method, format=format, **extra), idempotency_key)

    def convert(self, *, idempotency_key: str | None = None, **body: Any):
        return self._calc("convert", body, idempotency_key)

    def payout(self, *, idempotency_key: str | None = None, **body: Any):
        return self._calc("payout", body, idempotency_key)

    def parlay(self, *, idempotency_key: str | None = None, **body: Any):
        return self._calc("parlay", body, idempotency_key)

    def ev(self, *, idempotency_key: str | None = None, **body: Any):
        return self._calc("ev", body, idempotency_key)

    def kelly(self, *, idempotency_key: str | None = None, **body: Any):
        return self._calc("kelly", body, idempotency_key)

    def arbitrage(self, *, idempotency_key: str | None = None, **body: Any):
        return self._calc("arbitrage", body, idempotency_key)

    def middle(self, *, idempotency_key: str | None = None, **body: Any):
        return self._calc("middle", body, idempotency_key)

    def clv(self, *, idempotency_key: str | None = None, **body: Any):
        return self._calc("clv", body, idempotency_key)


class WireTickets(Resource):
    def create(self, *, topics: list[str] | None = None, transport: str = "ws", mode: str | None = None,
               idempotency_key: str | None = None):
        body: dict[str, Any] = {"transport": transport}
        if topics is not None:
            body["topics"] = topics
        if mode is not None:
            body["mode"] = mode
        return self._run(Call("POST", "/v1/wire/tickets", WireTicket, body=body, idempotency_key=idempotency_key))


class Service(Resource):
    def health(self):
        return self._run(Call("GET", "/health", Health))

    def status(self):
        return self._run(Call("GET", "/v1/status", Status))
