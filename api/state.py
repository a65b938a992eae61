"""What the app holds for its lifetime: settings and connections (None when not configured)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import asyncpg

from api.conventions import cursor_key
from api.kept import KeptStore, Store
from api.listen import Listener
from infra.settings import Settings


@dataclass
class AppState:
    settings: Settings
    pool: asyncpg.Pool | None = None
    redis: Any | None = None  # redis.asyncio.Redis when REDIS_URL is set
    listener: Listener | None = None  # Postgres notifications (api/listen.py), with a database
    kept: KeptStore = field(default_factory=KeptStore)  # responses kept by the listener's versions (api/read_cache.py)
    # parts of responses kept by the versions of the fewer tables they read (api/read_cache.py
    # part_version), keyed (part name, version, ...). This app's own: the versions count this
    # app's listener's notifications, so another app's equal version says nothing of this one's data
    parts: Store[Any] = field(default_factory=lambda: Store(max_items=2048))
    extras: dict[str, Any] = field(default_factory=dict)
    freeze_gc: bool = False  # gc.freeze() once started (a server process)
    _cursor_key: bytes | None = None

    def cursor_key(self) -> bytes:
        """The key that signs paging cursors (api.conventions), from the service secret, which every
        API process of a deployment shares: a cursor from one process pages on any other."""
        if self._cursor_key is None:
            self._cursor_key = cursor_key(self.settings.secret())
        return self._cursor_key
