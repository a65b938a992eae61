"""A small builder for parameterised WHERE clauses: only the filters a request sets appear in
the SQL, so each combination gets its own prepared statement and a plan that uses the indexes."""

from __future__ import annotations

from typing import Any


class Where:
    def __init__(self) -> None:
        self.clauses: list[str] = []
        self.args: list[Any] = []

    def arg(self, value: Any) -> str:
        """A placeholder bound to `value`."""
        self.args.append(value)
        return f"${len(self.args)}"

    def add(self, template: str, *values: Any) -> None:
        """Add a clause; each `{}` in `template` becomes a placeholder for the next value."""
        self.clauses.append(template.format(*(self.arg(v) for v in values)))

    def sql(self) -> str:
        return " AND ".join(self.clauses) if self.clauses else "TRUE"
