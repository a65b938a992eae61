"""Change counters (api/changes.py), kept responses (api/kept.py), request IDs and access fields."""

from __future__ import annotations

import gzip
import zlib
from datetime import datetime, timezone

import msgspec
from hypothesis import given
from hypothesis import strategies as st

from access.context import credit_state
from access.headers import access_fields, access_headers, encoded
from access.periods import billing_period, day_period
from access.window import LogReading, RatePolicy, rate_state
from api.changes import Changes
from api.kept import Kept, KeptStore, Rechecked
from domain.ids import RandomIds, is_id


def test_a_version_moves_with_its_own_tables_and_with_every_epoch():
    changes = Changes()
    games = changes.version("live", ("games", "teams"))
    markets = changes.version("live", ("markets",))
    changes.changed("live", "teams")
    assert changes.version("live", ("games", "teams")) != games
    assert changes.version("live", ("markets",)) == markets
    assert changes.version("test", ("games", "teams")) == games  # another dataset
    moved = changes.version("live", ("markets",))
    changes.changed("live", "*")  # a rebuild swapped every table
    assert changes.version("live", ("markets",)) != moved
    moved = changes.version("live", ("markets",))
    changes.missed()  # the listener reconnected
    assert changes.version("live", ("markets",)) != moved


def test_versions_never_repeat():
    changes = Changes()
    seen = {changes.version("live", ("games", "teams"))}
    for step in range(50):
        if step % 3 == 0:
            changes.changed("live", "games")
        elif step % 3 == 1:
            changes.changed("live", "teams")
        else:
            changes.missed()
        version = changes.version("live", ("games", "teams"))
        assert version not in seen
        seen.add(version)


class Item(msgspec.Struct):
    name: str
    request_id: str


class Page(msgspec.Struct):
    data: list[Item]
    request_id: str


@given(names=st.lists(st.text(), max_size=5))
def test_a_kept_body_is_the_body_encoded_with_the_new_request_id(names):
    ids = RandomIds("request")
    first, second = ids(), ids()
    build = lambda rid: Page(data=[Item(n, rid) for n in names], request_id=rid)  # noqa: E731
    kept = Kept(200, [], msgspec.json.encode(build(first)), first)
    assert kept.body(second) == msgspec.json.encode(build(second))
    assert kept.size == len(kept.body(second))


@given(names=st.lists(st.text(), max_size=40), level=st.sampled_from([1, 6, 9]))
def test_a_kept_gzip_body_is_a_gzip_stream_of_the_body_with_the_new_request_id(names, level):
    ids = RandomIds("request")
    first, second, third = ids(), ids(), ids()
    build = lambda rid: Page(data=[Item(n, rid) for n in names], request_id=rid)  # noqa: E731
    kept = Kept(200, [], msgspec.json.encode(build(first)), first)
    for rid in (second, third):  # deflated once, served to each request with its own ID
        packed = kept.gzip_body(rid, level)
        assert gzip.decompress(packed) == msgspec.json.encode(build(rid))
        assert zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(packed) == kept.body(rid)  # one member, whole


@given(stretches=st.lists(st.binary(max_size=300), min_size=1, max_size=12), level=st.sampled_from([1, 6]))
def test_a_kept_gzip_body_of_any_bytes_is_the_body_with_the_new_request_id(stretches, level):
    """Not only JSON: stretches of any bytes, a body holding every byte value (no byte is left
    to stand for the IDs in the compressor's window: each stretch deflated alone) included."""
    first, second = "req_" + "a" * 22, "req_" + "b" * 22
    for body in (first.encode().join(stretches), bytes(range(256)) + first.encode() + bytes(range(256))):
        kept = Kept(200, [], body, first)
        assert gzip.decompress(kept.gzip_body(second, level)) == body.replace(first.encode(), second.encode())


def test_a_kept_gzip_body_without_a_request_id_and_of_a_large_body():
    assert gzip.decompress(Kept(200, [], b"", "req_x").gzip_body("req_y", 1)) == b""
    big = b"".join(b'{"n":%d,"request_id":"req_aaaaaaaaaaaaaaaaaaaa"},' % i for i in range(5000))  # > 64 KiB
    kept = Kept(200, [], big, "req_aaaaaaaaaaaaaaaaaaaa")
    packed = kept.gzip_body("req_bbbbbbbbbbbbbbbbbbbb", 1)
    assert gzip.decompress(packed) == big.replace(b"req_aaaaaaaaaaaaaaaaaaaa", b"req_bbbbbbbbbbbbbbbbbbbb")
    # compressed across the stretches: each ID costs its own bytes and a block's framing (~40 bytes), no more
    assert len(packed) < len(gzip.compress(big, 1)) + 45 * 5000


def test_the_store_is_bounded_by_entries_and_bytes():
    rid = "req_" + "a" * 20
    store = KeptStore(max_items=3, max_bytes=1600)
    for n in range(3):
        store.put((n,), Kept(200, [], b"x" * 90, rid))
    assert len(store) == 3
    store.put((3,), Kept(200, [], b"x" * 90, rid))  # a fourth: cleared first
    assert len(store) == 1 and store.get((3,)) is not None and store.get((0,)) is None
    store.put((4,), Kept(200, [], b"x" * 101, rid))  # over a sixteenth of the bytes: not kept
    assert store.get((4,)) is None


async def test_a_rechecked_value_is_built_again_only_when_its_version_moved():
    version, reads, builds = [(3, 10)], [], []

    async def read() -> tuple:
        reads.append(1)
        return version[0]

    async def build() -> int:
        builds.append(1)
        return len(builds)

    held = Rechecked(recheck_seconds=3600)
    assert [await held.get("live", read, build) for _ in range(3)] == [1, 1, 1]
    assert (len(reads), len(builds)) == (1, 1)  # within the interval: not even the version is read
    assert await held.get("test", read, build) == 2  # another dataset, its own value
    held.recheck_seconds = 0
    assert await held.get("live", read, build) == 1 and (len(reads), len(builds)) == (3, 2)  # same version
    version[0] = (3, 11)
    assert await held.get("live", read, build) == 3 and len(builds) == 3


def test_random_request_ids_are_ids_and_distinct():
    ids = RandomIds("request", batch=4)
    made = [ids() for _ in range(1000)]
    assert all(is_id("request", i) for i in made) and len(set(made)) == 1000


@given(count=st.integers(0, 200), used=st.integers(0, 10**6), last=st.integers(0, 2),
       anchor=st.one_of(st.none(), st.integers(1, 31)), age=st.floats(0, 599))
def test_access_fields_are_the_access_headers_encoded(count, used, last, anchor, age):
    now = datetime(2026, 11, 22, 4, 40, tzinfo=timezone.utc)
    period = day_period(now) if anchor is None else billing_period(now, anchor)
    plan = "anonymous" if anchor is None else "free"
    rate = rate_state(RatePolicy(plan, 200, 600), "games.list", LogReading(True, count, now.timestamp() - age, now.timestamp()))
    credits = credit_state(6000, used, last, period, now)
    assert access_fields(plan, rate, credits) == encoded(access_headers(plan, rate, credits))
    assert access_fields(plan, rate, None) == encoded(access_headers(plan, rate, None))
