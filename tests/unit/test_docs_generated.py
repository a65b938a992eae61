"""The committed OpenAPI and AsyncAPI documents are what the code generates (`make docs`)."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec

from api.app import create_litestar
from infra.settings import load_settings
from infra.version import VERSION
from wire.asyncapi import document

DOCS = Path(__file__).resolve().parents[2] / "docs"


def _normalised(value) -> str:
    return json.dumps(value, sort_keys=True)


def test_openapi_document_is_current():
    schema = create_litestar(load_settings(env={}, use_stack=False)).openapi_schema.to_schema()
    generated = json.loads(msgspec.json.encode(schema))  # as `svc openapi` writes it
    committed = json.loads((DOCS / "openapi.json").read_text())
    assert _normalised(committed) == _normalised(generated), "docs/openapi.json is stale: run `make docs`"
    assert len(generated["paths"]) >= 20


def test_asyncapi_document_is_current():
    committed = json.loads((DOCS / "asyncapi.json").read_text())
    assert _normalised(committed) == _normalised(json.loads(json.dumps(document(VERSION))))


def test_every_environment_setting_is_in_the_readme():
    from infra.settings import ENV_VARS

    readme = (DOCS.parent / "README.md").read_text()
    assert [var for var in ENV_VARS if f"`{var}`" not in readme] == []
