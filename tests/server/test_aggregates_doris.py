"""Doris's aggregates through the server: group_concat with ORDER BY / DISTINCT / a separator, count(DISTINCT a, b),
the BITMAP and HLL functions Doris users call on DUPLICATE tables, and functions taking column-valued arguments.

Each query runs twice: over the table alone (the Arrow operators aggregate the scan) and under a join with a
one-row table (DuckDB runs the join and the aggregation above it), and both must give Doris's answer."""

from __future__ import annotations

import pymysql
import pytest

DDL = "DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1 PROPERTIES ('replication_num' = '1')"

ROWS = [
    # id, g, s, n, k, p
    (1, 1, "'b'", 2, 20, "'b'"),
    (2, 1, "'a'", 1, 10, "'x'"),
    (3, 1, "NULL", 3, 30, "NULL"),
    (4, 1, "'c'", None, None, "'c'"),
    (5, 1, "'a'", 5, 50, "'a'"),
    (6, 2, "'z'", 7, 70, "'z'"),
    (7, 2, "'y'", 7, None, "'q'"),
    (8, 3, "NULL", None, None, "NULL"),
]


@pytest.fixture
def agg_table(cur) -> None:
    cur.execute(f"CREATE TABLE t (id INT, g INT, s VARCHAR(20), n INT, k BIGINT, p VARCHAR(20)) {DDL}")
    values = ", ".join("(" + ", ".join("NULL" if v is None else str(v) for v in row) + ")" for row in ROWS)
    cur.execute(f"INSERT INTO t VALUES {values}")
    cur.execute(f"CREATE TABLE one (j INT) {DDL.replace('(id)', '(j)')}")
    cur.execute("INSERT INTO one VALUES (1)")


FROM_SCAN = "FROM t"
FROM_JOIN = "FROM t JOIN one ON t.id >= one.j"


def both(cur, select: str, rest: str = "") -> list[tuple]:
    """The rows of `SELECT select FROM t rest` as the scan's aggregate and as DuckDB's above a join: equal."""
    cur.execute(f"SELECT {select} {FROM_SCAN} {rest}")
    scan = list(cur.fetchall())
    cur.execute(f"SELECT {select} {FROM_JOIN} {rest}")
    joined = list(cur.fetchall())
    assert scan == joined, (scan, joined)
    return scan


# -- group_concat ---------------------------------------------------------------------------------------

GROUP_CONCAT = [
    # NULL keys first ascending, last descending (Doris); NULL values skipped
    ("group_concat(s ORDER BY n, id)", ["c,a,b,a", "z,y", None]),
    ("group_concat(s ORDER BY n DESC, id)", ["a,b,a,c", "z,y", None]),
    ("group_concat(s ORDER BY k DESC)", ["a,b,a,c", "z,y", None]),
    ("group_concat(s ORDER BY k)", ["c,a,b,a", "y,z", None]),
    ("group_concat(s ORDER BY k NULLS LAST)", ["a,b,a,c", "z,y", None]),
    ("group_concat(s ORDER BY k DESC NULLS FIRST)", ["c,a,b,a", "y,z", None]),
    ("group_concat(s, '|' ORDER BY id DESC)", ["a|c|a|b", "y|z", None]),
    ("group_concat(s, ' - ' ORDER BY p, id)", ["a - b - c - a", "y - z", None]),
    ("group_concat(n ORDER BY id DESC)", ["5,3,1,2", "7,7", None]),
    ("group_concat(DISTINCT s ORDER BY s)", ["a,b,c", "y,z", None]),
    ("group_concat(DISTINCT s ORDER BY s DESC)", ["c,b,a", "z,y", None]),
    ("group_concat(DISTINCT s, ';' ORDER BY s)", ["a;b;c", "y;z", None]),
    ("group_concat(DISTINCT s ORDER BY id DESC)", ["a,c,b", "y,z", None]),
    ("group_concat(s, NULL)", [None, None, None]),
    ("group_concat(s, NULL ORDER BY id)", [None, None, None]),
]


@pytest.mark.parametrize(("expr", "expected"), GROUP_CONCAT)
def test_group_concat(cur, agg_table, expr: str, expected: list) -> None:
    rows = both(cur, f"g, {expr}", "GROUP BY g ORDER BY g")
    assert [r[1] for r in rows] == expected


def test_group_concat_distinct_unordered(cur, agg_table) -> None:
    for source in (FROM_SCAN, FROM_JOIN):  # without ORDER BY the order is either executor's own
        cur.execute(f"SELECT g, group_concat(DISTINCT s), group_concat(DISTINCT s, '|') {source} GROUP BY g ORDER BY g")
        rows = cur.fetchall()
        assert [sorted(r[1].split(",")) if r[1] else None for r in rows] == [["a", "b", "c"], ["y", "z"], None]
        assert [sorted(r[2].split("|")) if r[2] else None for r in rows] == [["a", "b", "c"], ["y", "z"], None]


def test_group_concat_without_group_by(cur, agg_table) -> None:
    assert both(cur, "group_concat(s ORDER BY id DESC)") == [("y,z,a,c,a,b",)]
    assert both(cur, "group_concat(DISTINCT s, '' ORDER BY s)") == [("abcyz",)]
    assert both(cur, "group_concat(s ORDER BY id)", "WHERE id > 100") == [(None,)]


# -- count(DISTINCT a, b) --------------------------------------------------------------------------------


def test_count_distinct_several_arguments(cur, agg_table) -> None:
    # (g, s) pairs without NULL: (1,b) (1,a) (1,c) (2,z) (2,y) -> 5; (s, n): (b,2) (a,1) (a,5) (z,7) (y,7) -> 5
    assert both(cur, "count(DISTINCT g, s), count(DISTINCT s, n), count(DISTINCT s, p)") == [(5, 5, 6)]
    rows = both(cur, "g, count(DISTINCT s, n), count(DISTINCT n, k)", "GROUP BY g ORDER BY g")
    assert rows == [(1, 3, 4), (2, 2, 1), (3, 0, 0)]


def test_count_distinct_tuples_are_not_joined_text(cur, agg_table) -> None:
    cur.execute("INSERT INTO t VALUES (20, 9, 'a,b', 1, 1, 'c'), (21, 9, 'a', 1, 1, 'b,c')")
    assert both(cur, "count(DISTINCT s, p)", "WHERE g = 9") == [(2,)]


@pytest.mark.parametrize(("sql", "message"), [
    ("SELECT count(s, n) FROM t", "COUNT must have DISTINCT for multiple arguments"),
    ("SELECT group_concat(s, p) FROM t", "separator of group_concat must be a constant"),
    ("SELECT group_concat(s, '-', 'x') FROM t", "Can not found function 'group_concat' which has 3 arity"),
])
def test_errors(cur, agg_table, sql: str, message: str) -> None:
    with pytest.raises(pymysql.MySQLError) as info:
        cur.execute(sql)
    assert message in str(info.value)


def test_group_concat_with_rollup(cur, agg_table) -> None:
    # grouping sets run in DuckDB: string_agg with the ORDER BY
    cur.execute("SELECT g, group_concat(s, '' ORDER BY id DESC) FROM t GROUP BY ROLLUP(g) ORDER BY g")
    assert cur.fetchall() == ((None, "yzacab"), (1, "acab"), (2, "yz"), (3, None))


# -- functions with column-valued arguments (they said "must be a constant") ---------------------------------

COLUMN_ARGUMENTS = [
    # (select expression over t, expected per id 1..8)
    ("locate(s, concat('xx', p, s))", [3, 4, None, 3, 3, 3, 4, None]),
    ("locate(s, 'abcabc', n)", [2, 1, None, None, 0, 0, 0, None]),
    ("instr(concat(p, s, p), s)", [1, 2, None, 1, 1, 1, 2, None]),
    ("starts_with(concat(s, 'x'), s)", [1, 1, None, 1, 1, 1, 1, None]),
    ("starts_with(p, s)", [1, 0, None, 1, 1, 1, 0, None]),
    ("ends_with(concat('q', s), p)", [1, 0, None, 1, 1, 1, 0, None]),
    ("split_part('a,b,c,d,e,f,g', ',', n)", ["b", "a", "c", None, "e", "g", "g", None]),
    ("split_part('a,b,c', ',', id - 4)", ["a", "b", "c", None, "a", "b", "c", None]),
    ("split_part(concat('1', s, '2', s, '3'), s, 2)", ["2", "2", None, "2", "2", "2", "2", None]),
    ("substring_index('a.b.c.d.e.f.g', '.', n)", ["a.b", "a", "a.b.c", None, "a.b.c.d.e", "a.b.c.d.e.f.g",
                                                  "a.b.c.d.e.f.g", None]),
    ("substring_index('a.b.c', '.', id - 4)", ["a.b.c", "b.c", "c", "", "a", "a.b", "a.b.c", "a.b.c"]),
    ("s LIKE concat(p, '%')", [1, 0, None, 1, 1, 1, 0, None]),
    ("s NOT LIKE concat('%', p)", [0, 1, None, 0, 0, 0, 1, None]),
    ("concat(s, 'Z') LIKE concat(upper(p), '%')", [0, 0, None, 0, 0, 0, 0, None]),
    ("concat(s, 'zz') REGEXP concat('^', p)", [1, 0, None, 1, 1, 1, 0, None]),
]


@pytest.mark.parametrize(("expr", "expected"), COLUMN_ARGUMENTS)
def test_column_arguments(cur, agg_table, expr: str, expected: list) -> None:
    cur.execute(f"SELECT id, {expr} FROM t ORDER BY id")
    scan = list(cur.fetchall())
    cur.execute(f"SELECT t.id, {expr.replace('(s', '(t.s')} FROM t JOIN one ON t.id >= one.j ORDER BY t.id")
    joined = list(cur.fetchall())
    assert [r[1] for r in scan] == expected
    assert joined == scan


def test_column_pattern_in_where(cur, agg_table) -> None:
    assert both(cur, "count(*)", "WHERE s LIKE concat(p, '%')") == [(4,)]
    assert both(cur, "group_concat(s ORDER BY id)", "WHERE locate(s, p) > 0") == [("b,c,a,z",)]


def test_column_pattern_many_distinct(cur, agg_table) -> None:
    # nearly a pattern per row: matched row by row in Python, not one kernel call per pattern
    values = ", ".join(f"({100 + i}, 5, 'v{i:04d}x', 0, 0, '{p}')" for i in range(600) for p in
                       [("v%" if i % 3 == 0 else f"%{i:04d}_" if i % 3 == 1 else f"v{i:04d}")])
    cur.execute(f"INSERT INTO t VALUES {values}")
    assert both(cur, "count(*)", "WHERE g = 5 AND s LIKE p") == [(400,)]
    assert both(cur, "count(*)", "WHERE g = 5 AND s NOT LIKE p") == [(200,)]
    assert both(cur, "count(*)", "WHERE g = 5 AND locate(substring(p, 2), s) > 0") == [(200,)]


def test_count_star_with_a_pushed_and_a_kept_conjunct(cur, agg_table) -> None:
    # the scan evaluates g = 1 and stops reading the columns only it used; count(*)'s placeholder column went too
    assert both(cur, "count(*)", "WHERE g = 1 AND s = p") == [(3,)]
    assert both(cur, "count(*)", "WHERE g = 1 AND s LIKE p") == [(3,)]


# -- BITMAP / HLL over ordinary columns --------------------------------------------------------------------

# distinct non-NULL values per g: n -> g1 {1,2,3,5} g2 {7}; s -> g1 {a,b,c} g2 {y,z}; k -> g1 4, g2 1
BITMAP_HLL = [
    ("bitmap_union_count(to_bitmap(n))", [4, 1, 0]),
    ("bitmap_count(bitmap_union(to_bitmap(n)))", [4, 1, 0]),
    ("bitmap_union_int(n)", [4, 1, 0]),
    ("bitmap_union_count(to_bitmap(k))", [4, 1, 0]),
    ("bitmap_union_count(bitmap_hash(s))", [3, 2, 0]),
    ("bitmap_count(bitmap_union(bitmap_hash(s)))", [3, 2, 0]),
    ("bitmap_union_count(to_bitmap(n - 2))", [3, 1, 0]),  # negative values are no bitmap members
    ("hll_union_agg(hll_hash(s))", [3, 2, 0]),
    ("hll_cardinality(hll_union(hll_hash(n)))", [4, 1, 0]),
    ("hll_union_agg(hll_hash(n))", [4, 1, 0]),
    ("ndv(s)", [3, 2, 0]),
    ("approx_count_distinct(n)", [4, 1, 0]),
    ("bitmap_to_string(bitmap_union(to_bitmap(n)))", ["1,2,3,5", "7", ""]),
    ("bitmap_to_string(bitmap_union(to_bitmap(k)))", ["10,20,30,50", "70", ""]),
]


@pytest.mark.parametrize(("expr", "expected"), BITMAP_HLL)
def test_bitmap_and_hll(cur, agg_table, expr: str, expected: list) -> None:
    rows = both(cur, f"g, {expr}", "GROUP BY g ORDER BY g")
    assert [r[1] for r in rows] == expected


def test_bitmap_and_hll_without_group_by(cur, agg_table) -> None:
    assert both(cur, "bitmap_union_count(to_bitmap(n)), hll_union_agg(hll_hash(s)), ndv(n)") == [(5, 5, 5)]
    assert both(cur, "bitmap_union_count(to_bitmap(n))", "WHERE id > 100") == [(0,)]


BITMAP_SCALARS = [
    ("bitmap_count(to_bitmap(10))", 1),
    ("bitmap_to_string(to_bitmap(10))", "10"),
    ("bitmap_to_string(to_bitmap('1234567'))", "1234567"),
    ("bitmap_to_string(to_bitmap(-1))", ""),
    ("bitmap_count(to_bitmap(NULL))", 0),
    ("bitmap_to_string(bitmap_hash('hello'))", "1321743225"),
    ("bitmap_count(bitmap_empty())", 0),
    ("hll_cardinality(hll_hash('a'))", 1),
    ("hll_cardinality(hll_empty())", 0),
]


@pytest.mark.parametrize(("expr", "expected"), BITMAP_SCALARS)
def test_bitmap_scalars(cur, expr: str, expected: object) -> None:
    cur.execute(f"SELECT {expr}")
    assert cur.fetchall()[0][0] == expected


@pytest.mark.parametrize(("sql", "message"), [
    ("SELECT bitmap_union_count(n) FROM t", "bitmap_union_count takes a BITMAP value"),
    ("SELECT hll_union_agg(to_bitmap(n)) FROM t", "hll_union_agg takes a HLL value"),
    ("SELECT bitmap_count(n) FROM t", "Can not find the compatibility function signature: bitmap_count"),
])
def test_bitmap_errors(cur, agg_table, sql: str, message: str) -> None:
    with pytest.raises(pymysql.MySQLError) as info:
        cur.execute(sql)
    assert message in str(info.value)


def test_bitmap_and_hll_values_print_as_null(cur, agg_table) -> None:
    # Doris's MySQL protocol sends BITMAP / HLL values as NULL
    cur.execute("SELECT to_bitmap(n), hll_hash(s), bitmap_union(to_bitmap(n)) FROM t WHERE id = 1 GROUP BY n, s")
    assert cur.fetchall() == ((None, None, None),)


# -- result labels: the aggregate as typed, lower case ------------------------------------------------------

LABELS = [
    ("count(*)", "count(*)"),
    ("COUNT(*)", "count(*)"),
    ("count(DISTINCT n)", "count(DISTINCT n)"),
    ("count(DISTINCT s, n)", "count(DISTINCT s, n)"),
    ("group_bit_or(n)", "group_bit_or(n)"),
    ("bit_or(n)", "bit_or(n)"),
    ("stddev(n)", "stddev(n)"),
    ("variance(n)", "variance(n)"),
    ("approx_count_distinct(n)", "approx_count_distinct(n)"),
    ("ndv(n)", "ndv(n)"),
    ("percentile(n, 0.5)", "percentile(n, 0.5)"),
    ("max_by(s, n)", "max_by(s, n)"),
    ("bitmap_union_count(to_bitmap(n))", "bitmap_union_count(to_bitmap(n))"),
    ("group_concat(s)", "group_concat(s)"),
    ("group_concat(s, '|')", "group_concat(s, '|')"),
    ("group_concat(s ORDER BY id DESC)", "group_concat(s ORDER BY id DESC)"),
    ("group_concat(DISTINCT s, '|' ORDER BY s)", "group_concat(DISTINCT s, '|' ORDER BY s)"),
    ("sum(n) + 1", "(sum(n) + 1)"),
]


@pytest.mark.parametrize(("expr", "label"), LABELS)
def test_labels(cur, agg_table, expr: str, label: str) -> None:
    cur.execute(f"SELECT {expr} FROM t")
    assert cur.description[0][0] == label


# -- ARRAY aggregates: collect_list / collect_set / array_agg [ORDER BY] --------------------------------------

ARRAYS = [
    ("collect_list(s ORDER BY id DESC)", ['["a", "c", "a", "b"]', '["y", "z"]', "[]"]),
    ("collect_list(n ORDER BY k DESC, id)", ["[5, 3, 2, 1]", "[7, 7]", "[]"]),
    ("collect_set(s ORDER BY s DESC)", ['["c", "b", "a"]', '["z", "y"]', "[]"]),
    ("array_agg(s ORDER BY id)", ['["b", "a", null, "c", "a"]', '["z", "y"]', "[null]"]),
]


@pytest.mark.parametrize(("expr", "expected"), ARRAYS)
def test_array_aggregates(cur, agg_table, expr: str, expected: list) -> None:
    rows = both(cur, f"g, {expr}", "GROUP BY g ORDER BY g")
    assert [r[1] for r in rows] == expected


def test_array_aggregate_label(cur, agg_table) -> None:
    cur.execute("SELECT collect_list(s ORDER BY id DESC) FROM t")
    assert cur.description[0][0] == "collect_list(s ORDER BY id DESC)"
    assert cur.fetchall() == (('["y", "z", "a", "c", "a", "b"]',),)
