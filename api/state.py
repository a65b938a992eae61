"""What the app holds for its lifetime: settings and connections (None when not configured)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import asyncpg

from infra.settings import Settings


@dataclass
class AppState:
    settings: Settings
    pool: asyncpg.Pool | None = None
    redis: Any | None = None  # redis.asyncio.Redis when REDIS_URL is set
    extras: dict[str, Any] = field(default_factory=dict)
