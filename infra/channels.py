"""Postgres notification channels (infra/migrations/global/0060_change_notify.sql sends them).

`svc_keys`: a key was revoked (payload: its key ID). `svc_read_models.<schema>`: a served
read-model table of that schema changed (payload: the table, or `*` after a rebuild's swap).
"""

from __future__ import annotations

KEYS = "svc_keys"
ALL_TABLES = "*"


def read_models(schema: str) -> str:
    return f"svc_read_models.{schema}"
