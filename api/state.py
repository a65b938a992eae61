"""What the app holds for its lifetime: settings and connections (None when not configured)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import asyncpg

from api.kept import KeptStore
from api.listen import Listener
from infra.settings import Settings


@dataclass
class AppState:
    settings: Settings
    pool: asyncpg.Pool | None = None
    redis: Any | None = None  # redis.asyncio.Redis when REDIS_URL is set
    listener: Listener | None = None  # Postgres notifications (api/listen.py), with a database
    kept: KeptStore = field(default_factory=KeptStore)  # responses kept by the listener's versions (api/read_cache.py)
    extras: dict[str, Any] = field(default_factory=dict)
    freeze_gc: bool = False  # gc.freeze() once started (a server process)
