"""ALTER TABLE's column clauses (Doris's schema change grammar), read before sqlglot, which knows only part of it:

    ALTER TABLE [db.]t
        ADD COLUMN c type [KEY | agg] [NULL | NOT NULL] [DEFAULT v] [COMMENT 'x'] [AFTER c2 | FIRST] [TO r]
      | ADD COLUMN (c1 type ..., c2 type ...) [TO r]
      | DROP COLUMN c [FROM r]
      | MODIFY COLUMN c type ... [AFTER c2 | FIRST] [FROM r]
      | RENAME COLUMN a b
      | ORDER BY (c1, c2, ...) [FROM r]
      [, more clauses] [PROPERTIES (...)]

Each column definition is read by the dialect's own column parser (the one CREATE TABLE uses).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from sql import statements as st
from sql.errors import parse_error

_NAME = r"(?:`(?:[^`]|``)+`|\w+)"
_HEAD = re.compile(rf"^\s*ALTER\s+TABLE\s+(?:({_NAME})\s*\.\s*)?({_NAME})\s+(?=(?:ADD|DROP|MODIFY|RENAME)\s+COLUMN\b|ORDER\s+BY\b)",
                   re.IGNORECASE)
_ROLLUP = re.compile(rf"\s+(?:TO|FROM)\s+({_NAME})\s*$", re.IGNORECASE)
_PROPERTIES = re.compile(r"\s+PROPERTIES\s*\((?:[^()'\"]|'[^']*'|\"[^\"]*\")*\)\s*$", re.IGNORECASE)


# one column definition (with its AFTER / FIRST) -> (definition, position: None, "FIRST" or the column before)
ReadColumn = Callable[[str], tuple[st.ColumnDefinition, str | None]]


def is_alter_columns(text: str) -> bool:
    return _HEAD.match(text) is not None


def _unquote(name: str) -> str:
    return name[1:-1].replace("``", "`") if name.startswith("`") else name


def split_top(text: str, sep: str = ",") -> list[str]:
    """`text` cut at `sep` outside parentheses, quotes and backticks."""
    parts, depth, quote, start = [], 0, "", 0
    for i, ch in enumerate(text):
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "'\"`":
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == sep and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts]


def parse_alter_columns(text: str, read_column: ReadColumn) -> st.AlterColumns:
    """The statement `text` (is_alter_columns) as AlterColumns; `read_column` parses one column definition
    with the dialect."""
    m = _HEAD.match(text)
    assert m is not None
    db = _unquote(m.group(1)) if m.group(1) else None
    table = _unquote(m.group(2))
    rest = text[m.end():].strip().rstrip(";").strip()
    properties = ""
    if pm := _PROPERTIES.search(rest):
        properties, rest = rest[pm.start():].strip(), rest[:pm.start()]
    clauses = tuple(_clause(c, read_column) for c in split_top(rest))
    return st.AlterColumns(db, table, clauses, properties)


def _rollup(text: str) -> tuple[str, str | None]:
    if m := _ROLLUP.search(text):
        return text[:m.start()].strip(), _unquote(m.group(1))
    return text, None


def _syntax(text: str) -> Exception:
    return parse_error(f"errCode = 2, detailMessage = Syntax error in ALTER TABLE clause: {text}")


def _clause(text: str, read_column: ReadColumn) -> st.ColumnClause:
    words = text.split(None, 2)
    verb = " ".join(words[:2]).upper() if len(words) >= 2 else ""
    body = words[2] if len(words) > 2 else ""
    if verb == "ORDER BY":
        body, rollup = _rollup(body)
        if not (body.startswith("(") and body.endswith(")")):
            raise _syntax(text)
        names = tuple(_unquote(n) for n in split_top(body[1:-1]))
        return st.ReorderColumns(names, rollup)
    if verb == "ADD COLUMN":
        body, rollup = _rollup(body)
        if body.startswith("("):
            if not body.endswith(")"):
                raise _syntax(text)
            defs = tuple(read_column(d) for d in split_top(body[1:-1]))
        else:
            defs = (read_column(body),)
        return st.AddColumns(defs, rollup)
    if verb == "DROP COLUMN":
        body, rollup = _rollup(body)
        if not re.fullmatch(_NAME, body.strip()):
            raise _syntax(text)
        return st.DropColumn(_unquote(body.strip()), rollup)
    if verb == "MODIFY COLUMN":
        body, rollup = _rollup(body)
        return st.ModifyColumn(*read_column(body), rollup)
    if verb == "RENAME COLUMN":
        names = body.split()
        if len(names) != 2 or not all(re.fullmatch(_NAME, n) for n in names):
            raise _syntax(text)
        return st.RenameColumn(_unquote(names[0]), _unquote(names[1]))
    raise _syntax(text)
