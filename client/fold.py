"""How a Wire topic's snapshot and deltas fold into its state (pure).

`game.state` deltas carry the game's full visible state; market deltas carry the market header
in full and only the lines that changed (by `line_key`) plus `removed_lines`. A snapshot has the
shape of the topic's delta data with every line.
"""

from __future__ import annotations

from typing import Any


def fold(state: dict[str, Any] | None, kind: str, data: dict[str, Any]) -> dict[str, Any]:
    if kind == "game.state" or state is None or "lines" not in data:
        return _with_lines(dict(data)) if "lines" in data else dict(data)
    lines = {line["line_key"]: line for line in state.get("lines", [])}
    for line in data.get("lines", []):
        lines[line["line_key"]] = line
    for key in data.get("removed_lines", []):
        lines.pop(key, None)
    out = {k: v for k, v in data.items() if k not in ("lines", "removed_lines")}
    out["lines"] = sorted(lines.values(), key=lambda line: line["line_key"])
    return out


def _with_lines(data: dict[str, Any]) -> dict[str, Any]:
    data.pop("removed_lines", None)
    data["lines"] = sorted(data.get("lines", []), key=lambda line: line["line_key"])
    return data
