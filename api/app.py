"""The REST app: Litestar routes over Postgres read models, behind the front door."""

from __future__ import annotations

import asyncio
from contextlib import asynccontextmanager

import structlog
from litestar import Litestar
from litestar.openapi import OpenAPIConfig
from litestar.openapi.plugins import ScalarRenderPlugin, SwaggerRenderPlugin
from litestar.openapi.spec import Components, SecurityScheme, Server
from litestar.plugins.prometheus import PrometheusController

from access.address import trusted_networks
from api.access.docs import AccessDocs
from access.limiter import shared_redis
from api.access.middleware import AccessMiddleware
from api.errors import EXCEPTION_HANDLERS
from api.front import API_VERSION, FrontDoor
from api.kept import KeptStore
from api.listen import Listener
from api.openapi import RequestChecksDocs
from api.orderly_stop import take_stop_signals
from api.read_cache import ReadCacheMiddleware
from api.request_checks import check_request
from api.routes import discover
from api.state import AppState
from api.stream_cors import StreamCors
from api.wire_serving import STOP_GRACE_SECONDS, live_connections
from infra import gcwatch
from infra.db import create_pool, keep_session
from infra.memory import keep_frozen
from infra.migrate import migrate
from infra.settings import Settings, load_settings
from schemas.datasets import DATASETS, pg_schema

log = structlog.get_logger("api")
LISTEN_WAIT_SECONDS = 1.0  # at start-up; a database that is down must not hold the start longer


class MetricsController(PrometheusController):
    include_in_schema = False

OPENAPI_DESCRIPTION = """\
Sports reference data, games, consensus prices and no-vig probabilities, players, and betting
maths. Every value carries its `source` and `as_of`. Results are never ordered by a betting
measure. Anything touching wagering carries `rg_line`, which a client must display.

Send an API key only as `Authorization: Bearer <key>`; a credential in the URL is refused.
`Api-Version` selects the version (only `2026-10-05`). Errors are RFC 9457 problem objects.
"""


def openapi_config() -> OpenAPIConfig:
    return OpenAPIConfig(
        title="svc API",
        version=API_VERSION,
        description=OPENAPI_DESCRIPTION,
        path="/schema",
        render_plugins=[ScalarRenderPlugin(), SwaggerRenderPlugin()],
        servers=[Server(url="/")],
        components=Components(
            security_schemes={"bearer": SecurityScheme(type="http", scheme="bearer", description="API key")}
        ),
        use_handler_docstrings=True,
    )


def _lifespan(app_state: AppState):
    @asynccontextmanager
    async def lifespan(app: Litestar):
        settings = app_state.settings
        if settings.database_url:
            # min_size=0: the process starts and answers /health even while the database is down
            # the API keeps no session state on its connections (SET LOCAL at most)
            app_state.pool = await create_pool(settings.database_url, min_size=0, max_size=20, reset=keep_session)
            try:
                async with app_state.pool.acquire() as conn:
                    await migrate(conn)
            except Exception as exc:  # health reports it; routes answer service_unavailable
                log.warning("migrations not applied at start", error=str(exc))
            # revocations and read-model changes; until it connects, callers ask the database
            app_state.listener = Listener(settings.database_url, [pg_schema(d) for d in DATASETS])
            app_state.kept = KeptStore()  # kept by this listener's versions only
            app_state.listener.start()
            await app_state.listener.wait_connected(LISTEN_WAIT_SECONDS)
        if settings.redis_url:
            app_state.redis = shared_redis(settings.redis_url)
        # close Wire sockets and streams in order before the server stops serving
        take_stop_signals(asyncio.get_running_loop(), live_connections(app_state).close_all, STOP_GRACE_SECONDS)
        if app_state.freeze_gc:  # a server process: what start-up made, and open connections, live long
            gcwatch.watch()
            keep_frozen()  # the collector skips them (infra/memory.py)
        try:
            yield
        finally:
            for extra in list(app_state.extras.values()):  # e.g. the Wire fan-out's consumer, credit leases
                if hasattr(extra, "aclose"):
                    await extra.aclose()
            if app_state.listener is not None:
                await app_state.listener.aclose()
            if app_state.pool is not None:
                await app_state.pool.close()
            if app_state.redis is not None:
                await app_state.redis.aclose()

    return lifespan


def create_litestar(settings: Settings, freeze_gc: bool = False) -> Litestar:
    """The Litestar app without the front door (for OpenAPI generation and unit tests)."""
    app_state = AppState(settings=settings, freeze_gc=freeze_gc)
    app = Litestar(
        route_handlers=[*discover(), MetricsController],
        # request metrics are recorded by the front door (api/metrics.py)
        middleware=[StreamCors(), AccessMiddleware(), ReadCacheMiddleware()],
        before_request=check_request,
        plugins=[AccessDocs(), RequestChecksDocs()],
        exception_handlers=EXCEPTION_HANDLERS,
        openapi_config=openapi_config(),
        lifespan=[_lifespan(app_state)],
        logging_config=None,
        debug=False,
    )
    app.state.app_state = app_state
    app.state.settings = settings
    return app


def create_app(settings: Settings | None = None, freeze_gc: bool = False) -> FrontDoor:
    """The served ASGI app: the front door around Litestar. `freeze_gc`: for a server process,
    whose start-up objects live as long as it does (not for tests, which start many apps)."""
    settings = settings or load_settings()
    trusted_networks(settings.trusted_proxies)  # a bad SVC_TRUSTED_PROXIES stops the start, not every request
    return FrontDoor(create_litestar(settings, freeze_gc), docs_url=settings.docs_url)
