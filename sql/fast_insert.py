"""`INSERT INTO [db.]t [(c, ...)] VALUES (...), ...` of plain literals, read without the SQL parser.

Dashboards, sensors and loaders send this statement hundreds of times a second; sqlglot takes ~40 us per
literal, most of a small INSERT's cost. The statement must be exactly that shape: numbers, simple quoted
strings (no escapes, no doubled quotes), NULL, TRUE / FALSE. Anything else (a label, PARTITION, a function, a
comment, a hint, an expression) returns None and the statement goes through the parser as before, so the result
is the same statement either way.
"""

from __future__ import annotations

import re

from sqlglot import exp

from sql import statements as st

_IDENT = r"(?:[A-Za-z_][A-Za-z0-9_$]*|`[^`]+`)"
_HEAD = re.compile(
    rf"\s*INSERT\s+INTO\s+(?P<first>{_IDENT})(?:\s*\.\s*(?P<second>{_IDENT}))?\s*"
    rf"(?:\(\s*(?P<columns>{_IDENT}(?:\s*,\s*{_IDENT})*)\s*\)\s*)?VALUES\s*", re.IGNORECASE)
_TOKEN = re.compile(
    r"\s*(?:(?P<number>-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)|'(?P<string>[^'\\]*)'|(?P<word>NULL|TRUE|FALSE)"
    r"|(?P<punct>[(),;]))", re.IGNORECASE)
_COLUMN_NAME = re.compile(_IDENT)
# words sqlglot reads as something else when they stand unquoted where a table name goes
_NOT_NAMES = frozenset({"select", "values", "with", "partition", "temporary", "overwrite", "table", "label"})


def parse_simple_insert(text: str, max_cells: int) -> st.Insert | None:
    """The statement, or None when `text` is not a plain literal INSERT ... VALUES (the parser decides)."""
    head = _HEAD.match(text)
    if head is None:
        return None
    first, second = _name(head["first"]), head["second"]
    if first is None or (second is not None and _name(second) is None):
        return None
    db, table = (first, _name(second)) if second is not None else (None, first)
    columns = None
    if head["columns"] is not None:
        columns = tuple(_unquote(c) for c in _COLUMN_NAME.findall(head["columns"]))
    rows = _rows(text, head.end(), max_cells)
    if rows is None:
        return None
    return st.Insert(db=db, table=table, columns=columns, values=rows)


def _name(ident: str) -> str | None:
    if ident.startswith("`"):
        return ident[1:-1]
    return None if ident.lower() in _NOT_NAMES else ident


def _unquote(ident: str) -> str:
    return ident[1:-1] if ident.startswith("`") else ident


def _rows(text: str, pos: int, max_cells: int) -> tuple[tuple[exp.Expression, ...], ...] | None:
    rows: list[tuple[exp.Expression, ...]] = []
    row: list[exp.Expression] | None = None
    expect_value = False  # inside a row, after `(` or `,`
    after_comma = False  # between rows, after `,`
    end = len(text)
    while pos < end:
        m = _TOKEN.match(text, pos)
        if m is None:
            return None if text[pos:].strip() else _finish(rows, row, after_comma)
        pos = m.end()
        punct = m["punct"]
        if punct is None:  # a value
            if row is None or not expect_value:
                return None
            if (number := m["number"]) is not None:
                row.append(exp.Literal.number(number))
            elif (string := m["string"]) is not None:
                row.append(exp.Literal.string(string))
            else:
                word = m["word"].upper()
                row.append(exp.Null() if word == "NULL" else exp.Boolean(this=word == "TRUE"))
            if len(row) > max_cells:
                return None  # the parser and its limits give the error
            expect_value = False
        elif punct == "(":
            if row is not None or (rows and not after_comma):
                return None
            row, expect_value = [], True
        elif punct == ")":
            if row is None or expect_value:
                return None
            rows.append(tuple(row))
            row, after_comma = None, False
        elif punct == ",":
            if row is not None:
                if expect_value:
                    return None
                expect_value = True
            elif not rows or after_comma:
                return None
            else:
                after_comma = True
        else:  # `;`: only trailing blanks may follow
            return _finish(rows, row, after_comma) if not text[pos:].strip() else None
    return _finish(rows, row, after_comma)


def _finish(rows: list[tuple[exp.Expression, ...]], row: list[exp.Expression] | None, after_comma: bool
            ) -> tuple[tuple[exp.Expression, ...], ...] | None:
    if row is not None or not rows or after_comma:
        return None
    return tuple(rows)
