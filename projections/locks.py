"""Postgres advisory lock keys. Live batches take the dataset's key shared; a rebuild takes it
exclusively for its last catch-up and the schema swap, so no live batch commits in between."""

from __future__ import annotations

import hashlib


def projector_lock_key(dataset: str) -> int:
    digest = hashlib.blake2b(f"svc.projector:{dataset}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)
