"""The aiokafka adapter (infra/aiokafka_adapter.py) was written against one aiokafka version and
reaches past its public API at one named point: another version fails here, loudly, until
someone has re-checked it (tests/integration/test_aiokafka_adapter.py checks the behaviour)."""

from __future__ import annotations

import inspect
import re
import tomllib
from importlib.metadata import version
from pathlib import Path

from aiokafka.client import AIOKafkaClient

from infra.aiokafka_adapter import AIOKAFKA_VERSION
from tests.support.packages import PACKAGES

ROOT = Path(__file__).resolve().parents[2]
RECHECK = ("aiokafka changed: re-check infra/aiokafka_adapter.py's docstring against the new sources, "
           "then move AIOKAFKA_VERSION and the pyproject.toml pin together")


def test_aiokafka_is_the_version_the_adapter_was_written_against():
    pins = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    assert [p for p in pins if re.match(r"aiokafka\b", p)] == [f"aiokafka=={AIOKAFKA_VERSION}"], RECHECK
    assert version("aiokafka") == AIOKAFKA_VERSION, RECHECK


def test_the_client_method_the_adapter_calls_is_still_there():
    assert list(inspect.signature(AIOKafkaClient.force_metadata_update).parameters) == ["self"], RECHECK
    # with no tracked topics a refresh asks for every topic (None), which is what the adapter needs
    assert "MetadataRequest(list(topics) if topics else None)" in inspect.getsource(AIOKafkaClient._metadata_update), \
        RECHECK


def test_no_module_but_the_adapters_reaches_into_aiokafka_or_faust_privates():
    # `._client`, `._fetcher`, `._thread`, ... on a consumer, producer or app object
    private = re.compile(r"\b(consumer|producer|app|client|admin|thread)\._[a-z]")
    adapters = {ROOT / "infra" / "aiokafka_adapter.py", ROOT / "projections" / "faust_adapter.py"}
    found = [
        f"{path.relative_to(ROOT)}:{number}"
        for package in (*PACKAGES, "tests")
        for path in sorted((ROOT / package).rglob("*.py"))
        if path not in adapters and path.name != "test_faust_adapter.py" and path != Path(__file__).resolve()
        for number, line in enumerate(path.read_text().splitlines(), 1) if private.search(line)
    ]
    assert found == [], f"move these into an adapter module: {found}"
