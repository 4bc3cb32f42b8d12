"""The query language above the scans, through the server: semi / anti joins, NOT IN with NULLs,
INTERSECT / EXCEPT / MINUS, window functions and QUALIFY, ROLLUP / CUBE / GROUPING SETS, and their EXPLAIN."""

from __future__ import annotations

import pymysql
import pytest

DDL = "DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2 PROPERTIES ('replication_num' = '1')"


def rows(cur, sql: str) -> list[tuple]:
    cur.execute(sql)
    return [tuple(r) for r in cur.fetchall()]


@pytest.fixture
def tables(cur) -> None:
    cur.execute(f"CREATE TABLE a (k INT, g VARCHAR(5), v DECIMAL(10, 2)) {DDL}")
    cur.execute(f"CREATE TABLE b (k INT) {DDL}")
    cur.execute(f"CREATE TABLE e (k INT) {DDL}")
    cur.execute("INSERT INTO a VALUES (1, 'x', 1.50), (2, 'x', 2.25), (3, 'y', 3.00), (4, 'y', NULL), "
                "(5, NULL, 10.10)")
    cur.execute("INSERT INTO b VALUES (2), (3), (4), (NULL), (4)")


def test_semi_and_anti_joins(cur, tables) -> None:
    assert rows(cur, "SELECT a.k FROM a LEFT ANTI JOIN b ON a.k = b.k ORDER BY a.k") == [(1,), (5,)]
    assert rows(cur, "SELECT a.k FROM a LEFT SEMI JOIN b ON a.k = b.k ORDER BY a.k") == [(2,), (3,), (4,)]
    assert rows(cur, "SELECT * FROM a LEFT SEMI JOIN e ON a.k = e.k") == []
    assert rows(cur, "SELECT count(*) FROM a LEFT ANTI JOIN e ON a.k = e.k") == [(5,)]
    assert rows(cur, "SELECT b.k FROM a RIGHT SEMI JOIN b ON a.k = b.k AND a.g = 'y' ORDER BY b.k") == [
        (3,), (4,), (4,)]
    assert rows(cur, "SELECT b.k FROM a RIGHT ANTI JOIN b ON a.k = b.k ORDER BY b.k") == [(None,)]
    # only the kept side is visible after a semi join, as in Doris
    with pytest.raises(pymysql.err.OperationalError, match="Unknown column 'b.k'"):
        cur.execute("SELECT b.k FROM a LEFT SEMI JOIN b ON a.k = b.k")
    cur.execute("EXPLAIN SELECT a.k FROM a LEFT ANTI JOIN b ON a.k = b.k")
    assert any("join op: LEFT ANTI JOIN" in r[0] for r in cur.fetchall())


def test_not_in_a_subquery_is_null_aware(cur, tables) -> None:
    # b holds a NULL: `k NOT IN (...)` is never true
    assert rows(cur, "SELECT k FROM a WHERE k NOT IN (SELECT k FROM b)") == []
    assert rows(cur, "SELECT k FROM a WHERE k NOT IN (SELECT k FROM b WHERE k IS NOT NULL) ORDER BY k") == [
        (1,), (5,)]
    assert rows(cur, "SELECT k FROM a WHERE k IN (SELECT k FROM b) ORDER BY k") == [(2,), (3,), (4,)]
    assert rows(cur, "SELECT k FROM a WHERE k NOT IN (SELECT k FROM e) ORDER BY k") == [(1,), (2,), (3,), (4,), (5,)]


def test_intersect_except_minus(cur, tables) -> None:
    assert rows(cur, "SELECT k FROM a INTERSECT SELECT k FROM b ORDER BY k") == [(2,), (3,), (4,)]
    assert rows(cur, "SELECT k FROM b INTERSECT ALL SELECT k FROM b WHERE k = 4 ORDER BY k") == [(4,), (4,)]
    assert rows(cur, "SELECT k FROM a EXCEPT SELECT k FROM b ORDER BY k") == [(1,), (5,)]
    assert rows(cur, "SELECT k FROM a MINUS SELECT k FROM b ORDER BY k DESC LIMIT 1") == [(5,)]
    assert rows(cur, "SELECT k FROM b EXCEPT ALL SELECT k FROM a ORDER BY k") == [(None,), (4,)]
    assert rows(cur, "SELECT k FROM b EXCEPT SELECT k FROM a") == [(None,)]  # NULLs are equal in set operations
    with pytest.raises(pymysql.err.OperationalError, match="different number of columns"):
        cur.execute("SELECT k, g FROM a INTERSECT SELECT k FROM b")


def test_window_functions_and_qualify(cur, tables) -> None:
    got = rows(cur, "SELECT k, g, rank() OVER (PARTITION BY g ORDER BY v DESC) AS r, "
                    "sum(v) OVER (PARTITION BY g) AS s, lag(k, 1, 0) OVER (ORDER BY k) AS p FROM a ORDER BY k")
    assert [(k, g, r, str(s) if s is not None else None, p) for k, g, r, s, p in got] == [
        (1, "x", 2, "3.75", 0), (2, "x", 1, "3.75", 1), (3, "y", 1, "3.00", 2), (4, "y", 2, "3.00", 3),
        (5, None, 1, "10.10", 4)]
    assert rows(cur, "SELECT k FROM a QUALIFY row_number() OVER (PARTITION BY g ORDER BY k DESC) = 1 ORDER BY k") == [
        (2,), (4,), (5,)]
    assert rows(cur, "SELECT g, count(*) AS c, dense_rank() OVER (ORDER BY count(*) DESC) AS dr FROM a GROUP BY g "
                     "QUALIFY dr = 1 ORDER BY g") == [("x", 2, 1), ("y", 2, 1)]
    cur.execute("SELECT k, avg(v) OVER (ORDER BY k ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM a ORDER BY k")
    assert [str(r[1]) for r in cur.fetchall()] == ["1.5000", "1.8750", "2.6250", "3.0000", "10.1000"]
    assert cur.description[1][1] == pymysql.constants.FIELD_TYPE.NEWDECIMAL
    cur.execute("EXPLAIN SELECT k, rank() OVER (ORDER BY k) FROM a")
    assert any("VANALYTIC EVAL" in r[0] for r in cur.fetchall())
    with pytest.raises(pymysql.err.OperationalError, match="WindowFrame clause requires OrderBy clause"):
        cur.execute("SELECT sum(k) OVER (ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM a")
    with pytest.raises(pymysql.err.OperationalError, match="WHERE clause can not contain window functions"):
        cur.execute("SELECT k FROM a WHERE rank() OVER (ORDER BY k) = 1")


def test_rollup_cube_grouping_sets(cur, tables) -> None:
    assert rows(cur, "SELECT g, count(*), sum(k), grouping(g) FROM a GROUP BY ROLLUP(g) ORDER BY grouping(g), g") == [
        (None, 1, 5, 0), ("x", 2, 3, 0), ("y", 2, 7, 0), (None, 5, 15, 1)]
    assert rows(cur, "SELECT g, k % 2 AS odd, count(*), grouping_id(g, k % 2) FROM a GROUP BY CUBE(g, k % 2) "
                     "HAVING grouping_id(g, k % 2) = 2 ORDER BY odd") == [(None, 0, 2, 2), (None, 1, 3, 2)]
    assert rows(cur, "SELECT g, count(*) FROM a GROUP BY g WITH ROLLUP ORDER BY count(*) DESC LIMIT 1") == [(None, 5)]
    assert rows(cur, "SELECT count(*) FROM a GROUP BY GROUPING SETS ((g), ()) ORDER BY 1") == [(1,), (2,), (2,), (5,)]
    cur.execute("EXPLAIN SELECT g, count(*) FROM a GROUP BY ROLLUP(g)")
    assert any("VREPEAT_NODE" in r[0] for r in cur.fetchall())
    with pytest.raises(pymysql.err.OperationalError, match="can only be used with GROUP BY GROUPING SETS"):
        cur.execute("SELECT g, grouping(g) FROM a GROUP BY g")


def test_correlated_subqueries(cur, tables) -> None:
    assert rows(cur, "SELECT k FROM a WHERE EXISTS (SELECT 1 FROM b WHERE b.k = a.k) ORDER BY k") == [(2,), (3,), (4,)]
    assert rows(cur, "SELECT k FROM a WHERE NOT EXISTS (SELECT 1 FROM b WHERE b.k = a.k) ORDER BY k") == [(1,), (5,)]
    assert rows(cur, "SELECT k, (SELECT count(*) FROM b WHERE b.k = a.k) AS n FROM a ORDER BY k") == [
        (1, 0), (2, 1), (3, 1), (4, 2), (5, 0)]
    # TPC-H Q17's shape: a row against an aggregate of its own group
    assert rows(cur, "SELECT k FROM a WHERE v > (SELECT avg(v) FROM a a2 WHERE a2.g = a.g) ORDER BY k") == [(2,)]
    assert rows(cur, "SELECT k FROM a WHERE k NOT IN (SELECT b.k FROM b WHERE b.k <> a.k) ORDER BY k") == [
        (1,), (2,), (3,), (4,), (5,)]
    # a NULL in the set makes NOT IN unknown for every row
    assert rows(cur, "SELECT k FROM a WHERE k NOT IN (SELECT b.k FROM b WHERE b.k IS NULL OR b.k = a.k)") == []
    with pytest.raises(pymysql.err.OperationalError, match="Operand should contain 1 column"):
        cur.execute("SELECT k FROM a WHERE k IN (SELECT k, k FROM b WHERE b.k = a.k)")


def test_decimal_division_is_exact(cur, tables) -> None:
    cur.execute("SELECT 10.00 / 3.0, v / 3, sum(v) / 7.0 FROM a WHERE k = 1 GROUP BY v")
    assert [str(x) for x in cur.fetchone()] == ["3.333333", "0.500000", "0.214285"]
    assert rows(cur, "SELECT 5.5 / 0.0") == [(None,)]


def test_no_clause_is_silently_ignored(cur, tables) -> None:
    assert rows(cur, "SELECT * EXCEPT (v, g) FROM a WHERE k < 3 ORDER BY k") == [(1,), (2,)]
    cur.execute("SELECT * REPLACE (k * 10 AS k) FROM a WHERE k = 2")
    assert [d[0] for d in cur.description] == ["k", "g", "v"] and cur.fetchone()[:2] == (20, "x")
    with pytest.raises(pymysql.err.OperationalError, match="Unknown column 'nope'"):
        cur.execute("SELECT * EXCEPT (nope) FROM a")
    # time travel reads an older version only under a retention: never the current rows instead
    with pytest.raises(pymysql.err.OperationalError, match="Time travel is off for table a"):
        cur.execute("SELECT * FROM a FOR SYSTEM_TIME AS OF '2024-01-01 00:00:00'")
    # sql_mode decides how `||` and backslashes read
    assert rows(cur, "SELECT 1 || 0") == [(1,)]
    cur.execute("SET sql_mode = 'PIPES_AS_CONCAT'")
    assert rows(cur, "SELECT 1 || 2, 'a' || NULL") == [("12", None)]
    cur.execute("SET sql_mode = 'NO_BACKSLASH_ESCAPES'")
    assert rows(cur, r"SELECT 'a\nb', length('a\nb')") == [("a\\nb", 4)]
    cur.execute("SET sql_mode = DEFAULT")
    assert rows(cur, r"SELECT length('a\nb')") == [(3,)]


def test_values_doris_gives(cur, tables) -> None:
    assert rows(cur, "SELECT CAST('20190101' AS CHAR(2)), CAST('abcdef' AS VARCHAR(3)), CAST('2024.12.12' AS DATE)")[0][:2] \
        == ("20", "abc")
    cur.execute("SELECT CAST('2024.12.12' AS DATE)")
    assert str(cur.fetchone()[0]) == "2024-12-12"
    cur.execute("SELECT sum(DISTINCT k % 2), avg(DISTINCT k % 2), avg(v), sum(DISTINCT v) FROM a")
    total, mean, avg_v, distinct_v = cur.fetchone()
    assert (total, float(mean), str(avg_v), str(distinct_v)) == (1, 0.5, "4.2125", "16.85")
