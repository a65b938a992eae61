"""The cost line (`rg_line`) carried by everything that touches wagering: the age limit and the
national helpline, built from the reference library's helpline table
(content/reference/helplines.toml, reviewed against its listed sources) so the number a client
shows beside a price is the one those sources give, written down in one place.

1-800-GAMBLER stopped being the US national number after 29 September 2025 (it stays New
Jersey's helpline); the table's US entry says which number replaced it and cites who said so.
"""

from __future__ import annotations

import tomllib
from importlib import resources

AGE = "21+"  # the age the cost line names, beside a helpline


def _us_helpline() -> dict:
    text = resources.files("content.reference").joinpath("helplines.toml").read_text(encoding="utf-8")
    return tomllib.loads(text)["US"]


def cost_line(helpline: dict) -> str:
    """`21+ only. Gambling problem? Call <phone> or text <code>.` (no text clause without a code)."""
    reach = f"Call {helpline['phone']}"
    if helpline.get("text"):
        reach += f" or text {helpline['text']}"
    return f"{AGE} only. Gambling problem? {reach}."


RG_LINE = cost_line(_us_helpline())
