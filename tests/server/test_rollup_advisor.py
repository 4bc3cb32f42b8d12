"""The rollup advisor (issue 17): the scan log (information_schema.rollup_candidates), ADMIN SHOW ROLLUP ADVICE's
candidates, measurements and statements (which build rollups the same queries then select), and its errors."""

from __future__ import annotations

import pymysql
import pytest

from tests.server.test_rollup import wait_jobs

ROWS = 20_000
COLUMNS = ["Rank", "RollupName", "Type", "KeyColumns", "Columns", "Queries", "RowsReadWithout", "RowsReadWith",
           "TimeWithoutMs", "TimeWithMs", "Speedup", "EstimatedSize", "Statement"]


def fill(cur, table: str) -> None:
    for start in range(0, ROWS, 5000):
        cur.execute(f"INSERT INTO {table} VALUES " + ",".join(
            f"({i}, 'c{i % 20}', {i % 100}, {i % 7}, {i})" for i in range(start, start + 5000)))


def run(cur, sql: str, times: int = 2) -> None:
    for _ in range(times):
        cur.execute(sql)
        cur.fetchall()


def advice(cur, table: str, limit: str = "") -> list[dict]:
    cur.execute(f"ADMIN SHOW ROLLUP ADVICE FOR {table} {limit}")
    assert [d[0] for d in cur.description] == COLUMNS
    return [dict(zip(COLUMNS, r, strict=True)) for r in cur.fetchall()]


def index_read(cur, sql: str, table: str = "") -> str:
    """The index EXPLAIN's scan of `table` (the first scan when not given) reads."""
    cur.execute("EXPLAIN " + sql)
    line = next(r[0] for r in cur.fetchall() if "TABLE:" in r[0] and (not table or f".{table}(" in r[0]))
    return line.split("(")[1].split(")")[0]


def test_the_scan_log_keeps_what_each_scan_needed(cur, db) -> None:
    cur.execute("CREATE TABLE t (k INT, city VARCHAR(8), b INT, c INT, v BIGINT) DUPLICATE KEY(k) "
                "DISTRIBUTED BY HASH(k) BUCKETS 2 PROPERTIES ('replication_num' = '1')")
    fill(cur, "t")
    run(cur, "SELECT city, sum(v), count(*) FROM t WHERE b = 5 AND c > 2 GROUP BY city", 1)
    cur.execute("SELECT INDEX_NAME, FILTERS, GROUP_BY, AGGREGATES, ROWS_READ, STATEMENT FROM "
                f"information_schema.rollup_candidates WHERE TABLE_SCHEMA = '{db}' AND TABLE_NAME = 't'")
    (row,) = cur.fetchall()
    assert row[:5] == ("t", "b = 5, c > 2", "city", "sum(v), count(*)", ROWS)
    assert row[5].startswith("SELECT city, sum(v)")


def test_advice_builds_rollups_the_queries_then_select(cur) -> None:
    cur.execute("CREATE TABLE t (k INT, city VARCHAR(8), b INT, c INT, v BIGINT) DUPLICATE KEY(k) "
                "DISTRIBUTED BY HASH(k) BUCKETS 2 PROPERTIES ('replication_num' = '1')")
    fill(cur, "t")
    by_b = "SELECT city, sum(v) FROM t WHERE b = 5 GROUP BY city"
    by_b_too = "SELECT city, sum(v) FROM t WHERE b = 7 GROUP BY city"
    by_city = "SELECT c, count(*) FROM t WHERE city = 'c3' AND b < 50 GROUP BY c"
    for sql in (by_b, by_b_too, by_city, "SELECT * FROM t WHERE k = 5"):  # the point query needs no rollup
        run(cur, sql)
    got = advice(cur, "t")  # (ranked by the time each saved on the sample: the order is the machine's)
    assert sorted((a["Type"], a["KeyColumns"], a["Columns"], a["Queries"]) for a in got) == [
        ("DUPLICATE", "b", "b, city, v", "4"), ("DUPLICATE", "city, b", "city, b, c", "2")]
    assert [a["Rank"] for a in got] == ["1", "2"]
    by_b_rollup = next(a for a in got if a["KeyColumns"] == "b")
    assert all(int(a["RowsReadWith"]) < int(a["RowsReadWithout"]) and float(a["Speedup"]) > 0
               and a["EstimatedSize"].endswith("B") for a in got)
    assert by_b_rollup["Statement"].endswith("ADD ROLLUP `r_b` (`b`, `city`, `v`) DUPLICATE KEY (`b`)")
    assert len(advice(cur, "t", "LIMIT 1")) == 1
    for a in got:
        cur.execute(a["Statement"])
        wait_jobs(cur, "t")
    assert (index_read(cur, by_b), index_read(cur, by_city)) == ("r_b", "r_city")
    assert advice(cur, "t") == [] or all(a["RollupName"] not in ("r_b", "r_city") for a in advice(cur, "t"))


def test_a_join_is_replayed_with_the_other_table_as_it_is(cur) -> None:
    cur.execute("CREATE TABLE t (k INT, city VARCHAR(8), b INT, c INT, v BIGINT) DUPLICATE KEY(k) "
                "DISTRIBUTED BY HASH(k) BUCKETS 2 PROPERTIES ('replication_num' = '1')")
    cur.execute("CREATE TABLE u (city VARCHAR(8), name VARCHAR(8)) DUPLICATE KEY(city) DISTRIBUTED BY HASH(city) "
                "BUCKETS 1 PROPERTIES ('replication_num' = '1')")
    fill(cur, "t")
    cur.execute("INSERT INTO u VALUES " + ",".join(f"('c{i}', 'n{i % 3}')" for i in range(20)))
    joined = "SELECT u.name, sum(t.v) FROM t JOIN u ON t.city = u.city WHERE t.b = 5 GROUP BY u.name"
    run(cur, joined)
    (got,) = advice(cur, "t")
    assert (got["KeyColumns"], got["Columns"], got["Queries"]) == ("b", "b, city, v", "2")
    assert int(got["RowsReadWith"]) < int(got["RowsReadWithout"])
    cur.execute(got["Statement"])
    wait_jobs(cur, "t")
    assert index_read(cur, joined, "t") == got["RollupName"]


def test_an_aggregate_table_gets_aggregate_rollups(cur) -> None:
    cur.execute("CREATE TABLE a (k INT, city VARCHAR(8), b INT, c INT, v BIGINT SUM) AGGREGATE KEY(k, city, b, c) "
                "DISTRIBUTED BY HASH(k) BUCKETS 2 PROPERTIES ('replication_num' = '1')")
    fill(cur, "a")
    run(cur, "SELECT city, sum(v) FROM a WHERE b = 5 GROUP BY city")
    (got,) = advice(cur, "a")
    assert (got["Type"], got["KeyColumns"], got["Columns"]) == ("AGGREGATE", "b, city", "b, city, v")
    assert "DUPLICATE KEY" not in got["Statement"]
    cur.execute(got["Statement"])
    wait_jobs(cur, "a")
    assert index_read(cur, "SELECT city, sum(v) FROM a WHERE b = 5 GROUP BY city") == got["RollupName"]


def test_errors(server, cur, db) -> None:
    cur.execute("CREATE TABLE quiet (k INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 "
                "PROPERTIES ('replication_num' = '1')")
    with pytest.raises(pymysql.err.MySQLError, match="No logged query reads table quiet"):
        cur.execute("ADMIN SHOW ROLLUP ADVICE FOR quiet")
    with pytest.raises(pymysql.err.MySQLError, match="does not exist"):
        cur.execute("ADMIN SHOW ROLLUP ADVICE FOR nope")
    run(cur, "SELECT count(*) FROM quiet WHERE k = 1", 1)
    with pytest.raises(pymysql.err.MySQLError, match="LIMIT of ADMIN SHOW ROLLUP ADVICE must be positive"):
        cur.execute("ADMIN SHOW ROLLUP ADVICE FOR quiet LIMIT 0")
    with pytest.raises(pymysql.err.MySQLError, match="Expected FOR|Syntax|syntax"):
        cur.execute("ADMIN SHOW ROLLUP ADVICE quiet")
    cur.execute("CREATE USER IF NOT EXISTS 'adv_user'@'%' IDENTIFIED BY 'pw'")
    cur.execute(f"GRANT SELECT_PRIV ON {db}.* TO 'adv_user'@'%'")
    with server.connect(db, user="adv_user", password="pw") as conn, conn.cursor() as other:
        with pytest.raises(pymysql.err.MySQLError, match="denied"):
            other.execute("ADMIN SHOW ROLLUP ADVICE FOR quiet")
        other.execute("SELECT count(*) FROM quiet")  # its own scans too: the log is everyone's, shown to ADMIN only
        other.execute("SELECT count(*) FROM information_schema.rollup_candidates")
        assert other.fetchone() == (0,)
    cur.execute("SELECT count(*) FROM information_schema.rollup_candidates WHERE TABLE_NAME = 'quiet'")
    assert cur.fetchone()[0] >= 2
    cur.execute("DROP USER 'adv_user'@'%'")
