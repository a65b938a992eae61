"""The layer rules in pyproject.toml ([tool.importlinter]) hold, and they bite: a wrong-way
import planted in a copy of the sources breaks them."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from tests.support.packages import PACKAGES

ROOT = Path(__file__).resolve().parents[2]
LINT = str(Path(sys.executable).with_name("lint-imports"))


def _lint(cwd: Path) -> subprocess.CompletedProcess:
    # grimp reads the packages from sys.path: the copy's root must come first
    return subprocess.run([LINT, "--no-cache"], cwd=cwd, capture_output=True, text=True, timeout=120,
                          env={"PYTHONPATH": str(cwd), "PATH": str(Path(sys.executable).parent)})


def _copy(tmp_path: Path) -> Path:
    for name in PACKAGES:
        shutil.copytree(ROOT / name, tmp_path / name, ignore=shutil.ignore_patterns("*.so", "__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def test_the_layer_rules_hold():
    done = _lint(ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Contracts: 4 kept, 0 broken." in done.stdout


def _broken_by(tmp_path: Path, module: str, planted: str) -> str:
    """import-linter's report on a copy of the sources with `planted` appended to `module` (a
    path below the root); the check must fail."""
    root = _copy(tmp_path)
    path = root / module
    path.write_text(path.read_text() + f"\n{planted}  # planted\n")
    done = _lint(root)
    assert done.returncode == 1, done.stdout
    return done.stdout


def test_a_wrong_way_import_breaks_the_layers(tmp_path):
    assert "schemas is not allowed to import api" in _broken_by(tmp_path, "schemas/events.py", "import api.problems")


def test_an_io_import_in_pure_code_breaks_the_purity_rule(tmp_path):
    report = _broken_by(tmp_path, "projections/consensus.py", "import asyncpg")
    assert "Pure modules import no I/O library BROKEN" in report


def test_a_server_import_in_the_client_breaks_the_client_rule(tmp_path):
    report = _broken_by(tmp_path, "client/models.py", "import domain.ids")
    assert "The client imports none of the server's packages BROKEN" in report


def test_a_schemas_import_in_the_domain_breaks_both_domain_rules(tmp_path):
    # the domain is the bottom layer: even schemas, the layer just above, is off limits
    report = _broken_by(tmp_path, "domain/prices.py", "import schemas.events")
    assert "domain is not allowed to import schemas" in report
    assert "The domain imports nothing of ours but itself and no I/O library BROKEN" in report


def test_an_io_import_in_the_domain_breaks_the_domain_rule(tmp_path):
    report = _broken_by(tmp_path, "domain/ids.py", "import redis")
    assert "The domain imports nothing of ours but itself and no I/O library BROKEN" in report


def test_an_api_import_in_the_calculations_breaks_the_layers(tmp_path):
    # the calculation runner is shared by the API and the CLI: it must not reach back into the API
    assert "calc is not allowed to import api" in _broken_by(tmp_path, "calc/run.py", "import api.problems")
