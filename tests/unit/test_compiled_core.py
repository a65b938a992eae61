"""The compiled fold (mypyc, setup.py) is the fold its sources describe: the same varied log
folded by the build and by the sources gives the same rows, deltas, envelopes and states."""

from __future__ import annotations

import json
import os
import shutil
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


def test_a_build_that_does_not_match_its_record_is_reported_stale(tmp_path, monkeypatch):
    package = tmp_path / "projections"
    (package / "reducers").mkdir(parents=True)
    so = compiled.SUFFIXES[0]
    for name in ("reducers/markets", "rows", "batch"):
        (package / f"{name}{so}").write_bytes(name.encode())
        (package / f"{name}.py").write_text(f"# {name}\n")
    record = {"sources": {f"projections/{n}.py": compiled._digest(package / f"{n}.py")
                          for n in ("reducers/markets", "rows", "batch")},
              "builds": {f"{Path(n).name}{so}": compiled._digest(package / f"{n}{so}")
                         for n in ("reducers/markets", "rows", "batch")}}
    (package / "fold_sources.json").write_text(json.dumps(record))
    monkeypatch.setattr(compiled, "PACKAGE", package)
    monkeypatch.setattr(compiled, "MANIFEST", package / "fold_sources.json")
    assert compiled.built() == ["projections.batch", "projections.reducers.markets", "projections.rows"]
    assert compiled.stale() == []
    (package / "rows.py").write_text("# rows, edited after the build\n")  # same size, any mtime
    (package / f"batch{so}").write_bytes(b"an older build copied over")
    assert compiled.stale() == ["projections.batch", "projections.rows"]
    (package / "fold_sources.json").unlink()  # no record: nothing can be trusted
    assert len(compiled.stale()) == 3


def test_a_planted_stale_build_cannot_change_what_runs(tmp_path):
    """Copy the installed package with its build, edit a compiled module's source: importing it
    runs the edit, not the build (and says so)."""
    if not compiled.built():
        return _assert_pure_install()
    shutil.copytree(ROOT / "projections", tmp_path / "projections",
                    ignore=shutil.ignore_patterns("__pycache__"))
    rows = tmp_path / "projections" / "rows.py"
    rows.write_text(rows.read_text() + "\nPLANTED = 'the edited source ran'\n")
    code = ("import warnings, projections.rows as r, projections.compiled as c\n"
            "print(r.__file__.endswith('.py'), getattr(r, 'PLANTED', None), c.loaded())")
    done = subprocess.run([sys.executable, "-W", "always", "-c", code], cwd=tmp_path, capture_output=True, text=True,
                          timeout=60, env={**os.environ, "PYTHONPATH": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "True the edited source ran []", done.stdout
    assert "running the sources" in done.stderr


def test_a_planted_old_shared_library_cannot_change_what_runs(tmp_path):
    """mypyc puts the compiled code of every module in one shared library with no source of its
    own (`fold__mypyc`); the per-module builds only load it. An older one copied over it must
    make the sources run, just as a stale per-module build does."""
    if not compiled.built():
        return _assert_pure_install()
    shutil.copytree(ROOT / "projections", tmp_path / "projections",
                    ignore=shutil.ignore_patterns("__pycache__"))
    (shared,) = (tmp_path / "projections").glob("fold__mypyc*")
    with shared.open("ab") as f:  # still loads, but is not the build the record names
        f.write(b"an older build")
    code = ("import warnings, projections.reducers.markets as m, projections.compiled as c\n"
            "print(m.__file__.endswith('.py'), c.loaded())")
    done = subprocess.run([sys.executable, "-W", "always", "-c", code], cwd=tmp_path, capture_output=True, text=True,
                          timeout=60, env={**os.environ, "PYTHONPATH": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "True []", done.stdout
    assert "running the sources" in done.stderr and "fold__mypyc" in done.stderr


def _assert_pure_install() -> None:
    assert os.environ.get("SVC_PURE_PYTHON") == "1"
