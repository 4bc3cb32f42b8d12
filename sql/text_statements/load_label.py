"""Doris's LOAD statement (Broker Load / Spark Load) and its resources, read from the text (sqlglot has neither):

    LOAD LABEL [db.]label (
        DATA INFILE ("file:///path/a.csv" [, ...]) [NEGATIVE] INTO TABLE t [PARTITION (p, ...)]
        [COLUMNS TERMINATED BY ","] [LINES TERMINATED BY "\\n"] [FORMAT AS "csv"] [(c1, c2, ...)]
        [SET (c = expr, ...)] [WHERE expr] [PROPERTIES (...)]
        [, DATA INFILE ...]
    ) [WITH RESOURCE 'spark0' [(...)] | WITH BROKER 'b' [(...)] | WITH LOCAL] [PROPERTIES (...)] [COMMENT '...']

    CREATE EXTERNAL RESOURCE 'name' PROPERTIES (...) / DROP RESOURCE 'name' / SHOW RESOURCES [WHERE NAME = ..]
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from sql import statements as st
from sql.errors import analysis_error, parse_error
from sql.text_statements import condition
from sql.text_statements.alter_columns import split_top
from sql.text_statements.outfile import properties


class _Reader:
    """A cursor over the statement text: words, quoted strings and balanced parentheses."""

    def __init__(self, text: str) -> None:
        self.text, self.pos = text, 0

    def _skip(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def word(self, *words: str) -> bool:
        self._skip()
        start = self.pos
        for w in words:
            m = re.compile(rf"{w}\b", re.I).match(self.text, self.pos)
            if m is None:
                self.pos = start
                return False
            self.pos = m.end()
            self._skip()
        return True

    def peek_word(self, word: str) -> bool:
        start = self.pos
        found = self.word(word)
        self.pos = start
        return found

    def string(self) -> str | None:
        self._skip()
        m = re.compile(r"""(['"])((?:\\.|(?!\1).)*)\1""", re.S).match(self.text, self.pos)
        if m is None:
            return None
        self.pos = m.end()
        return m.group(2).encode("latin-1", "backslashreplace").decode("unicode_escape") \
            if "\\" in m.group(2) else m.group(2)

    def name(self) -> str | None:
        self._skip()
        m = re.compile(r"`([^`]+)`|([A-Za-z_$][\w$]*)").match(self.text, self.pos)
        if m is None:
            return None
        self.pos = m.end()
        return m.group(1) or m.group(2)

    def _outside_quotes(self) -> Iterator[tuple[int, str, int]]:
        """(offset, character, parenthesis depth before it) of each character from the cursor that is not inside
        quotes or backticks."""
        depth, i, quote = 0, self.pos, ""
        while i < len(self.text):
            c = self.text[i]
            if quote:
                if c == "\\":
                    i += 1
                elif c == quote:
                    quote = ""
            elif c in "'\"`":
                quote = c
            else:
                yield i, c, depth
                depth += (c == "(") - (c == ")")
            i += 1

    def parens(self) -> str | None:
        """The text inside a balanced `( ... )` (quotes respected)."""
        self._skip()
        if self.pos >= len(self.text) or self.text[self.pos] != "(":
            return None
        for i, c, depth in self._outside_quotes():
            if c == ")" and depth == 1:
                inner = self.text[self.pos + 1:i]
                self.pos = i + 1
                return inner
        raise parse_error("errCode = 2, detailMessage = Syntax error: unbalanced parentheses in LOAD")

    def until(self, *stops: str) -> str:
        """The text up to the next top-level stop word or comma (or the end), parentheses and quotes respected."""
        self._skip()
        start, end = self.pos, len(self.text)
        pattern = re.compile(r"(?:" + "|".join(w for w in stops if w != ",") + r")\b", re.I)
        for i, c, depth in self._outside_quotes():
            if depth == 0 and ((c == "," and "," in stops) or (pattern.match(self.text, i) and (
                    i == 0 or not (self.text[i - 1].isalnum() or self.text[i - 1] == "_")))):
                end = i
                break
        self.pos = end
        return self.text[start:end].strip()

    def rest(self) -> str:
        return self.text[self.pos:].strip().rstrip(";").strip()

    def fail(self, expected: str) -> None:
        near = self.text[self.pos:self.pos + 40]
        raise parse_error(f"errCode = 2, detailMessage = Syntax error in LOAD: expected {expected} near '{near}'")


def _split_top(text: str) -> list[str]:
    return [p for p in split_top(text) if p]


def is_load_label(text: str) -> bool:
    return bool(re.match(r"\s*load\s+label\b", text, re.I))


def _data_description(r: _Reader) -> st.DataDescription:
    merge = "APPEND"
    for kind in ("MERGE", "APPEND", "DELETE"):
        if r.word(kind):
            merge = kind
    if not r.word("DATA", "INFILE"):
        r.fail("DATA INFILE")
    inner = r.parens()
    if inner is None:
        r.fail('("path", ...)')
    paths = tuple(_Reader(p).string() or "" for p in _split_top(inner or ""))
    if not paths or not all(paths):
        r.fail("quoted file paths")
    negative = r.word("NEGATIVE")
    if not r.word("INTO", "TABLE"):
        r.fail("INTO TABLE")
    table = r.name()
    if table is None:
        r.fail("a table name")
    partitions: tuple[str, ...] = ()
    if r.word("TEMPORARY", "PARTITION"):
        raise analysis_error("Do not support loading into temporary partitions with LOAD")
    if r.word("PARTITION") or r.word("PARTITIONS"):
        partitions = tuple(p.strip().strip("`") for p in _split_top(r.parens() or ""))
    column_separator = line_delimiter = fmt = None
    columns: tuple[str, ...] = ()
    sets: tuple[str, ...] = ()
    where = None
    props: tuple[tuple[str, str], ...] = ()
    while True:
        if r.word("COLUMNS", "TERMINATED", "BY"):
            column_separator = r.string()
        elif r.word("LINES", "TERMINATED", "BY"):
            line_delimiter = r.string()
        elif r.word("FORMAT", "AS"):
            fmt = (r.string() or r.name() or "").lower()
        elif r.word("COLUMNS", "FROM", "PATH", "AS"):
            raise analysis_error("COLUMNS FROM PATH AS is not supported by dorislite")
        elif r.word("SET"):
            sets = tuple(_split_top(r.parens() or ""))
        elif r.word("PRECEDING", "FILTER"):
            raise analysis_error("PRECEDING FILTER is not supported by dorislite; use WHERE")
        elif r.word("WHERE"):
            where = r.until("SET", "PROPERTIES", "DELETE", "ORDER", ",", "DATA")
        elif r.word("DELETE", "ON") or r.word("ORDER", "BY"):
            raise analysis_error("DELETE ON and ORDER BY (merge loads) are not supported by dorislite")
        elif r.word("PROPERTIES"):
            props = properties(r.parens() or "")
        elif not columns and (inner := r.parens()) is not None:
            columns = tuple(c.strip().strip("`") for c in _split_top(inner))
        else:
            break
    if merge != "APPEND" or negative:
        raise analysis_error("MERGE / DELETE loads and NEGATIVE are not supported by dorislite")
    return st.DataDescription(paths, table, partitions, column_separator, line_delimiter, fmt, columns, sets,
                              where, props)


def parse_load_label(text: str) -> st.LoadLabel:
    r = _Reader(text)
    r.word("LOAD", "LABEL")
    first = r.name()
    if first is None:
        r.fail("a label")
    db, label = (None, first)
    if r.text[r.pos:r.pos + 1] == ".":
        r.pos += 1
        db, label = first, r.name()
    inner = r.parens()
    if inner is None:
        r.fail("( DATA INFILE ... )")
    descriptions = []
    body = _Reader(inner or "")
    while True:
        descriptions.append(_data_description(body))
        body._skip()
        if body.pos < len(body.text) and body.text[body.pos] == ",":
            body.pos += 1
            continue
        if body.rest():
            body.fail("',' or the end of the data descriptions")
        break
    kind, resource, with_props = "BROKER", None, ()
    if r.word("WITH", "RESOURCE"):
        kind, resource = "SPARK", r.string() or r.name()
        with_props = properties(r.parens() or "")
    elif r.word("WITH", "BROKER"):
        resource = r.string() or r.name()
        with_props = properties(r.parens() or "")
    elif r.word("WITH", "LOCAL"):
        kind = "BROKER"
    elif r.word("WITH", "S3") or r.word("WITH", "HDFS"):
        raise analysis_error("dorislite reads files on its own disk only: use file:/// paths WITH LOCAL or "
                             "WITH BROKER")
    props = properties(r.parens() or "") if r.word("PROPERTIES") else ()
    comment = r.string() if r.word("COMMENT") else None
    if r.rest():
        r.fail("WITH ..., PROPERTIES (...) or the end")
    return st.LoadLabel(db, label or "", tuple(descriptions), kind, resource, with_props, props, comment or "")


def is_resource_statement(text: str) -> bool:
    return bool(re.match(r"\s*(create\s+(external\s+)?resource|drop\s+resource|show\s+resources)\b", text, re.I))


def parse_resource_statement(text: str) -> st.Statement:
    r = _Reader(text)
    if r.word("SHOW", "RESOURCES"):
        like = r.string() if r.word("LIKE") else None
        where = condition(r.rest()[len("WHERE"):]) if r.rest().upper().startswith("WHERE") else None
        return st.ShowResources(like, where)
    if r.word("DROP", "RESOURCE"):
        if_exists = r.word("IF", "EXISTS")
        name = r.string() or r.name()
        if name is None or r.rest():
            r.fail("a resource name")
        return st.DropResource(name or "", if_exists)
    r.word("CREATE")
    r.word("EXTERNAL")
    r.word("RESOURCE")
    if_not_exists = r.word("IF", "NOT", "EXISTS")
    name = r.string() or r.name()
    if name is None:
        r.fail("a resource name")
    if not r.word("PROPERTIES"):
        r.fail("PROPERTIES (...)")
    props = properties(r.parens() or "")
    if r.rest():
        r.fail("the end of CREATE RESOURCE")
    return st.CreateResource(name or "", props, if_not_exists)
