"""Postgres advisory lock keys. Live batches take the dataset's key shared; a rebuild takes it
exclusively for its last catch-up and the schema swap, so no live batch commits in between.
A scratch schema's builder holds that schema's key for its session: a scratch schema whose key
is free has lost its builder (killed, disconnected) and may be dropped."""

from __future__ import annotations

import hashlib


def _key(name: str) -> int:
    digest = hashlib.blake2b(name.encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def projector_lock_key(dataset: str) -> int:
    return _key(f"svc.projector:{dataset}")


def scratch_lock_key(schema: str) -> int:
    return _key(f"svc.scratch:{schema}")


def seasons_lock_key(schema: str) -> int:
    """Held (per transaction) while a batch recomputes seasons from the games table: writers
    into one schema (replay workers) then each see the others' committed games."""
    return _key(f"svc.seasons:{schema}")
