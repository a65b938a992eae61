"""The compiled fold (mypyc, setup.py) is the fold its sources describe: the same varied log
folded by the build and by the sources gives the same rows, deltas, envelopes and states."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from projections import compiled

ROOT = Path(__file__).resolve().parents[2]


def _fold(*flags: str) -> dict:
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    out = subprocess.run([sys.executable, "-m", "tests.support.fold_digest", *flags], cwd=ROOT, env=env,
                         capture_output=True, text=True, check=True, timeout=120).stdout
    return json.loads(out)


def test_the_build_and_the_sources_fold_a_log_identically():
    built, sources = _fold(), _fold("--sources")
    assert sources["compiled"] == []  # the sources really ran
    # the build ran compiled unless the install was asked not to compile (SVC_PURE_PYTHON=1)
    assert bool(built["compiled"]) == (os.environ.get("SVC_PURE_PYTHON") != "1")
    assert built["events"] == sources["events"] > 700
    assert built["deltas"] == sources["deltas"] > 100
    assert built["digest"] == sources["digest"]


def test_every_hot_path_module_is_built_and_none_is_stale():
    if os.environ.get("SVC_PURE_PYTHON") == "1":
        assert compiled.built() == []
        return
    assert {"projections.consensus", "projections.reducers.markets", "projections.rows", "projections.batch"} <= set(
        compiled.built())
    assert compiled.stale() == []


def test_a_source_edited_after_the_build_is_reported_stale(tmp_path, monkeypatch):
    package = tmp_path / "projections"
    (package / "reducers").mkdir(parents=True)
    for name in ("reducers/markets", "rows"):
        (package / f"{name}{compiled.SUFFIXES[0]}").write_bytes(b"")
        source = package / f"{name}.py"
        source.write_text("")
        os.utime(source, (1000, 1000))  # explicit times: writes within one clock tick look simultaneous
    os.utime(package / f"reducers/markets{compiled.SUFFIXES[0]}", (2000, 2000))  # built after its source
    os.utime(package / f"rows{compiled.SUFFIXES[0]}", (1, 1))  # built long before its source
    # built after its source: set explicitly, since two writes in a row may share a timestamp
    # tick in either order
    later = (package / "reducers/markets.py").stat().st_mtime + 10
    os.utime(package / f"reducers/markets{compiled.SUFFIXES[0]}", (later, later))
    monkeypatch.setattr(compiled, "PACKAGE", package)
    assert compiled.built() == ["projections.reducers.markets", "projections.rows"]
    assert compiled.stale() == ["projections.rows"]
