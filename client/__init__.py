"""Typed Python client for the svc API and its Wire.

    from client import Client
    with Client(base_url="http://127.0.0.1:8000", api_key="svc_live_...") as svc:
        page = svc.games.list(competition="nfl", season=2024, week=1)
        for game in page.auto_paging_iter():
            print(game.name, game.score)
"""

from .clients import AsyncClient, Client
from .errors import (
    APIConnectionError, APIError, APITimeoutError, AuthenticationError, ConflictError, GoneError,
    InvalidRequestError, NotFoundError, PermissionDeniedError, QuotaExhaustedError, RateLimitError,
    ServerError, SvcError, UnprocessableError,
)
from .pages import AsyncPage, Page
from . import models

__all__ = [
    "Client", "AsyncClient", "Page", "AsyncPage", "models",
    "SvcError", "APIError", "APIConnectionError", "APITimeoutError", "AuthenticationError", "ConflictError",
    "GoneError", "InvalidRequestError", "NotFoundError", "PermissionDeniedError", "QuotaExhaustedError",
    "RateLimitError", "ServerError", "UnprocessableError",
]
