"""Every setting of the service in one object, read from the environment.

Precedence: environment variable > what `svc up` recorded in `<data-dir>/stack.json` > default.
This is the only module that reads configuration from the environment.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import Annotated, Any, Literal

import msgspec

STACK_FILE = "stack.json"
DEFAULT_DATA_DIR = ".svc"


class Settings(msgspec.Struct, kw_only=True, frozen=True):
    # where `svc up` keeps pid files, logs, the embedded Postgres and the stack record
    data_dir: Path = Path(DEFAULT_DATA_DIR)
    host: str = "127.0.0.1"
    port: int = 8000
    # external parts; unset means the embedded default (or none, for Redis)
    kafka_bootstrap: str | None = None
    database_url: str | None = None
    redis_url: str | None = None
    # prefix for every topic name, so several deployments (or tests) share one cluster
    topic_namespace: str = ""
    # partitions of the feed topics; keyed by entity, so per-game order holds. Partitions are
    # the unit of replay parallelism (one worker per core), so more than the cores buys nothing
    # on one machine, and on the embedded broker every partition's stored batches cost each fetch
    # (docs/benchmarks.md, "Live p99"): 2 here, more on a real Kafka cluster with more cores
    topic_partitions: Annotated[int, msgspec.Meta(ge=1)] = 2
    # partitions of `wire.deltas`; keyed by Wire topic, so each topic's seqs stay in order. Every
    # API process reads the whole topic (its fan-out), so partitions buy no consumer parallelism
    # here; one means one stored batch per relay send
    delta_partitions: Annotated[int, msgspec.Meta(ge=1)] = 1
    # Kafka's idempotent producer; the embedded tansu broker refuses it (InitProducerId fails)
    kafka_idempotence: bool = False
    # books whose newest quote is older than this (event time) drop out of consensus
    consensus_window_seconds: int = 3600
    # records per batch when the projector catches up from its tracked offsets (bigger: faster
    # catch-up; smaller: shorter stretches between commits)
    catch_up_batch: Annotated[int, msgspec.Meta(ge=1)] = 20_000
    # records a dataset's live path (faust) may fall behind the log before the projector hands
    # its partitions back to the bulk path in-process, until it is at the head again
    live_far_behind: Annotated[int, msgspec.Meta(ge=1)] = 10_000
    # the fetch wait (ms) the live path (faust) starts with; None: projections.faust_adapter's
    # FETCH_MAX_WAIT_MS (10, the reasons there), or infra.kafka.LONG_POLL_WAIT_MS (500) where the
    # broker long-polls (broker_long_poll). The projector widens it while fetches come back
    # without records though the log holds more (runner.Projector.keep_up)
    live_fetch_wait_ms: Annotated[int, msgspec.Meta(ge=1)] | None = None
    # the broker answers a waiting fetch as soon as records arrive (Kafka does, and so does the
    # log keeper `svc up` runs, which sets this for its children; a bare tansu does not): the
    # consumers that wait for new records (the live path, the Wire's fan-out) then ask for long
    # waits (infra.kafka.LONG_POLL_WAIT_MS) instead of the short polls that cost idle CPU
    broker_long_poll: bool = False
    # rebuild and verify: worker processes that replay partitions in parallel (0: one per core;
    # 1: replay in the calling process), used once at least `replay_parallel_min` records are
    # to be replayed (starting workers costs about a second)
    replay_workers: Annotated[int, msgspec.Meta(ge=0)] = 0
    replay_parallel_min: Annotated[int, msgspec.Meta(ge=0)] = 50_000
    # `svc ingest`: parse and build a file in a forked worker process (ingest/worker.py): None,
    # for files of WORKER_MIN_RECORDS source records or more; False: never; True: always
    ingest_worker: bool | None = None
    # how fast `svc up` plays the sandbox day: N times real speed, or "max"
    sandbox_speed: str = "60"
    api_workers: int = 1
    # the ASGI server of the API (infra/api_server.py): h2corn serves REST about as fast as granian
    # and holds an idle Wire socket in about 10 KiB where granian needs about 143 (docs/benchmarks.md)
    api_server: Literal["h2corn", "granian", "uvicorn"] = "h2corn"
    # `svc up` restarts a child that died after 1 s, doubling the wait on each quick death up to
    # this many seconds (a child that stayed up a minute starts again from 1 s)
    restart_backoff_max: Annotated[float, msgspec.Meta(ge=1)] = 30.0
    # the projector is stalled when behind the log with no progress for this long: `svc doctor`
    # fails on it and the projector exits for a restart (so too for a database out of reach that
    # long). Shorter only to try the rule without waiting (tests)
    stall_after_seconds: Annotated[float, msgspec.Meta(gt=0)] = 30.0
    # the longest the projector's stop may take before the process ends itself (of that, faust's
    # own stop is waited for 60%: it leaves its consumer group, several seconds on a busy machine,
    # and never ends at a broker that does not answer). Shorter only to try those stops (tests)
    projector_stop_seconds: Annotated[float, msgspec.Meta(gt=0)] = 25.0
    log_level: str = "info"
    log_json: bool | None = None  # None: JSON when stderr is not a TTY
    # `svc up`'s child logs (<data-dir>/logs/<child>.log): rotated at this size (0: never), this
    # many rotated files kept (<child>.log.1 newest); at most (backups + 1) x size per child
    log_max_bytes: Annotated[int, msgspec.Meta(ge=0)] = 10 * 1024 * 1024
    log_backups: Annotated[int, msgspec.Meta(ge=0)] = 5
    docs_url: str = "https://docs.svc.dev"
    # HMAC secret for API-key hashes; generated into the data dir when unset
    key_secret: str | None = None
    # reverse proxies whose X-Forwarded-For is believed (comma-separated addresses or CIDRs)
    trusted_proxies: str = ""
    # browser origins allowed to use wire tickets (comma-separated, e.g. https://app.example.com), by
    # the credential that minted them: API keys, the first-party site's session, a card tool
    # (wire/origins.py). Empty: no browser. Clients that send no Origin (servers, scripts) pass
    wire_origins: str = ""
    wire_first_party_origins: str = ""
    wire_card_origins: str = ""
    # Wire streams: seconds between keep-alive pings, and the longest a stream stays open
    wire_ping_seconds: Annotated[float, msgspec.Meta(gt=0)] = 20.0
    wire_max_seconds: Annotated[int, msgspec.Meta(ge=60)] = 86_400
    # how long a dropped Wire session stays resumable and missed deltas are kept for replay (120 s
    # is the Wire's promise to clients); shorter only to try resumes without waiting minutes
    wire_resume_seconds: Annotated[int, msgspec.Meta(ge=1)] = 120
    # each Wire connection's send queue (deltas waiting for the client): past half of either bound
    # the client is warned (`slow_consumer`), past either the socket closes with 4108 (a stream
    # drops what is pending and starts over from a snapshot)
    wire_send_queue_messages: Annotated[int, msgspec.Meta(ge=2)] = 5_000
    wire_send_queue_bytes: Annotated[int, msgspec.Meta(ge=1024)] = 8 * 1024 * 1024
    # the API's address as clients see it (e.g. https://api.example.com), for the URLs the API
    # hands out (wire tickets); unset: the address the request came to
    public_url: str | None = None

    @property
    def stack_file(self) -> Path:
        return self.data_dir / STACK_FILE

    @property
    def run_dir(self) -> Path:
        return self.data_dir / "run"

    def require_bootstrap(self) -> str:
        if not self.kafka_bootstrap:
            raise RuntimeError(
                "no Kafka broker known: set KAFKA_BOOTSTRAP or start the stack with `svc up`"
            )
        return self.kafka_bootstrap

    def require_database(self) -> str:
        if not self.database_url:
            raise RuntimeError(
                "no database known: set DATABASE_URL or start the stack with `svc up`"
            )
        return self.database_url

    def secret(self) -> str:
        """The key-hash secret: configured, or created once per data dir (mode 0600)."""
        if self.key_secret:
            return self.key_secret
        path = self.data_dir / "secret"
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as f:
                f.write(secrets.token_hex(32))
        return path.read_text().strip()


# environment variable -> field; documented in the README's configuration table
ENV_VARS: dict[str, str] = {
    "SVC_DATA_DIR": "data_dir",
    "SVC_HOST": "host",
    "SVC_PORT": "port",
    "KAFKA_BOOTSTRAP": "kafka_bootstrap",
    "DATABASE_URL": "database_url",
    "REDIS_URL": "redis_url",
    "SVC_TOPIC_NAMESPACE": "topic_namespace",
    "SVC_TOPIC_PARTITIONS": "topic_partitions",
    "SVC_DELTA_PARTITIONS": "delta_partitions",
    "SVC_KAFKA_IDEMPOTENCE": "kafka_idempotence",
    "SVC_CONSENSUS_WINDOW_SECONDS": "consensus_window_seconds",
    "SVC_CATCH_UP_BATCH": "catch_up_batch",
    "SVC_LIVE_FAR_BEHIND": "live_far_behind",
    "SVC_LIVE_FETCH_WAIT_MS": "live_fetch_wait_ms",
    "SVC_BROKER_LONG_POLL": "broker_long_poll",
    "SVC_REPLAY_WORKERS": "replay_workers",
    "SVC_REPLAY_PARALLEL_MIN": "replay_parallel_min",
    "SVC_INGEST_WORKER": "ingest_worker",
    "SVC_SANDBOX_SPEED": "sandbox_speed",
    "SVC_API_WORKERS": "api_workers",
    "SVC_API_SERVER": "api_server",
    "SVC_RESTART_BACKOFF_MAX": "restart_backoff_max",
    "SVC_STALL_AFTER_SECONDS": "stall_after_seconds",
    "SVC_PROJECTOR_STOP_SECONDS": "projector_stop_seconds",
    "SVC_LOG_LEVEL": "log_level",
    "SVC_LOG_JSON": "log_json",
    "SVC_LOG_MAX_BYTES": "log_max_bytes",
    "SVC_LOG_BACKUPS": "log_backups",
    "SVC_DOCS_URL": "docs_url",
    "SVC_KEY_SECRET": "key_secret",
    "SVC_TRUSTED_PROXIES": "trusted_proxies",
    "SVC_PUBLIC_URL": "public_url",
    "SVC_WIRE_ORIGINS": "wire_origins",
    "SVC_WIRE_FIRST_PARTY_ORIGINS": "wire_first_party_origins",
    "SVC_WIRE_CARD_ORIGINS": "wire_card_origins",
    "SVC_WIRE_PING_SECONDS": "wire_ping_seconds",
    "SVC_WIRE_MAX_SECONDS": "wire_max_seconds",
    "SVC_WIRE_RESUME_SECONDS": "wire_resume_seconds",
    "SVC_WIRE_SEND_QUEUE_MESSAGES": "wire_send_queue_messages",
    "SVC_WIRE_SEND_QUEUE_BYTES": "wire_send_queue_bytes",
}

# what `svc up` records for the other commands to find the running parts
STACK_FIELDS = ("kafka_bootstrap", "database_url", "redis_url", "host", "port", "topic_namespace")


def _from_env(env: dict[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for var, field in ENV_VARS.items():
        raw = env.get(var)
        if raw is None or raw == "":
            continue
        out[field] = raw
    return out


def read_stack(data_dir: Path) -> dict[str, Any]:
    path = data_dir / STACK_FILE
    try:
        record = msgspec.json.decode(path.read_bytes())
    except (FileNotFoundError, msgspec.DecodeError):
        return {}
    return {k: v for k, v in record.items() if k in STACK_FIELDS and v is not None}


def write_stack(settings: Settings, **extra: Any) -> None:
    record = {k: getattr(settings, k) for k in STACK_FIELDS}
    record.update(extra)
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    tmp = settings.stack_file.with_suffix(".tmp")
    tmp.write_bytes(msgspec.json.format(msgspec.json.encode(record)))
    tmp.replace(settings.stack_file)


def load_settings(
    data_dir: str | Path | None = None,
    env: dict[str, str] | None = None,
    use_stack: bool = True,
    **overrides: Any,
) -> Settings:
    """Build the settings: overrides > environment > stack record > defaults."""
    env = dict(os.environ) if env is None else env
    from_env = _from_env(env)
    if data_dir is not None:
        from_env["data_dir"] = str(data_dir)
    base_dir = Path(from_env.get("data_dir", DEFAULT_DATA_DIR))
    merged: dict[str, Any] = read_stack(base_dir) if use_stack else {}
    merged.update(from_env)
    merged.update({k: v for k, v in overrides.items() if v is not None})
    data_path = Path(merged.pop("data_dir", DEFAULT_DATA_DIR))  # msgspec does not convert Path
    return msgspec.structs.replace(msgspec.convert(merged, Settings, strict=False), data_dir=data_path)
