"""`EXPORT TABLE [db.]t [PARTITION (p, ...)] [WHERE ...] TO "file:///dir/" [PROPERTIES (...)] [WITH BROKER ...]`:
read from the text (sqlglot has no EXPORT); the WHERE is parsed as a query's condition."""

from __future__ import annotations

import re

from sql import statements as st
from sql.errors import analysis_error, parse_error
from sql.text_statements import condition
from sql.text_statements.outfile import properties

_EXPORT = re.compile(
    r"""^\s*export\s+table\s+(?P<table>(?:`[^`]+`|[\w$]+)(?:\s*\.\s*(?:`[^`]+`|[\w$]+))?)\s*"""
    r"""(?:(?P<temp>temporary\s+)?partitions?\s*\((?P<parts>[^)]*)\)\s*)?"""
    r"""(?:where\s+(?P<where>.+?)\s+)?to\s+(?P<q>['"])(?P<path>(?:\\.|(?!(?P=q)).)*)(?P=q)\s*"""
    r"""(?:properties\s*\((?P<props>.*?)\)\s*)?(?P<broker>with\s+broker\b.*)?;?\s*$""", re.I | re.S)


def is_export(text: str) -> bool:
    return bool(re.match(r"\s*export\s+table\b", text, re.I))


def _name(text: str) -> str:
    return text.strip().strip("`")


def parse_export(text: str) -> st.ExportTable:
    m = _EXPORT.match(text)
    if m is None:
        raise parse_error("errCode = 2, detailMessage = Syntax error in EXPORT: expected EXPORT TABLE t "
                          "[PARTITION (p, ...)] [WHERE ...] TO \"file:///path/\" [PROPERTIES (...)]")
    if m.group("broker"):
        raise analysis_error("dorislite writes files to its own disk only: WITH BROKER is not supported")
    if m.group("temp"):
        raise analysis_error("Do not support exporting temporary partitions")
    parts = [p for p in re.split(r"\s*\.\s*", m.group("table").strip(), maxsplit=1)]
    db, table = (_name(parts[0]), _name(parts[1])) if len(parts) == 2 else (None, _name(parts[0]))
    partitions = tuple(_name(p) for p in (m.group("parts") or "").split(",") if p.strip())
    where = m.group("where")
    if where:
        condition(where)  # checked now: a condition that does not parse fails the statement
    return st.ExportTable(db, table, partitions, where or None, m.group("path"), properties(m.group("props") or ""))
