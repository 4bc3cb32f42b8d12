"""`<query> INTO OUTFILE "file:///dir/prefix_" [FORMAT AS fmt] [PROPERTIES ("k" = "v", ...)]`: Doris puts the
clause after the whole query (after ORDER BY / LIMIT), where sqlglot reads no INTO; the tail is split off the text
here and the query parsed as any other."""

from __future__ import annotations

import re

from sql.errors import parse_error

_KEYWORD = re.compile(r"\binto\s+outfile\b", re.I)
_TAIL = re.compile(r"""^\s*(['"])(?P<path>(?:\\.|(?!\1).)*)\1\s*(?:format\s+as\s+(?P<fmt>\w+))?\s*"""
                   r"""(?:properties\s*\((?P<props>.*)\))?\s*;?\s*$""", re.I | re.S)
_PROP = re.compile(r"""\s*(['"])(?P<k>(?:\\.|(?!\1).)*)\1\s*=\s*(['"])(?P<v>(?:\\.|(?!\3).)*)\3\s*(?:,|$)""", re.S)


def _outside_strings(text: str) -> list[int]:
    """Offsets of `INTO OUTFILE` that are not inside a quoted string, identifier or comment."""
    hits, i, quote = [], 0, ""
    while i < len(text):
        c = text[i]
        if quote:
            if c == "\\" and quote != "`":
                i += 2
                continue
            if c == quote:
                quote = ""
        elif c in "'\"`":
            quote = c
        elif text.startswith("--", i) or c == "#":
            end = text.find("\n", i)
            i = len(text) if end < 0 else end
            continue
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = len(text) if end < 0 else end + 2
            continue
        elif c in "iI" and (m := _KEYWORD.match(text, i)) and (i == 0 or not (text[i - 1].isalnum() or
                                                                             text[i - 1] == "_")):
            hits.append(i)
            i = m.end()
            continue
        i += 1
    return hits


def split_outfile(text: str) -> tuple[str, str, str, tuple[tuple[str, str], ...]] | None:
    """(query text, path, format, properties) of a statement ending in INTO OUTFILE; None for any other."""
    hits = _outside_strings(text)
    if not hits:
        return None
    at = hits[-1]
    tail = text[_KEYWORD.match(text, at).end():]  # type: ignore[union-attr]
    m = _TAIL.match(tail)
    if m is None:
        raise parse_error("errCode = 2, detailMessage = Syntax error in INTO OUTFILE: expected "
                          "INTO OUTFILE \"file_path\" [FORMAT AS fmt] [PROPERTIES (\"k\" = \"v\", ...)]")
    return text[:at], m.group("path"), (m.group("fmt") or "csv").lower(), properties(m.group("props") or "")


def properties(body: str) -> tuple[tuple[str, str], ...]:
    """`"k" = "v", ...` (the inside of PROPERTIES (...)), keys lower-cased."""
    props: list[tuple[str, str]] = []
    body = body.strip()
    pos = 0
    while pos < len(body):
        p = _PROP.match(body, pos)
        if p is None:
            raise parse_error(f"errCode = 2, detailMessage = Syntax error in PROPERTIES near: {body[pos:pos + 40]}")
        props.append((p.group("k").lower(), p.group("v")))
        pos = p.end()
    return tuple(props)
