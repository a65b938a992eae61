"""CSV rows with the line they start on and their verbatim text (for dead letters).

Quoted fields may hold line breaks (the injuries file has 370), so a row is what the csv
module reads, not a line of the file. Empty fields, the quoted empty string `""` included,
are missing values: the csv module reads both as "".

Hostile files: a byte that is not UTF-8 is read as a lone surrogate (surrogateescape), so it
is a problem of its row, not of the file; fields of any size are read (the csv module's own
limit would abort the file) and a field above `bounds.FIELD_MAX` is a problem of its row.
Values are checked as they are read: identifiers and codes must be free of control and
format characters (`text`), names and free text are cleaned (`name`), integers and decimals
keep to their bounds.
"""

from __future__ import annotations

import csv
import io
import sys
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path

from ingest.records import FormatError
from schemas import bounds


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
    text = path.read_text(encoding="utf-8-sig", errors="surrogateescape")
    lines = io.StringIO(text, newline="").readlines()
    # no field is too large to read: the row it is in is dead-lettered instead (row_problem)
    csv.field_size_limit(sys.maxsize)
    reader = csv.reader(iter(lines))
    try:
        header = next(reader)
        missing = [c for c in required if c not in header]
        if missing:
            raise FormatError(f"{path.name}: missing columns {', '.join(bounds.visible(c)[:80] for c in missing)}")
        rows: list[Row] = []
        done = reader.line_num
        for values in reader:
            start, end = done + 1, reader.line_num
            done = end
            if not values:  # a blank line
                continue
            raw = "".join(lines[start - 1:end]).rstrip("\r\n")
            rows.append(Row(start, dict(zip(header, values)), raw, len(values)))
    except StopIteration:
        raise FormatError(f"{path.name}: empty file") from None
    except csv.Error as exc:  # nothing is written before a file is read whole
        raise FormatError(f"{path.name}: not CSV near line {reader.line_num}: {exc}") from None
    return Table(header, rows)


def row_problem(row: Row) -> str | None:
    """What makes a row unreadable as a whole: a field too large, a byte that is not UTF-8."""
    for column, value in row.fields.items():
        problem = bounds.field_problem(value, column)
        if problem:
            return problem
    return None


class BadValue(ValueError):
    pass


_MISSING = frozenset({"", "NA", "N/A", "NaN", "nan", "null", "NULL"})


def _check(problem: str | None) -> None:
    if problem:
        raise BadValue(problem)


def text(row: Row, column: str) -> str | None:
    """An identifier or code as the source gives it (trimmed): refused, never repaired, when it
    holds a control or format character or is longer than a name."""
    value = row.fields.get(column, "").strip()
    if value in _MISSING:
        return None
    _check(bounds.identifier_problem(value, column))
    return value


def name(row: Row, column: str) -> str | None:
    """A name or free text: cleaned (NFC, no control or format characters, whitespace collapsed)."""
    value = bounds.clean_text(row.fields.get(column, ""))
    if value in _MISSING:
        return None
    _check(bounds.text_problem(value, column, bounds.NAME_MAX))
    return value


def required(row: Row, column: str) -> str:
    value = text(row, column)
    if value is None:
        raise BadValue(f"{column} is empty")
    return value


def required_name(row: Row, column: str) -> str:
    value = name(row, column)
    if value is None:
        raise BadValue(f"{column} is empty")
    return value


def integer(row: Row, column: str, low: int = -int(bounds.STAT_MAX), high: int = int(bounds.STAT_MAX)) -> int | None:
    value = text(row, column)
    if value is None:
        return None
    _check(bounds.integer_text_problem(value, column))
    number = int(value)
    _check(bounds.int_problem(number, column, low, high))
    return number


def season(row: Row, column: str = "season") -> str:
    """A season's year as the source writes it ("2024"), within the bounds."""
    value = required(row, column)
    _check(bounds.season_problem(value, column))
    return value


def number(value: str, column: str, limit: Decimal = bounds.STAT_MAX) -> int | Decimal:
    """An integer stays an int; anything else is a Decimal with the source's exact digits;
    either way finite, of sane length, and within ±limit."""
    if len(value) > bounds.NUMBER_CHARS_MAX:
        raise BadValue(f"{column} is {len(value)} characters long (at most {bounds.NUMBER_CHARS_MAX} for a number)")
    if bounds.integer_text_problem(value, column) is None:
        result: int | Decimal = int(value)
    else:
        try:
            result = Decimal(value)
        except InvalidOperation:
            raise BadValue(f"{column} is not a number: {value!r}") from None
    _check(bounds.number_problem(result, column, limit))
    return result


def decimal(row: Row, column: str, limit: Decimal = bounds.STAT_MAX) -> Decimal | None:
    value = text(row, column)
    return None if value is None else Decimal(number(value, column, limit))
