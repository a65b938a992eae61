"""Build step: the projector's fold (reducers, consensus, rows) compiled with mypyc.

The same typed Python sources, compiled to C extensions that sit beside them; the metadata is
in pyproject.toml. A replay spends ~90% of its time in this fold, and compiled it runs ~1.3x
faster (docs/benchmarks.md). Results are identical: mypyc keeps Python's float arithmetic, and
tests/unit/test_compiled_core.py folds the same log both ways and compares every output.

SVC_PURE_PYTHON=1 skips compiling; so does any failure to compile (a warning, never a broken
install): the sources then run as plain Python.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_ext import build_ext

# the modules compiled: the whole per-event path of a replay, and nothing that does I/O
COMPILED = [
    "projections/batch.py",
    "projections/consensus.py",
    "projections/deltas.py",
    "projections/event_time.py",
    "projections/lines.py",
    "projections/quotes.py",
    "projections/reducers/common.py",
    "projections/reducers/markets.py",
    "projections/rows.py",
]
GROUP = "projections.fold"  # the shared library: projections/fold__mypyc.*.so


def _warn(message: str) -> None:
    print(f"svc build: {message}; the fold runs as plain Python", file=sys.stderr)
    _remove_builds()


def _remove_builds() -> None:
    """Builds of an earlier install would shadow the sources: remove them with the build."""
    root = Path(__file__).resolve().parent
    for source in COMPILED:
        for built in (root / source).parent.glob(Path(source).stem + ".cpython-*"):
            built.unlink(missing_ok=True)
    for built in (root / "projections").glob(GROUP.split(".")[-1] + "__mypyc.*"):
        built.unlink(missing_ok=True)
    (root / "projections" / MANIFEST).unlink(missing_ok=True)


MANIFEST = "fold_sources.json"  # beside the build: the hash of each source it was built from


def _source_hashes() -> dict[str, str]:
    import hashlib

    root = Path(__file__).resolve().parent
    return {source: hashlib.sha256((root / source).read_bytes()).hexdigest() for source in COMPILED}


# The sources' hashes as mypyc read them, taken before it compiles: hashed after the build, a
# source edited while `make venv` ran would be recorded as built and its stale build would run.
# Taken before, such an edit shows as a changed source and the fold runs from the sources.
_SOURCES_AT_START: dict[str, str] = {}


def _write_manifest(directory: Path, into: Path | None = None) -> None:
    """Record what the build was compiled from: at import, projections/compiled.py runs the
    sources instead of a build whose sources have changed since (see there)."""
    import hashlib
    import json

    hashes = _SOURCES_AT_START or _source_hashes()
    # and of each built file, so an old build copied in over a new one is caught as well
    builds = {path.name: hashlib.sha256(path.read_bytes()).hexdigest()
              for path in directory.rglob("*.so")}
    (into or directory).joinpath(MANIFEST).write_text(json.dumps({"sources": hashes, "builds": builds}, indent=1,
                                                 sort_keys=True) + "\n")


class OptionalBuildExt(build_ext):
    """Compiling is an optimisation: a failure leaves no half-built group behind."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as exc:  # noqa: BLE001 - any compiler failure means "run the sources"
            _warn(f"compiling failed ({exc})")
            for output in self.get_outputs():
                Path(output).unlink(missing_ok=True)
            return
        for output in self.get_outputs():
            if Path(output).name.startswith(GROUP.split(".")[-1] + "__mypyc"):
                _write_manifest(Path(output).parent)
                # an editable install copies the builds beside the sources, not this record
                _write_manifest(Path(output).parent, into=Path(__file__).resolve().parent / "projections")


def _extensions() -> list:
    if os.environ.get("SVC_PURE_PYTHON") == "1":
        return []
    try:
        from mypyc.build import mypycify

        _SOURCES_AT_START.update(_source_hashes())
        return mypycify(COMPILED, group_name=GROUP, opt_level="3")
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - no mypyc, or the sources do not type-check
        _warn(f"mypyc could not prepare the build ({exc})")
        return []


setup(ext_modules=_extensions(), cmdclass={"build_ext": OptionalBuildExt})
