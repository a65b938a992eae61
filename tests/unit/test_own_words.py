"""The repository stands alone: its code, docs and tests cite no section of an outside document
("spec 6.1", "the spec's table") and no design file that is not in it. Migrations already
applied are history and keep their words."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CITATION = re.compile(r"\bspec(?:s|'s)? (?:sections? )?\d|\bthe spec\b|\bspec's\b|\bDESIGN(?:\.md| invariant)"
                      r"|interface spec|\binterface(?:'s)? contract\b|\bthe interface's\b", re.IGNORECASE)


def test_nothing_cites_an_outside_document():
    files = subprocess.run(["git", "ls-files", "*.py", "*.md", "*.toml", "*.json", "Makefile"], cwd=ROOT,
                           capture_output=True, text=True, check=True).stdout.split()
    cited = [
        f"{name}:{number}: {line.strip()[:100]}"
        for name in files if not name.startswith("infra/migrations/") and name != "tests/unit/test_own_words.py"
        for number, line in enumerate((ROOT / name).read_text(errors="replace").splitlines(), 1)
        if CITATION.search(line)
    ]
    assert cited == [], "say it in our own words:\n" + "\n".join(cited)
