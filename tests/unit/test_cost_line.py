"""The cost line names the national helpline the reference library's sources give."""

from __future__ import annotations

import tomllib
from pathlib import Path

from schemas.cost_line import RG_LINE, cost_line

TABLE = Path(__file__).resolve().parents[2] / "content" / "reference" / "helplines.toml"


def test_the_cost_line_carries_the_us_helpline_of_the_library():
    us = tomllib.loads(TABLE.read_text())["US"]
    assert RG_LINE.startswith("21+ only.")
    assert us["phone"] in RG_LINE and us["text"] in RG_LINE
    # the number the table says was retired as the national line is not shown
    assert "1-800-GAMBLER" not in RG_LINE


def test_a_helpline_without_a_text_code_has_no_text_clause():
    assert cost_line({"phone": "1-888-000-0000"}) == "21+ only. Gambling problem? Call 1-888-000-0000."
    assert cost_line({"phone": "1", "text": "X"}).endswith("Call 1 or text X.")
