"""Live answers: an answer whose figures come from topics that can still move (a market's
consensus, a game's state) is re-derived when one of them publishes a delta, and a new version
that says something different goes out on the answer's own Wire topic `answer:{answer_id}` as an
`answer.update` delta, superseding the version before (`supersedes`), seq = its version.

No question is needed (or kept): the answer's `basis`, stored with it, names the game it read and
the market types and devig method asked for (a slate: the day or week and competition), and re-derivation runs the same compute and compose
code as the first answer. The previous version's assumptions about how the question was read
(which game, which team) carry over.

A process re-derives an answer while one of its own connections follows the answer's topic (the
fan-out tells it: `DeltaFanout.watchers`). Several processes may follow one answer: the topic's
row is locked while one re-derives, and a process that finds the stored version already saying
what it derived publishes nothing. The delta goes on the dataset's `wire.deltas` like every
other (so every process's fan-out, resume and replay serve it); a crash between the commit and
the send leaves a seq gap, which clients answer with a snapshot (the gap rule).
"""

from __future__ import annotations

import asyncio
from datetime import datetime, timezone
from typing import Any

import asyncpg
import msgspec
import structlog
from aiokafka.errors import KafkaError

from api.answers import compose, compute, reads, store
from api.answers.categories import Category
from api.answers.facts import Facts
from infra.db import DATABASE_DOWN
from infra.kafka import make_producer, start_or_stop
from schemas.answers import Answer
from schemas.datasets import WIRE_DELTAS, pg_schema, topic_name
from domain.ids import RandomIds
from schemas.wire import Envelope, answer_topic, encode_envelope
from wire.fanout import DeltaFanout

log = structlog.get_logger("api.answers.live")
KIND = "answer"
DELTA_TYPE = "answer.update"
RETRY_SECONDS = 1.0
_ids = RandomIds("answer")
_encode = msgspec.json.Encoder().encode
_decode = msgspec.json.Decoder(Answer).decode
# assumptions the re-derivation makes again itself; the others (which game, team, season) were
# about reading the question and carry over
_REMADE = {"devig_method"}


def basis_bytes(basis: dict[str, Any] | None) -> bytes | None:
    return None if basis is None else msgspec.json.encode(basis)


async def rederive(conn: asyncpg.Connection, schema: str, basis: dict[str, Any], previous: Answer, new_id: str,
                   now: datetime) -> Answer | None:
    """The answer again from the read models as they are now, superseding `previous`; None when
    it can no longer be answered (its game or markets gone)."""
    category = Category(basis["category"])
    facts = Facts(category, wagering=category == Category.MARKET)
    try:
        if category == Category.SLATE:
            await compute.slate_of(conn, schema, facts, basis)
        else:
            row = await reads.game_by_id(conn, schema, basis["game_id"])
            if row is None:
                return None
            if category == Category.MARKET:
                types = set(basis["types"]) if basis.get("types") else None
                await compute.market_of(conn, schema, facts, row, types, basis.get("method"))
            elif category == Category.GAME:
                compute.game_of(facts, row)
            else:
                return None
    except compute.NotAnswerable:
        return None
    facts.assumptions = [a for a in previous.assumptions if a.kind not in _REMADE] + facts.assumptions
    help_links = {k: v for k, v in previous.links.items() if k in ("responsible_gambling", "law")}
    return compose.compose(facts, answer_id=new_id, created_at=now, rg_line=previous.rg_line, help_links=help_links,
                           request_id=None, expires_at=previous.expires_at, supersedes=previous.answer_id)


def _said(a: Answer) -> tuple:
    return ([(f.field, f.selection_id, f.value, f.display, f.topic) for f in a.figures],
            [s.text for s in a.sentences], a.live_topics)


def changed(previous: Answer, new: Answer) -> bool:
    """Whether the new version says something the previous did not (a figure, a sentence, what is live)."""
    return _said(previous) != _said(new)


class LiveAnswers:
    """The answers this process re-derives: one task per followed answer topic."""

    def __init__(self, pool: asyncpg.Pool, fanout: DeltaFanout, settings: Any) -> None:
        self._pool, self._fanout, self._settings = pool, fanout, settings
        self._tasks: dict[tuple[str, str], asyncio.Task] = {}
        self._producer = None
        self._producer_lock = asyncio.Lock()
        fanout.watchers[KIND] = self.follow

    def follow(self, dataset: str, topic: str, on: bool) -> None:
        """Called by the fan-out when the process's first subscriber of `topic` arrives (on) or its
        last one leaves."""
        key = (dataset, topic)
        task = self._tasks.pop(key, None)
        if task is not None:
            task.cancel()
        if on:
            self._tasks[key] = asyncio.get_running_loop().create_task(
                self._run(dataset, topic.partition(":")[2]), name=f"live-{topic}")

    async def _run(self, dataset: str, answer_id: str) -> None:
        inbox = self._fanout.new_inbox()
        subs: dict[str, Any] = {}
        try:
            topics = await self._topics(answer_id, dataset)
            while topics:
                for t in [t for t in subs if t not in topics]:
                    self._fanout.unsubscribe(subs.pop(t))
                for t in topics:
                    if t not in subs:  # subscribed before the read below: no delta falls between
                        subs[t] = self._fanout.subscribe(dataset, t, inbox)
                try:
                    topics = await self._refresh(dataset, answer_id)
                except (*DATABASE_DOWN, KafkaError) as exc:  # the database or the broker away a moment: again
                    log.warning("live answer not re-derived yet", answer_id=answer_id, error=repr(exc))
                    await asyncio.sleep(RETRY_SECONDS)
                    continue
                if not topics:
                    break
                await inbox.get()
                inbox.take_restart()
                inbox.drop_pending()  # one re-derivation covers everything that arrived
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # never the question: there is none here
            log.warning("live answer stopped", answer_id=answer_id, error=repr(exc))
        finally:
            for sub in subs.values():
                self._fanout.unsubscribe(sub)

    async def _topics(self, answer_id: str, dataset: str) -> list[str]:
        async with self._pool.acquire() as conn:
            row = await conn.fetchrow("SELECT dataset, basis, coalesce(latest, body) AS latest FROM access.answers "
                                      "WHERE answer_id = $1 AND body IS NOT NULL AND expires_at >= now()", answer_id)
        if row is None or row["basis"] is None or row["dataset"] != dataset:
            return []
        return _decode(bytes(row["latest"])).live_topics

    async def _refresh(self, dataset: str, answer_id: str) -> list[str]:
        """Re-derive the answer; store and publish a new version when it says something new.
        Returns the topics the newest version reads while they can move."""
        now = datetime.now(timezone.utc)
        published = None
        async with self._pool.acquire() as conn, conn.transaction():
            t = await store.lock_topic(conn, answer_id)
            if t is None or t.basis is None or t.dataset != dataset:
                return []
            previous = _decode(t.latest)
            new = await rederive(conn, f'"{pg_schema(dataset)}"', msgspec.json.decode(t.basis), previous,
                                 _ids(), now)
            if new is None or not changed(previous, new):
                return previous.live_topics
            await store.supersede(conn, answer_id, t.version + 1, new.answer_id, _encode(new), t.subject,
                                  t.expires_at)
            published = (t.version + 1, new)
        await self._publish(dataset, answer_id, *published)
        return published[1].live_topics

    async def _publish(self, dataset: str, answer_id: str, seq: int, answer: Answer) -> None:
        topic = answer_topic(answer_id)
        envelope = Envelope(op="delta", type=DELTA_TYPE, topic=topic, seq=seq, source_ts=answer.as_of,
                            emit_ts=datetime.now(timezone.utc), source=answer.source,
                            data=msgspec.to_builtins(answer))
        async with self._producer_lock:
            if self._producer is None:
                # a start that fails is stopped: each publish during a broker outage makes a producer
                self._producer = await start_or_stop(make_producer(self._settings, linger_ms=0))
        await self._producer.send_and_wait(topic_name(dataset, WIRE_DELTAS, self._settings.topic_namespace),
                                           encode_envelope(envelope), key=topic.encode())

    async def aclose(self) -> None:
        for task in self._tasks.values():
            task.cancel()
        for task in list(self._tasks.values()):
            try:
                await task
            except (asyncio.CancelledError, Exception):
                pass
        self._tasks.clear()
        if self._producer is not None:
            await self._producer.stop()
            self._producer = None
