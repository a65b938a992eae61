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


def test_a_wrong_way_import_breaks_the_layers(tmp_path):
    root = _copy(tmp_path)
    events = root / "schemas" / "events.py"
    events.write_text(events.read_text() + "\nimport api.problems  # planted\n")
    done = _lint(root)
    assert done.returncode == 1, done.stdout
    assert "schemas is not allowed to import api" in done.stdout


def test_an_io_import_in_pure_code_breaks_the_purity_rule(tmp_path):
    root = _copy(tmp_path)
    consensus = root / "projections" / "consensus.py"
    consensus.write_text(consensus.read_text() + "\nimport asyncpg  # planted\n")
    done = _lint(root)
    assert done.returncode == 1, done.stdout
    assert "Pure modules import no I/O library BROKEN" in done.stdout


def test_a_server_import_in_the_client_breaks_the_client_rule(tmp_path):
    root = _copy(tmp_path)
    models = root / "client" / "models.py"
    models.write_text(models.read_text() + "\nimport domain.ids  # planted\n")
    done = _lint(root)
    assert done.returncode == 1, done.stdout
    assert "The client imports none of the server's packages BROKEN" in done.stdout


def test_a_schemas_import_in_the_domain_breaks_both_domain_rules(tmp_path):
    # the domain is the bottom layer: even schemas, the layer just above, is off limits
    root = _copy(tmp_path)
    prices = root / "domain" / "prices.py"
    prices.write_text(prices.read_text() + "\nimport schemas.events  # planted\n")
    done = _lint(root)
    assert done.returncode == 1, done.stdout
    assert "domain is not allowed to import schemas" in done.stdout
    assert "The domain imports nothing of ours but itself and no I/O library BROKEN" in done.stdout


def test_an_io_import_in_the_domain_breaks_the_domain_rule(tmp_path):
    root = _copy(tmp_path)
    ids = root / "domain" / "ids.py"
    ids.write_text(ids.read_text() + "\nimport redis  # planted\n")
    done = _lint(root)
    assert done.returncode == 1, done.stdout
    assert "The domain imports nothing of ours but itself and no I/O library BROKEN" in done.stdout


def test_an_api_import_in_the_calculations_breaks_the_layers(tmp_path):
    # the calculation runner is shared by the API and the CLI: it must not reach back into the API
    root = _copy(tmp_path)
    run = root / "calc" / "run.py"
    run.write_text(run.read_text() + "\nimport api.problems  # planted\n")
    done = _lint(root)
    assert done.returncode == 1, done.stdout
    assert "calc is not allowed to import api" in done.stdout
