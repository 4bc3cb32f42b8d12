"""Doris's bounds on one expression (fe.conf `expr_depth_limit` 3000, `expr_children_limit` 10000): a statement
past them is refused before it is planned, with Doris's message; within them, long chains plan in one pass."""

from __future__ import annotations

import pymysql
import pytest

PROPS = "DISTRIBUTED BY HASH(k) BUCKETS 1 PROPERTIES ('replication_num' = '1')"
DEPTH = "Exceeded the maximum depth of an expression tree (3000)."
CHILDREN = "Exceeded the maximum children of an expression tree (10000)."


@pytest.fixture
def t(cur) -> None:
    cur.execute(f"CREATE TABLE t (k INT, s VARCHAR(10)) DUPLICATE KEY(k) {PROPS}")
    cur.execute("INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, NULL), (NULL, 'd'), (7000, 'e')")


def refused(cur, sql: str) -> str:
    with pytest.raises(pymysql.err.OperationalError) as info:
        cur.execute(sql)
    assert info.value.args[0] == 1105
    return info.value.args[1]


def one(cur, sql: str):
    cur.execute(sql)
    return cur.fetchall()[0][0]


def test_long_arithmetic_chains_stop_at_the_depth_limit(cur) -> None:
    assert one(cur, "SELECT " + " + ".join(["1"] * 3000)) == 3000
    assert refused(cur, "SELECT " + " + ".join(["1"] * 3001)) == f"errCode = 2, detailMessage = {DEPTH}"
    assert refused(cur, "SELECT " + " + ".join(str(i) for i in range(100_000))).endswith(DEPTH)
    assert refused(cur, "SELECT " + " * ".join(["1"] * 5000)).endswith(DEPTH)
    # the same text inside a string is a string
    assert one(cur, "SELECT length('" + "+".join(["1"] * 100_000) + "')") == 199_999


def test_wide_predicates_stop_at_the_children_limit(cur, t) -> None:
    # 5,000 equalities are 10,000 leaves: allowed, and read as one IN list
    terms = " OR ".join(f"k = {i}" for i in range(5000))
    assert one(cur, f"SELECT count(*) FROM t WHERE {terms}") == 3
    assert refused(cur, f"SELECT count(*) FROM t WHERE {terms} OR k = 9999").endswith(CHILDREN)
    assert refused(cur, "SELECT count(*) FROM t WHERE " + " OR ".join(f"k = {i}" for i in range(100_000))).endswith(
        CHILDREN)
    assert refused(cur, "SELECT count(*) FROM t WHERE " + " AND ".join(f"k <> -{i}" for i in range(6000))).endswith(
        CHILDREN)
    # a literal IN list is one value set, so 10,000 literals plan as cheaply as ten
    listed = ",".join(str(i) for i in range(10_000))
    assert one(cur, f"SELECT count(*) FROM t WHERE k IN ({listed})") == 4


def test_long_or_chains_keep_their_meaning(cur, t) -> None:
    # equalities on two columns, a NULL-producing term and a non-equality, 40 terms
    terms = [f"k = {i}" for i in range(30)] + [f"s = 'x{i}'" for i in range(8)] + ["s = 'e'", "k > 5000 AND s IS NULL"]
    cur.execute(f"SELECT k FROM t WHERE {' OR '.join(terms)} ORDER BY k")
    assert [r[0] for r in cur.fetchall()] == [1, 2, 3, 7000]
    cur.execute(f"SELECT k, ({' OR '.join(terms)}) FROM t ORDER BY k")
    assert cur.fetchall() == ((None, None), (1, 1), (2, 1), (3, 1), (7000, 1))
    # an AND inside the run binds first: (k = 31 AND s = 'a') is not an equality of the IN list
    terms = [f"k = {i}" for i in range(2, 40)] + ["k = 1 AND s = 'zz'"]
    cur.execute(f"SELECT k FROM t WHERE {' OR '.join(terms)} ORDER BY k")
    assert [r[0] for r in cur.fetchall()] == [2, 3]


def test_limits_are_frontend_config(cur) -> None:
    cur.execute("SELECT floor(abs(ceil(1 + 1)))")
    cur.execute("ADMIN SET FRONTEND CONFIG ('expr_depth_limit' = '3')")
    try:
        assert refused(cur, "SELECT floor(abs(ceil(1 + 1)))") == (
            "errCode = 2, detailMessage = Exceeded the maximum depth of an expression tree (3).")
        cur.execute("SHOW FRONTEND CONFIG LIKE 'expr_%'")
        assert {r[0]: r[1] for r in cur.fetchall()} == {"expr_depth_limit": "3", "expr_children_limit": "10000"}
    finally:
        cur.execute("ADMIN SET FRONTEND CONFIG ('expr_depth_limit' = '3000')")
    cur.execute("SELECT floor(abs(ceil(1 + 1)))")
