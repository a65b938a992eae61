"""Which projections modules run compiled (mypyc, see setup.py), and a guard that a compiled
module never runs in place of a source that changed after the build.

A compiled module sits beside its source as `name.cpython-311-...so` and Python imports it in
preference to `name.py`. The build records the hash of every source it compiled
and of every file it built (`fold_sources.json`); when the projections package is imported,
`guard()` compares them with the sources and builds on disk, mypyc's shared library included, and
if any differs (an edit, a checkout, a planted old build) the whole fold runs from its sources
instead, with a warning: the compiled modules call each other directly, so one stale module can
only be bypassed by bypassing all of them. `make venv` rebuilds.
`sources_first()` makes a process import the sources on purpose (to compare the two).
"""

from __future__ import annotations

import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import sys
import warnings
from pathlib import Path
from typing import Any

PACKAGE = Path(__file__).resolve().parent
SUFFIXES = tuple(importlib.machinery.EXTENSION_SUFFIXES)


def _pairs() -> list[tuple[str, Path, Path]]:
    """(module name, extension file, source file) for every compiled module with a source."""
    out = []
    for path in sorted(PACKAGE.rglob("*.so")):
        suffix = next((s for s in SUFFIXES if path.name.endswith(s)), None)
        if suffix is None:
            continue
        source = path.with_name(path.name[: -len(suffix)] + ".py")
        if source.exists():
            parts = source.relative_to(PACKAGE.parent).with_suffix("").parts
            out.append((".".join(parts), path, source))
    return out


def built() -> list[str]:
    """Modules with a compiled build beside their source."""
    return [name for name, _, _ in _pairs()]


def loaded() -> list[str]:
    """Compiled modules among those this process has imported."""
    return sorted(
        name for name, module in list(sys.modules.items())
        if name.startswith("projections.") and (getattr(module, "__file__", None) or "").endswith(SUFFIXES)
    )


MANIFEST = PACKAGE / "fold_sources.json"  # written by setup.py's build


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _shared() -> list[tuple[str, Path]]:
    """(module name, extension file) of builds with no source of their own: mypyc's shared
    library (`fold__mypyc`), which holds the compiled code of every module; the per-module
    builds only load it."""
    paired = {ext for _, ext, _ in _pairs()}
    out = []
    for path in sorted(PACKAGE.rglob("*.so")):
        suffix = next((s for s in SUFFIXES if path.name.endswith(s)), None)
        if suffix is not None and path not in paired:
            parts = path.with_name(path.name[: -len(suffix)]).relative_to(PACKAGE.parent).parts
            out.append((".".join(parts), path))
    return out


def stale() -> list[str]:
    """Compiled modules whose source is not the one they were built from, or whose build (or
    the shared library they load) is not the one the build recorded (all of them when the
    build left no record)."""
    pairs, shared = _pairs(), _shared()
    try:
        recorded = json.loads(MANIFEST.read_text())
    except (FileNotFoundError, ValueError):
        return sorted([name for name, _, _ in pairs] + [name for name, _ in shared])
    root = PACKAGE.parent
    sources, builds = recorded.get("sources", {}), recorded.get("builds", {})
    old = [name for name, ext, source in pairs
           if sources.get(source.relative_to(root).as_posix()) != _digest(source)
           or builds.get(ext.name) != _digest(ext)]
    old += [name for name, ext in shared if builds.get(ext.name) != _digest(ext)]
    return sorted(old)


def guard() -> list[str]:
    """Run the sources instead of a build that does not match them; returns the stale modules."""
    old = stale()
    if old and not any(isinstance(f, _SourcesFirst) for f in sys.meta_path):
        warnings.warn(f"compiled fold built from other sources ({', '.join(old)}): running the sources; "
                      "`make venv` rebuilds it", RuntimeWarning, stacklevel=2)
        sources_first()
    return old


class _SourcesFirst(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path, target=None):
        for name, _, source in _pairs():
            if name == fullname:
                return importlib.util.spec_from_file_location(fullname, source)
        return None


def sources_first() -> None:
    """From now on this process imports the sources of compiled modules (call before importing them)."""
    sys.meta_path.insert(0, _SourcesFirst())


def main() -> None:
    """`python -m projections.compiled`: after an install, say so when the fold is not compiled
    (pip --quiet hides the build's own warning)."""
    import os

    if not built() and os.environ.get("SVC_PURE_PYTHON") != "1":
        print("svc build: the fold was not compiled and runs as plain Python (about 1.4x slower); "
              "`pip install -v -e .` shows why", file=sys.stderr)


def report() -> dict[str, Any]:
    """Whether the projector's fold runs compiled (setup.py), and never from an outdated build."""
    done, old = built(), stale()
    if not done:
        return {"address": None, "ok": None, "note": "plain Python: installed with SVC_PURE_PYTHON=1 or without a C compiler"}
    if old:
        return {"address": None, "ok": None,
                "note": f"built from other sources ({', '.join(old)}): the sources run instead; make venv rebuilds"}
    return {"address": None, "ok": True, "compiled": len(done)}


if __name__ == "__main__":
    main()

