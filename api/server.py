"""Entry point for the ASGI server (h2corn by default, infra/api_server.py): `api.server:app` built from the environment."""

from __future__ import annotations

from api.app import create_app
from infra.logs import configure_logging
from infra.settings import load_settings

_settings = load_settings()
configure_logging(_settings, "api")
app = create_app(_settings, freeze_gc=True)
