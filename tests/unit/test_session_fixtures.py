"""A session fixture is built once per test session (per xdist worker), not once per module.

A fixture a test module imports (`from tests.support.api_fixtures import *`) is a fixture of that
module: a session-scoped one was then built again for every such module (the sample database the
real fold writes, ~20 times a run). Shared fixtures are registered once, as plugins
(`pytest_plugins` in tests/conftest.py)."""

from __future__ import annotations

import importlib
from pathlib import Path

import tests.conftest

TESTS = Path(tests.conftest.__file__).parent


def session_fixtures(module) -> set[str]:
    """Names of the session-scoped fixtures defined in or imported into `module`."""
    found = set()
    for name, value in vars(module).items():
        marker = getattr(value, "_fixture_function_marker", None)  # pytest's fixture definition
        if marker is not None and marker.scope == "session":
            found.add(name)
    return found


def test_the_check_recognises_a_session_fixture():
    assert {"broker", "pg_server", "pg_template"} <= session_fixtures(tests.conftest)


def test_no_test_module_has_a_session_fixture_of_its_own():
    names = [".".join(p.relative_to(TESTS.parent).with_suffix("").parts)
             for kind in ("unit", "integration", "e2e") for p in sorted((TESTS / kind).glob("test_*.py"))]
    assert len(names) > 100
    modules = [importlib.import_module(name) for name in names]  # already imported in a whole run
    own = {m.__name__: sorted(session_fixtures(m)) for m in modules if session_fixtures(m)}
    assert own == {}
