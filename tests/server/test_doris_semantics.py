"""Every difference between Doris's SQL semantics and DuckDB's listed in doris-on-duckdb.md (the team's fact
sheet), through the server, with Doris's answer.

Each expression runs twice over one-row tables: as a plain scan (the Arrow operators) and under a join (the
plan DuckDB runs), so both executors must give Doris's answer. Values are compared as the MySQL text protocol
sends them (no client-side conversion): that is how Doris's own regression outputs and BI tools see them.
"""

from __future__ import annotations

import pymysql
import pytest

from tests.conftest import ServerProcess

PROPS = "DISTRIBUTED BY HASH(id) BUCKETS 1 PROPERTIES ('replication_num' = '1')"


@pytest.fixture(scope="module")
def raw(server: ServerProcess):
    """A connection that leaves every value as the text the server sent, in a database with the fixtures."""
    conn = server.connect(conv={})
    cur = conn.cursor()
    cur.execute("CREATE DATABASE IF NOT EXISTS semantics")
    cur.execute("USE semantics")
    cur.execute("DROP TABLE IF EXISTS v")
    cur.execute("DROP TABLE IF EXISTS one")
    cur.execute("DROP TABLE IF EXISTS n")
    cur.execute(
        "CREATE TABLE v (id INT, i INT, two INT, big BIGINT, neg INT, s VARCHAR(20), b VARCHAR(5), one_s VARCHAR(5), "
        "d DATE, dt DATETIME, d15 DECIMAL(15, 2), d12 DECIMAL(12, 4), d38 DECIMAL(38, 10), dbl DOUBLE, f FLOAT, "
        "utf VARCHAR(10), empty VARCHAR(5), zero INT, ti TINYINT, si SMALLINT, imax INT, bmax BIGINT) "
        f"DUPLICATE KEY(id) {PROPS}")
    cur.execute(
        "INSERT INTO v VALUES (1, 1, 2, 7, -7, 'hello', 'b', '1', '2024-01-31', '2024-01-07 13:05:09', 1.25, 2.5, "
        "1.5, 0.5, 0.1, 'héllo', '', 0, 100, 30000, 2147483647, 9223372036854775807)")
    cur.execute(f"CREATE TABLE one (id INT) DUPLICATE KEY(id) {PROPS}")
    cur.execute("INSERT INTO one VALUES (1)")
    cur.execute(f"CREATE TABLE n (id INT, x INT, g VARCHAR(5), a INT, c INT) DUPLICATE KEY(id) {PROPS}")
    cur.execute("INSERT INTO n VALUES (1, NULL, 'a', 1, 1), (2, 3, 'a', NULL, 2), (3, 1, 'b', 2, NULL), "
                "(4, 2, 'b', 2, 2), (5, 8, 'c', 3, 3), (6, 441, 'c', 3, 3)")
    yield cur
    conn.close()


def texts(cur, sql: str) -> list[tuple]:
    cur.execute(sql)
    return [tuple(r) for r in cur.fetchall()]


def both(cur, expression: str) -> tuple[str | None, str | None]:
    """`expression` over table v: as a scan, and as DuckDB runs it (under a join)."""
    (scan,) = texts(cur, f"SELECT {expression} FROM v")
    (joined,) = texts(cur, f"SELECT {expression} FROM v JOIN one ON v.id = one.id")
    return scan[0], joined[0]


# (expression over the columns of v, Doris's answer as text); one group per section of doris-on-duckdb.md
ARITHMETIC = [
    ("i / zero", None), ("7 / two", "3.5"), ("neg DIV two", "-3"), ("big DIV zero", None),
    ("CAST(7.5 AS DECIMAL(3, 1)) DIV two", "3"), ("neg % 3", "-1"), ("big % -3", "1"),
    ("CAST(-7.5 AS DECIMAL(3, 1)) % two", "-1.5"), ("big % zero", None),
    ("d15 + d12", "3.7500"), ("d15 * d12", "3.125000"), ("d38 * d38", "2.250000"),
    ("d15 / d12", "0.500000"), ("imax + i", "2147483648"), ("ti * ti", "10000"), ("si + si", "60000"),
    ("bmax + i", "-9223372036854775808"), ("0.1 + 0.2", "0.3"), ("round(2.5)", "3"), ("round(-2.5)", "-3"),
    ("round(1.005, 2)", "1.01"), ("truncate(123.123, -1)", "120"),
]
CASTS = [
    ("CAST(s AS DATETIME)", None), ("CAST('1212.31' AS TINYINT)", None), ("CAST(concat(one_s, '212.31') AS INT)", "1212"),
    ("CAST(concat('3.1', one_s) AS INT)", "3"), ("CAST(concat('3.000', ' ') AS INT)", None),
    ("CAST(concat('3', ' ') AS INT)", "3"), ("CAST(concat('1e', one_s) AS INT)", None),
    ("CAST(concat('2019010', one_s) AS CHAR(2))", "20"),
    ("i = '1.5'", "0"), ("two = '1.5'", "0"), ("b = 1", None), ("one_s = 1", "1"), ("i IN ('1', 'x')", "1"),
    ("i IN ('01', '2')", "1"), ("d >= '2024-01-31 12:00:00'", "0"), ("d >= '2024-01-31'", "1"),
    ("d = CAST('2024-01-31 00:00:00' AS DATETIME)", "1"), ("d BETWEEN '2024-01-31 00:00:01' AND '2024-02-01'", "0"),
    ("if(i > 0, i, 'x')", "1"), ("coalesce(NULL, i, 'x')", "1"), ("CASE WHEN i > 5 THEN i ELSE 'x' END", "x"),
    ("ifnull(i, 'x')", "1"),
]
STRINGS = [
    ("length(utf)", "6"), ("char_length(utf)", "5"), ("substring(s, 0, 2)", ""), ("substring(s, -3, 2)", "ll"),
    ("substring(s, -3)", "llo"), ("substring(s, 9, 2)", ""), ("substring(s, 2, 0)", ""), ("locate('', s)", "1"),
    ("locate('l', s, 4)", "4"), ("instr(s, 'z')", "0"), ("concat(s, NULL)", None), ("concat_ws('-', s, NULL, b)", "hello-b"),
    ("concat_ws(NULL, s, b)", None), ("lpad(s, 1, 'xy')", "h"), ("lpad(b, 3, 'xy')", "xyb"), ("rpad(s, 7, '')", ""),
    ("split_part('abc##123###xyz', '##', -1)", "xyz"), ("split_part(concat('abc##123###', 'xyz'), '##', -2)", "123#"),
    ("split_part(s, 'l', 0)", None), ("split_part(s, 'l', 9)", None), ("split_part(s, 'l', 2)", ""),
    ("regexp_extract(concat('AbC', 'dE'), '([[:lower:]]+)C([[:lower:]]+)', 2)", "d"),
    ("regexp_extract(s, '(z+)', 1)", ""), ("'a' = upper(b)", "0"), ("s LIKE 'H%'", "0"), ("upper(b) < 'a'", "1"),
    ("s = concat(s, ' ')", "0"), ("empty IS NULL", "0"), ("concat('a', b) IS TRUE", None),
    ("one_s IS TRUE", "1"), ("one_s IS FALSE", "0"), ("one_s IS NOT TRUE", "0"), ("(i > 5) IS FALSE", "1"),
    ("NULL IS TRUE", None), ("(i > 0) IS TRUE", "1"),
]
DATES = [
    ("date_format(dt, '%W %M %i %e %D %j %k %r %T %U %u %v %x %w %a %b %c %h %p %s %y')",
     "Sunday January 05 7 7th 007 13 01:05:09 PM 13:05:09 01 01 01 2024 0 Sun Jan 1 01 PM 09 24"),
    ("str_to_date(empty, '%Y-%m-%d')", None), ("str_to_date(concat('2024-01-0', one_s), '%Y-%m-%d')", "2024-01-01"),
    ("str_to_date('2024-01-01 10:11:12', '%Y-%m-%d %H:%i:%s')", "2024-01-01 10:11:12"),
    ("date_trunc(d, 'month')", "2024-01-01"), ("date_trunc(dt, 'hour')", "2024-01-07 13:00:00"),
    ("days_add(d, 1)", "2024-02-01"), ("d + INTERVAL 1 MONTH", "2024-02-29"), ("date_add(d, INTERVAL 1 DAY)", "2024-02-01"),
    ("datediff(CAST('2007-12-31 23:59:59' AS DATETIME), CAST('2007-12-30' AS DATE))", "1"),
    ("timestampdiff(YEAR, '2002-05-01', '2001-01-01')", "-1"), ("timestampdiff(MONTH, '2003-02-01', '2003-05-01')", "3"),
    ("timestampdiff(MONTH, d, '2024-02-29')", "0"), ("timestampdiff(HOUR, '2024-01-01 10:59:00', '2024-01-01 11:01:00')", "0"),
    ("timestampdiff(YEAR, '2023-12-31', '2024-01-01')", "0"),
    ("dayofweek('2019-06-25')", "3"), ("dayofweek(d)", "4"), ("weekday('2019-06-25')", "1"), ("week('2020-1-1')", "0"),
    ("weekofyear('2008-02-20')", "8"), ("yearweek('2021-1-1')", "202052"), ("yearweek('2020-7-1')", "202026"),
    ("week(d)", "4"), ("yearweek(d)", "202404"),
]
OUTPUT = [
    ("dbl / 5 + CAST(0.2 AS DOUBLE)", "0.30000000000000004"), ("dbl * 2e20", "1e+20"), ("dbl * 200", "100"),
    ("f", "0.1"), ("dbl * 3e-5", "1.5e-05"), ("dbl * 2e16", "1e+16"), ("dbl * 0 + 33043707618338.715", "33043707618338.715"),
    ("sqrt(-dbl)", None),
    ("i > 0", "1"), ("i < 0", "0"), ("d15", "1.25"), ("d15 - d15", "0.00"), ("CAST(dbl AS DOUBLE) * 0", "0"),
]


@pytest.mark.parametrize("expression,expected", ARITHMETIC + CASTS + STRINGS + DATES + OUTPUT,
                         ids=[e for e, _ in ARITHMETIC + CASTS + STRINGS + DATES + OUTPUT])
def test_value(raw, expression: str, expected: str | None) -> None:
    assert both(raw, expression) == (expected, expected)


def test_unix_time_follows_the_session_time_zone(raw) -> None:
    raw.execute("SET time_zone = '+08:00'")
    try:
        assert both(raw, "unix_timestamp('2007-11-30 10:30:19')") == ("1196389819",) * 2
        assert both(raw, "from_unixtime(1196440219 + i - 1)") == ("2007-12-01 00:30:19",) * 2
        assert both(raw, "from_unixtime(1196440219 + i - 1, 'yyyyMMdd')") == ("20071201",) * 2
    finally:
        raw.execute("SET time_zone = DEFAULT")


# -- ordering, windows, aggregates, set operations, labels: whole queries -----------------------------------

JOIN = "FROM n JOIN one ON n.id > one.id - 100"  # every row of n: DuckDB runs it


@pytest.mark.parametrize("source", ["FROM n", JOIN])
def test_nulls_sort_first_ascending_last_descending(raw, source: str) -> None:
    assert texts(raw, f"SELECT x {source} ORDER BY x LIMIT 3") == [(None,), ("1",), ("2",)]
    assert texts(raw, f"SELECT x {source} ORDER BY x DESC LIMIT 2") == [("441",), ("8",)]
    assert texts(raw, f"SELECT x, row_number() OVER (ORDER BY x) {source} ORDER BY x LIMIT 1") == [(None, "1")]
    assert texts(raw, f"SELECT group_concat(g ORDER BY x) {source}") == [("a,b,b,a,c,c",)]


def test_windows(raw) -> None:
    assert texts(raw, "SELECT a, rank() OVER (ORDER BY a), dense_rank() OVER (ORDER BY a) FROM n ORDER BY a, id") == [
        (None, "1", "1"), ("1", "2", "2"), ("2", "3", "3"), ("2", "3", "3"), ("3", "5", "4"), ("3", "5", "4")]
    assert texts(raw, "SELECT id, lag(id, 1, 0) OVER (ORDER BY id), lead(id) OVER (ORDER BY id) FROM n "
                      "WHERE id <= 2 ORDER BY id") == [("1", "0", "2"), ("2", "1", None)]
    ntiles = texts(raw, "SELECT t, count(*) FROM (SELECT ntile(4) OVER (ORDER BY id) t FROM n) s GROUP BY t ORDER BY t")
    assert ntiles == [("1", "2"), ("2", "2"), ("3", "1"), ("4", "1")]
    assert texts(raw, "SELECT id, sum(id) OVER (ORDER BY a) FROM n ORDER BY id") == [
        ("1", "3"), ("2", "2"), ("3", "10"), ("4", "10"), ("5", "21"), ("6", "21")]
    assert texts(raw, "SELECT stddev_samp(x) OVER (ORDER BY id ROWS BETWEEN CURRENT ROW AND CURRENT ROW) FROM n "
                      "WHERE id = 2") == [(None,)]


def test_grouping_id_bits(raw) -> None:
    assert texts(raw, "SELECT g, a, GROUPING_ID(g, a), GROUPING(g) FROM n WHERE id > 3 GROUP BY ROLLUP(g, a) "
                      "ORDER BY GROUPING_ID(g, a), g, a") == [
        ("b", "2", "0", "0"), ("c", "3", "0", "0"), ("b", None, "1", "0"), ("c", None, "1", "0"), (None, None, "3", "1")]


def test_aggregate_types_and_values(raw) -> None:
    assert texts(raw, "SELECT sum(i), sum(d15), avg(d15), avg(i), count(*) FROM v") == [
        ("1", "1.25", "1.2500", "1", "1")]
    raw.execute("SELECT sum(i), count(*) FROM v")
    assert [d[1] for d in raw.description] == [pymysql.constants.FIELD_TYPE.LONGLONG] * 2
    assert texts(raw, "SELECT percentile(x, 0.55) FROM n WHERE x > 3") == [("246.15",)]
    assert texts(raw, "SELECT count(DISTINCT a, c) FROM n") == [("3",)]
    assert texts(raw, "SELECT group_concat(g), group_concat(g, NULL) FROM n WHERE id < 3") == [("a,a", None)]


def test_set_operations_and_limit(raw) -> None:
    assert texts(raw, "SELECT g FROM n INTERSECT SELECT g FROM n WHERE id > 2 ORDER BY g") == [("b",), ("c",)]
    assert sorted(texts(raw, "SELECT g FROM n EXCEPT SELECT g FROM n WHERE id > 4")) == [("a",), ("b",)]
    assert texts(raw, "SELECT 1 UNION SELECT 'a' ORDER BY 1") == [("1",), ("a",)]
    assert texts(raw, "SELECT id FROM n ORDER BY id LIMIT 1, 2") == [("2",), ("3",)]


def test_labels(raw) -> None:
    raw.execute("SELECT count(*), ifnull(x, 0), x + 1, sum(a), x*2+a, x > 1 AND a < 2 FROM n GROUP BY x, a")
    assert [d[0] for d in raw.description] == ["count(*)", "ifnull(x, 0)", "(x + 1)", "sum(a)", "((x * 2) + a)",
                                               "((x > 1) AND (a < 2))"]
    # casts as Nereids prints them (Cast.toSql: `cast(x as <TYPE>)`, DECIMALV3 / DATEV2 / DATETIMEV2 / TEXT)
    raw.execute("SELECT CAST(x AS INT), CAST(a + 1 AS DECIMAL(10, 2)), CAST(g AS DATE), CAST(g AS DATETIME(3)), "
                "CAST(x AS STRING), CAST(x AS VARCHAR(4)), CAST(x AS LARGEINT), CAST(x AS BIGINT) FROM n LIMIT 1")
    assert [d[0] for d in raw.description] == [
        "cast(x as INT)", "cast((a + 1) as DECIMALV3(10, 2))", "cast(g as DATEV2)", "cast(g as DATETIMEV2(3))",
        "cast(x as TEXT)", "cast(x as VARCHAR(4))", "cast(x as LARGEINT)", "cast(x as BIGINT)"]


def test_largeint_and_datetime_casts(raw) -> None:
    assert texts(raw, "SELECT CAST('12345678901234567890123456789012345678' AS LARGEINT), CAST(-5 AS LARGEINT) + 1") == [
        ("12345678901234567890123456789012345678", "-4")]
    assert texts(raw, "SELECT CAST('2020-01-01 00:00:01.123456' AS DATETIME(3))") == [("2020-01-01 00:00:01.123",)]
    with pytest.raises(pymysql.err.OperationalError, match="Scale of Datetime/Time must between 0 and 6"):
        raw.execute("SELECT CAST('2020-01-01' AS DATETIME(7))")
