"""One rule for "the database is down": no module names asyncpg's connection errors itself,
they all catch `infra.db.DATABASE_DOWN` (tests/integration/test_database_down.py checks what
it holds against a real server)."""

from __future__ import annotations

import re
from pathlib import Path

from tests.support.packages import PACKAGES

ROOT = Path(__file__).resolve().parents[2]
CONNECTION_ERRORS = re.compile(
    r"\b(InterfaceError|PostgresConnectionError|CannotConnectNowError|ConnectionDoesNotExistError"
    r"|OperatorInterventionError|AdminShutdownError|TooManyConnectionsError)\b")


def test_only_infra_db_names_the_database_down_errors():
    named = [
        f"{path.relative_to(ROOT)}:{number}"
        for package in PACKAGES for path in sorted((ROOT / package).rglob("*.py"))
        if path != ROOT / "infra" / "db.py"
        for number, line in enumerate(path.read_text().splitlines(), 1) if CONNECTION_ERRORS.search(line)
    ]
    assert named == [], f"catch infra.db.DATABASE_DOWN instead: {named}"
