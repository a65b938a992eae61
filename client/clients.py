"""`Client` (sync) and `AsyncClient`: the same resources, run over httpx."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from typing import Any

import httpx

from ._core import DEFAULT_TIMEOUT, Call, Core
from .errors import APIConnectionError, APITimeoutError
from .pages import AsyncPage, Page
from . import resources as r


class _Resources:
    def _attach(self) -> None:
        self.games = r.Games(self)
        self.markets = r.Markets(self)
        self.players = r.Players(self)
        self.slate = r.SlateResource(self)
        self.search = r.Search(self)
        self.sports = r.Sports(self)
        self.competitions = r.Competitions(self)
        self.reference = r.Reference(self)
        self.formulas = r.Formulas(self)
        self.strategies = r.Strategies(self)
        self.calculations = r.Calculations(self)
        self.wire_tickets = r.WireTickets(self)
        self._service = r.Service(self)

    def health(self):
        return self._service.health()

    def status(self):
        return self._service.status()

    def request(self, method: str, path: str, *, params: Mapping[str, Any] | None = None, body: Any = None,
                idempotency_key: str | None = None, headers: Mapping[str, str] | None = None):
        """Any route, answered as the API's JSON (dicts and lists, nothing dropped): the same
        headers, retries and problems as the typed resources. `path` is the API's (`/v1/games`)."""
        return self._call(Call(method.upper(), path, Any, params=params or {}, body=body,
                               idempotency_key=idempotency_key, headers=headers or {}))


def _no_answer(exc: httpx.TransportError) -> APIConnectionError:
    if isinstance(exc, httpx.TimeoutException):
        return APITimeoutError(str(exc) or type(exc).__name__)
    return APIConnectionError(str(exc) or type(exc).__name__)


class Client(_Resources):
    """Synchronous client.

    `Client(base_url="http://127.0.0.1:8000", api_key="svc_live_...")`; `http_client` lends an
    httpx.Client of your own (its transport, proxies, pool), which the client then does not close.
    """

    def __init__(self, base_url: str = "http://127.0.0.1:8000", api_key: str | None = None, *,
                 api_version: str | None = None, timeout: float | httpx.Timeout | None = None,
                 max_retries: int = 2, max_retry_wait: float = 60.0,
                 http_client: httpx.Client | None = None) -> None:
        self._core = Core(base_url, api_key, api_version, max_retries, max_retry_wait)
        self._owns_http = http_client is None
        self._http = http_client or httpx.Client(timeout=timeout if timeout is not None else DEFAULT_TIMEOUT)
        self._attach()

    @property
    def wire(self):
        from .wire import Wire
        return Wire(self)

    def _send(self, call: Call) -> httpx.Response:
        method, url, params, headers, body = self._core.build(call)
        attempt = 0
        while True:
            try:
                response = self._http.request(method, url, params=params, headers=headers, content=body)
            except httpx.TransportError as exc:
                wait = self._core.retry_wait(attempt, None)
                if wait is None:
                    raise _no_answer(exc) from exc
            else:
                if response.status_code < 400:
                    return response
                wait = self._core.retry_wait(attempt, response)
                if wait is None:
                    raise self._core.error(response)
            time.sleep(wait)
            attempt += 1

    def _call(self, call: Call) -> Any:
        value = self._core.decode(call, self._send(call))
        if call.paged:
            return Page(value, lambda cursor: self._call(call.with_cursor(cursor)))
        return value

    def close(self) -> None:
        if self._owns_http:
            self._http.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncClient(_Resources):
    """Asynchronous client: the same resources, every method a coroutine."""

    def __init__(self, base_url: str = "http://127.0.0.1:8000", api_key: str | None = None, *,
                 api_version: str | None = None, timeout: float | httpx.Timeout | None = None,
                 max_retries: int = 2, max_retry_wait: float = 60.0,
                 http_client: httpx.AsyncClient | None = None) -> None:
        self._core = Core(base_url, api_key, api_version, max_retries, max_retry_wait)
        self._owns_http = http_client is None
        self._http = http_client or httpx.AsyncClient(timeout=timeout if timeout is not None else DEFAULT_TIMEOUT)
        self._attach()

    @property
    def wire(self):
        from .wire import AsyncWire
        return AsyncWire(self)

    async def _send(self, call: Call) -> httpx.Response:
        method, url, params, headers, body = self._core.build(call)
        attempt = 0
        while True:
            try:
                response = await self._http.request(method, url, params=params, headers=headers, content=body)
            except httpx.TransportError as exc:
                wait = self._core.retry_wait(attempt, None)
                if wait is None:
                    raise _no_answer(exc) from exc
            else:
                if response.status_code < 400:
                    return response
                wait = self._core.retry_wait(attempt, response)
                if wait is None:
                    raise self._core.error(response)
            await asyncio.sleep(wait)
            attempt += 1

    async def _call(self, call: Call) -> Any:
        value = self._core.decode(call, await self._send(call))
        if call.paged:
            return AsyncPage(value, lambda cursor: self._call(call.with_cursor(cursor)))
        return value

    async def aclose(self) -> None:
        if self._owns_http:
            await self._http.aclose()

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
