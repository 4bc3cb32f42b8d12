"""sql.fast_insert: a plain literal INSERT ... VALUES read without the SQL parser is the very statement the
parser makes of it; every other shape is left to the parser (None), errors included."""

from __future__ import annotations

import pytest

from sql import statements as st
from sql.dialect import dialect_for_sql_mode
from sql.errors import SqlError
from sql.fast_insert import parse_simple_insert
from sql.parse import parse, to_statement


def _by_parser(text: str) -> st.Insert:
    [node] = [e for e in dialect_for_sql_mode(None)().parse(text) if e is not None]
    statement = to_statement(node)
    assert isinstance(statement, st.Insert)
    return statement


def _shape(s: st.Insert) -> tuple:
    values = tuple(tuple(v.sql() for v in row) for row in s.values or ())
    return s.db, s.table, s.columns, values, s.label, s.partitions, s.query, s.overwrite


@pytest.mark.parametrize("text", [
    "INSERT INTO t VALUES (1, 'a', NULL), (-2.5, 'b c', TRUE)",
    "insert into db1.`my t` (a, `b`) values (1e3, ''),(2,'x');",
    "INSERT INTO t VALUES (1),(2) ; ",
    "INSERT INTO t(k, v) VALUES\n(0, 'multi\nline'), (-0, '-- not a comment'), (12345678901234567890, false)",
    "INSERT INTO `select` VALUES ('NULL', null, 'true')",
])
def test_same_statement_as_the_parser(text: str) -> None:
    fast = parse_simple_insert(text, 10000)
    assert fast is not None
    assert _shape(fast) == _shape(_by_parser(text))
    assert _shape(parse(text)[0]) == _shape(fast)


@pytest.mark.parametrize("text", [
    "INSERT INTO t VALUES (1,2),",  # the parser decides what a trailing comma means
    "INSERT INTO t VALUES (1 2)",
    "INSERT INTO t VALUES ()",
    "INSERT INTO t VALUES (1)(2)",
    "INSERT INTO t VALUES (1, now())",
    "INSERT INTO t VALUES (1 + 1)",
    "INSERT INTO t VALUES (.5)",
    "INSERT INTO t VALUES (+3)",
    "INSERT INTO t VALUES ('it''s')",
    "INSERT INTO t VALUES ('a\\\\b')",
    "INSERT INTO t VALUES (\"double\")",
    "INSERT INTO t VALUES (1) -- comment",
    "INSERT INTO t VALUES (1) /* comment */",
    "INSERT INTO t PARTITION (p1) VALUES (1)",
    "INSERT INTO t WITH LABEL l1 VALUES (1)",
    "INSERT OVERWRITE TABLE t VALUES (1)",
    "INSERT INTO t SELECT 1",
    "INSERT INTO select VALUES (1)",
    "INSERT INTO t VALUES (1); INSERT INTO t VALUES (2)",
])
def test_other_shapes_go_to_the_parser(text: str) -> None:
    assert parse_simple_insert(text, 10000) is None


def test_errors_stay_the_parsers() -> None:
    with pytest.raises(SqlError) as e:
        parse("INSERT INTO t VALUES (1 2)")
    assert e.value.code == 1064
    wide = "INSERT INTO t VALUES (" + ", ".join(["1"] * 20) + ")"
    assert parse_simple_insert(wide, 10) is None  # wider than the limit: the parser's check answers
