"""What `svc doctor` checks: each part of the stack, where it runs, whether it answers."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
from aiokafka.admin import AIOKafkaAdminClient

from infra.db import connect
from infra.migrate import is_migrated
from infra.settings import Settings

TIMEOUT = 3.0


def _pid(run_dir: Path, name: str) -> int | None:
    """The pid recorded for a child, if that process is alive."""
    try:
        pid = int((run_dir / f"{name}.pid").read_text())
        os.kill(pid, 0)
        return pid
    except (FileNotFoundError, ValueError, ProcessLookupError):
        return None
    except PermissionError:  # alive, owned by another user (embedded Postgres under root)
        return pid


def _address(url: str) -> str:
    """host:port/database of a URL, never its credentials."""
    parts = urlsplit(url)
    return f"{parts.hostname}:{parts.port or 5432}{parts.path}"


async def _broker(settings: Settings) -> dict[str, Any]:
    if not settings.kafka_bootstrap:
        return {"address": None, "ok": False, "error": "no broker known (svc up not running, KAFKA_BOOTSTRAP unset)"}
    admin = AIOKafkaAdminClient(bootstrap_servers=settings.kafka_bootstrap, request_timeout_ms=int(TIMEOUT * 1000))
    try:
        async with asyncio.timeout(TIMEOUT):
            await admin.start()
            topics = await admin.list_topics()
        return {"address": settings.kafka_bootstrap, "ok": True, "topics": len(topics)}
    except Exception as exc:
        return {"address": settings.kafka_bootstrap, "ok": False, "error": type(exc).__name__}
    finally:
        await admin.close()


async def _postgres(settings: Settings) -> dict[str, Any]:
    if not settings.database_url:
        return {"address": None, "ok": False, "error": "no database known (svc up not running, DATABASE_URL unset)"}
    address = _address(settings.database_url)
    try:
        async with asyncio.timeout(TIMEOUT):
            conn = await connect(settings.database_url)
            try:
                return {"address": address, "ok": True, "migrated": await is_migrated(conn)}
            finally:
                await conn.close()
    except Exception as exc:
        return {"address": address, "ok": False, "error": type(exc).__name__}


async def _redis(settings: Settings) -> dict[str, Any]:
    if not settings.redis_url:
        return {"address": None, "ok": None, "note": "not configured: rate limits count in process"}
    import redis.asyncio as redis

    client = redis.from_url(settings.redis_url, socket_timeout=TIMEOUT)
    address = _address(settings.redis_url).split("/")[0]
    try:
        return {"address": address, "ok": bool(await client.ping())}
    except Exception as exc:
        return {"address": address, "ok": False, "error": type(exc).__name__}
    finally:
        await client.aclose()


async def _api(settings: Settings) -> dict[str, Any]:
    url = f"http://{settings.host}:{settings.port}"
    try:
        async with httpx.AsyncClient(timeout=TIMEOUT) as client:
            body = (await client.get(f"{url}/health")).json()
        return {"address": url, "ok": bool(body.get("ok")), "db": body.get("db"), "migrated": body.get("migrated")}
    except Exception as exc:
        return {"address": url, "ok": False, "error": type(exc).__name__}


def _log(settings: Settings) -> dict[str, Any]:
    """Where the log is kept: the embedded stack's copy on disk (records per topic), or Kafka."""
    from infra.log_copy import describe

    return describe(settings)


def _process(settings: Settings, name: str) -> dict[str, Any]:
    pid = _pid(settings.run_dir, name)
    return {"address": f"pid {pid}" if pid else None, "pid": pid, "ok": pid is not None}


async def diagnose(settings: Settings) -> dict[str, dict[str, Any]]:
    broker, postgres, redis_, api = await asyncio.gather(
        _broker(settings), _postgres(settings), _redis(settings), _api(settings)
    )
    report = {"broker": broker, "postgres": postgres, "redis": redis_, "api": api,
              "projector": _process(settings, "projector"), "supervisor": _process(settings, "supervisor"),
              "log": _log(settings)}
    for name in ("broker", "postgres"):
        pid = _pid(settings.run_dir, name)
        if pid:
            report[name]["pid"] = pid
    return report


def healthy(report: dict[str, dict[str, Any]]) -> bool:
    """Every configured part answers (Redis unconfigured is fine: `ok` is null)."""
    return all(part["ok"] is not False for part in report.values())
