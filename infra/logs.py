"""structlog set-up: JSON lines when stderr is not a terminal, readable lines when it is."""

from __future__ import annotations

import logging
import sys

import structlog

from infra.settings import Settings

_REDACT = ("authorization", "api_key", "key", "token", "secret", "password", "ticket")


def _redact(_, __, event_dict: dict) -> dict:
    """No credential reaches a log line, whoever logs it."""
    for name in list(event_dict):
        if name.lower() in _REDACT:
            event_dict[name] = "[redacted]"
    return event_dict


def configure_logging(settings: Settings, process: str) -> None:
    as_json = settings.log_json if settings.log_json is not None else not sys.stderr.isatty()
    level = logging.getLevelName(settings.log_level.upper())
    renderer = structlog.processors.JSONRenderer() if as_json else structlog.dev.ConsoleRenderer(colors=False)
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            _redact,
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(level if isinstance(level, int) else logging.INFO),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=False,
    )
    structlog.contextvars.bind_contextvars(process=process)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="%(levelname)s %(name)s %(message)s")
