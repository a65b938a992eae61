"""Which projections modules run compiled (mypyc, see setup.py), and which compiled ones are
older than their source.

A compiled module sits beside its source as `name.cpython-311-...so` and Python imports it in
preference to `name.py`; after an edit the source only counts once the build ran again (`make
venv`, which `make test` and `make up` run when a source changed). `stale()` names the modules
where that has not happened yet, so a test run or a projector never uses old code unawares.
`sources_first()` makes a process import the sources instead (to compare the two).
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
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


def stale() -> list[str]:
    """Compiled modules whose source changed after they were built."""
    return [name for name, ext, source in _pairs() if source.stat().st_mtime > ext.stat().st_mtime]


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
        return {"address": None, "ok": False, "error": f"older than their sources: {', '.join(old)}; run make venv"}
    return {"address": None, "ok": True, "compiled": len(done)}


if __name__ == "__main__":
    main()

