"""Postgres notification channels (infra/migrations/global/0060_change_notify.sql and
0075_key_standing_notify.sql send them).

`svc_keys`: a key was revoked, or its scopes or its account's plan changed (payload: its key
ID). `svc_read_models.<schema>`: a served read-model table of that schema changed (payload: the
table, or `*` after a rebuild's swap).
"""

from __future__ import annotations

KEYS = "svc_keys"
ALL_TABLES = "*"


def read_models(schema: str) -> str:
    return f"svc_read_models.{schema}"
