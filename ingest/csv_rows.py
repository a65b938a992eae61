"""CSV rows with the line they start on and their verbatim text (for dead letters).

Quoted fields may hold line breaks (the injuries file has 370), so a row is what the csv
module reads, not a line of the file. Empty fields, the quoted empty string `""` included,
are missing values: the csv module reads both as "".
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path

from ingest.records import FormatError


@dataclass(frozen=True, slots=True)
class Row:
    line: int  # where the row starts (1 = the header)
    fields: dict[str, str]
    raw: str  # the row's text as in the file, line breaks inside quotes included
    width: int  # how many fields the row had


@dataclass(frozen=True, slots=True)
class Table:
    header: list[str]
    rows: list[Row]


def read_table(path: Path, required: tuple[str, ...] = ()) -> Table:
    text = path.read_text(encoding="utf-8-sig")
    lines = io.StringIO(text, newline="").readlines()
    reader = csv.reader(iter(lines))
    try:
        header = next(reader)
    except StopIteration:
        raise FormatError(f"{path.name}: empty file") from None
    missing = [c for c in required if c not in header]
    if missing:
        raise FormatError(f"{path.name}: missing columns {', '.join(missing)}")
    rows: list[Row] = []
    done = reader.line_num
    for values in reader:
        start, end = done + 1, reader.line_num
        done = end
        if not values:  # a blank line
            continue
        raw = "".join(lines[start - 1:end]).rstrip("\r\n")
        rows.append(Row(start, dict(zip(header, values)), raw, len(values)))
    return Table(header, rows)


class BadValue(ValueError):
    pass


_INT = re.compile(r"^[+-]?\d+$")
_MISSING = frozenset({"", "NA", "N/A", "NaN", "nan", "null", "NULL"})


def text(row: Row, column: str) -> str | None:
    value = row.fields.get(column, "").strip()
    return None if value in _MISSING else value


def required(row: Row, column: str) -> str:
    value = text(row, column)
    if value is None:
        raise BadValue(f"{column} is empty")
    return value


def integer(row: Row, column: str) -> int | None:
    value = text(row, column)
    if value is None:
        return None
    if not _INT.match(value):
        raise BadValue(f"{column} is not an integer: {value!r}")
    return int(value)


def number(value: str, column: str) -> int | Decimal:
    """An integer stays an int; anything else is a Decimal with the source's exact digits."""
    if _INT.match(value):
        return int(value)
    try:
        d = Decimal(value)
    except InvalidOperation:
        raise BadValue(f"{column} is not a number: {value!r}") from None
    if not d.is_finite():
        raise BadValue(f"{column} is not a finite number: {value!r}")
    return d


def decimal(row: Row, column: str) -> Decimal | None:
    value = text(row, column)
    return None if value is None else Decimal(number(value, column))
