"""CREATE TABLE AS SELECT, CREATE TABLE LIKE [WITH ROLLUP], INSERT OVERWRITE [PARTITION], UPDATE on UNIQUE KEY
tables, through the server: the rows, the derived schema, atomicity, and Doris's errors."""

from __future__ import annotations

import datetime as dt

import pymysql
import pytest

from tests.server.test_rollup import wait_jobs

PROPS = "PROPERTIES ('replication_num' = '1')"


def rows(cur, sql: str) -> list[tuple]:
    cur.execute(sql)
    return [tuple(r) for r in cur.fetchall()]


@pytest.fixture
def sales(cur) -> None:
    cur.execute("CREATE TABLE sales (k INT, region VARCHAR(10), amount DECIMAL(10, 2), d DATE) "
                f"DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2 {PROPS}")
    cur.execute("INSERT INTO sales VALUES (1, 'north', 10.00, '2024-01-01'), (2, 'north', 5.50, '2024-02-01'), "
                "(3, 'south', 7.25, '2024-03-01'), (4, 'east', 1.00, NULL)")


@pytest.fixture
def users(cur) -> None:
    cur.execute("CREATE TABLE users (id INT, name VARCHAR(20), score INT, city VARCHAR(10)) UNIQUE KEY(id) "
                f"DISTRIBUTED BY HASH(id) BUCKETS 2 {PROPS}")
    cur.execute("INSERT INTO users VALUES (1, 'ann', 10, 'rome'), (2, 'bob', 20, 'oslo'), (3, 'cid', 30, 'rome')")


# -- CREATE TABLE AS SELECT ------------------------------------------------------------------------------


def test_ctas_derives_columns_and_loads_rows(cur, sales) -> None:
    cur.execute("CREATE TABLE by_region AS SELECT region, sum(amount) AS total, count(*) AS n, max(d) AS last "
                "FROM sales GROUP BY region")
    assert cur.rowcount == 3
    assert rows(cur, "SELECT region, total, n, last FROM by_region ORDER BY region") == [
        ("east", pytest.approx(1), 1, None),
        ("north", pytest.approx(15.5), 2, dt.date(2024, 2, 1)),
        ("south", pytest.approx(7.25), 1, dt.date(2024, 3, 1)),
    ]
    desc = rows(cur, "DESC by_region")
    assert [(r[0], r[1], r[3]) for r in desc] == [
        ("region", "VARCHAR(65533)", "true"), ("total", "DECIMAL(38, 2)", "false"),
        ("n", "BIGINT", "false"), ("last", "DATE", "false")]
    cur.execute("SHOW CREATE TABLE by_region")
    text = cur.fetchone()[1]
    assert "DUPLICATE KEY(`region`)" in text and "DISTRIBUTED BY RANDOM BUCKETS AUTO" in text


def test_ctas_with_names_keys_distribution_and_properties(cur, sales) -> None:
    cur.execute("CREATE TABLE t2 (id, area) UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 3 "
                f"{PROPS} AS SELECT k, region FROM sales WHERE amount > 2")
    assert rows(cur, "SELECT id, area FROM t2 ORDER BY id") == [(1, "north"), (2, "north"), (3, "south")]
    cur.execute("SHOW CREATE TABLE t2")
    text = cur.fetchone()[1]
    assert "UNIQUE KEY(`id`)" in text and "DISTRIBUTED BY HASH(`id`) BUCKETS 3" in text
    # a constant query runs in-process; IF NOT EXISTS keeps the table as it was
    cur.execute("CREATE TABLE c AS SELECT 1 AS a, 'x' AS b, CAST(2.5 AS DOUBLE) AS c, NULL AS d")
    assert rows(cur, "SELECT a, b, c, d FROM c") == [(1, "x", 2.5, None)]
    cur.execute("CREATE TABLE IF NOT EXISTS c AS SELECT 7 AS a")
    assert rows(cur, "SELECT a FROM c") == [(1,)]


def test_ctas_errors_leave_no_table(cur, sales) -> None:
    with pytest.raises(pymysql.err.OperationalError, match="already exists"):
        cur.execute("CREATE TABLE sales AS SELECT 1 AS a")
    with pytest.raises(pymysql.err.OperationalError, match="Number of columns don't equal"):
        cur.execute("CREATE TABLE t3 (a, b) AS SELECT k FROM sales")
    with pytest.raises(pymysql.err.OperationalError, match="Unknown column 'nope'"):
        cur.execute("CREATE TABLE t3 AS SELECT nope FROM sales")
    with pytest.raises(pymysql.err.OperationalError, match="Duplicate column name"):
        cur.execute("CREATE TABLE t3 AS SELECT k, k FROM sales")
    with pytest.raises(pymysql.err.OperationalError, match="should be greater than zero"):
        cur.execute("CREATE TABLE t3 (a) DISTRIBUTED BY HASH(a) BUCKETS 0 AS SELECT k FROM sales")
    # the load fails (strict mode: rows no partition takes): the new table is dropped again
    with pytest.raises(pymysql.err.OperationalError, match="no partition for this tuple|filtered"):
        cur.execute("CREATE TABLE t3 (a) PARTITION BY RANGE(a) (PARTITION p1 VALUES LESS THAN ('2')) "
                    "DISTRIBUTED BY HASH(a) BUCKETS 1 AS SELECT k FROM sales")
    assert rows(cur, "SHOW TABLES LIKE 't3'") == []


# -- CREATE TABLE LIKE ------------------------------------------------------------------------------------


def test_create_table_like_copies_definition_not_data(cur, sales) -> None:
    cur.execute("ALTER TABLE sales ADD ROLLUP r_region (region, amount)")
    wait_jobs(cur, "sales")
    cur.execute("ALTER TABLE sales ADD ROLLUP r_k (region, k)")
    wait_jobs(cur, "sales")
    cur.execute("CREATE TABLE copy1 LIKE sales")
    assert rows(cur, "SELECT count(*) FROM copy1") == [(0,)]
    cur.execute("SHOW CREATE TABLE sales")
    original = cur.fetchone()[1]
    cur.execute("SHOW CREATE TABLE copy1")
    assert cur.fetchone()[1] == original.replace("`sales`", "`copy1`", 1)
    cur.execute("DESC copy1 ALL")
    assert {r[0] for r in cur.fetchall() if r[0]} == {"copy1"}
    cur.execute("CREATE TABLE copy2 LIKE sales WITH ROLLUP (r_k)")
    cur.execute("DESC copy2 ALL")
    assert {r[0] for r in cur.fetchall() if r[0]} == {"copy2", "r_k"}
    cur.execute("CREATE TABLE copy3 LIKE sales WITH ROLLUP")
    cur.execute("DESC copy3 ALL")
    assert {r[0] for r in cur.fetchall() if r[0]} == {"copy3", "r_k", "r_region"}
    cur.execute("INSERT INTO copy3 VALUES (9, 'west', 2.00, '2024-05-05')")
    assert rows(cur, "SELECT k, region FROM copy3") == [(9, "west")]
    with pytest.raises(pymysql.err.OperationalError, match=r"Rollup index\[nope\] not exists"):
        cur.execute("CREATE TABLE copy4 LIKE sales WITH ROLLUP (nope)")
    with pytest.raises(pymysql.err.OperationalError, match="Unknown table 'missing'"):
        cur.execute("CREATE TABLE copy4 LIKE missing")
    with pytest.raises(pymysql.err.OperationalError, match="already exists"):
        cur.execute("CREATE TABLE copy1 LIKE sales")
    cur.execute("CREATE TABLE IF NOT EXISTS copy1 LIKE sales")


# -- INSERT OVERWRITE -------------------------------------------------------------------------------------


def test_insert_overwrite_replaces_all_rows(cur, sales) -> None:
    cur.execute("INSERT OVERWRITE TABLE sales VALUES (7, 'west', 3.00, '2024-07-07')")
    assert rows(cur, "SELECT k, region FROM sales") == [(7, "west")]
    cur.execute("INSERT INTO sales VALUES (8, 'west', 4.00, NULL)")
    assert rows(cur, "SELECT k FROM sales ORDER BY k") == [(7,), (8,)]
    cur.execute("INSERT OVERWRITE TABLE sales WITH LABEL ow_1 SELECT 1, 'north', 1.00, NULL")
    assert rows(cur, "SELECT k FROM sales") == [(1,)]
    # an empty result empties the table
    cur.execute("INSERT OVERWRITE TABLE sales SELECT 1, 'north', 1.00, NULL FROM (SELECT 1 AS x) s WHERE x > 1")
    assert rows(cur, "SELECT count(*) FROM sales") == [(0,)]
    cur.execute("SHOW LOAD WHERE LABEL = 'ow_1'")
    assert cur.fetchone()[2] == "FINISHED"


def test_insert_overwrite_from_a_query_of_itself(cur, sales) -> None:
    cur.execute("INSERT OVERWRITE TABLE sales SELECT k * 10, region, amount * 2, d FROM sales WHERE k <= 2")
    assert rows(cur, "SELECT k, amount FROM sales ORDER BY k") == [(10, pytest.approx(20)), (20, pytest.approx(11))]


def test_insert_overwrite_partitions(cur) -> None:
    cur.execute("CREATE TABLE ev (d DATE, v INT) DUPLICATE KEY(d) PARTITION BY RANGE(d) ("
                "PARTITION p1 VALUES LESS THAN ('2024-02-01'), PARTITION p2 VALUES LESS THAN ('2024-03-01'), "
                f"PARTITION p3 VALUES LESS THAN ('2024-04-01')) DISTRIBUTED BY HASH(v) BUCKETS 2 {PROPS}")
    cur.execute("INSERT INTO ev VALUES ('2024-01-05', 1), ('2024-02-05', 2), ('2024-03-05', 3), ('2024-03-06', 4)")
    cur.execute("INSERT OVERWRITE TABLE ev PARTITION (p2) VALUES ('2024-02-10', 20)")
    assert rows(cur, "SELECT v FROM ev ORDER BY v") == [(1,), (3,), (4,), (20,)]
    # PARTITION(*): only the partitions the new rows fall into are replaced
    cur.execute("INSERT OVERWRITE TABLE ev PARTITION (*) VALUES ('2024-03-10', 30)")
    assert rows(cur, "SELECT v FROM ev ORDER BY v") == [(1,), (20,), (30,)]
    # rows outside the named partitions: Doris's strict-mode error, nothing replaced
    with pytest.raises(pymysql.err.OperationalError, match="no partition for this tuple"):
        cur.execute("INSERT OVERWRITE TABLE ev PARTITION (p1) VALUES ('2024-01-10', 10), ('2024-03-11', 31)")
    assert rows(cur, "SELECT v FROM ev ORDER BY v") == [(1,), (20,), (30,)]
    with pytest.raises(pymysql.err.OperationalError, match="Unknown partition 'p9'"):
        cur.execute("INSERT OVERWRITE TABLE ev PARTITION (p9) VALUES ('2024-01-10', 10)")
    cur.execute("SHOW PARTITIONS FROM ev")
    assert [r[1] for r in cur.fetchall()] == ["p1", "p2", "p3"]


def test_insert_overwrite_then_loads_and_delete(cur) -> None:
    cur.execute(f"CREATE TABLE kv (k INT, v INT) UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 {PROPS}")
    for i in range(3):
        cur.execute(f"INSERT INTO kv VALUES ({i}, {i})")
    cur.execute("DELETE FROM kv WHERE k = 1")
    cur.execute("INSERT OVERWRITE TABLE kv VALUES (1, 100), (5, 500)")
    cur.execute("INSERT INTO kv VALUES (5, 501), (6, 600)")
    assert rows(cur, "SELECT k, v FROM kv ORDER BY k") == [(1, 100), (5, 501), (6, 600)]
    cur.execute("DELETE FROM kv WHERE k = 5")
    assert rows(cur, "SELECT k, v FROM kv ORDER BY k") == [(1, 100), (6, 600)]


# -- UPDATE -----------------------------------------------------------------------------------------------


def test_update_unique_table(cur, users) -> None:
    cur.execute("UPDATE users SET score = score + 1, city = 'milan' WHERE city = 'rome'")
    assert cur.rowcount == 2
    assert rows(cur, "SELECT id, name, score, city FROM users ORDER BY id") == [
        (1, "ann", 11, "milan"), (2, "bob", 20, "oslo"), (3, "cid", 31, "milan")]
    cur.execute("UPDATE users SET name = 'nobody' WHERE id > 100")
    assert cur.rowcount == 0
    cur.execute("UPDATE users u SET u.score = 0")
    assert rows(cur, "SELECT sum(score) FROM users") == [(0,)]


def test_update_from_another_table(cur, users) -> None:
    cur.execute(f"CREATE TABLE bonus (uid INT, pts INT) DUPLICATE KEY(uid) DISTRIBUTED BY HASH(uid) BUCKETS 1 {PROPS}")
    cur.execute("INSERT INTO bonus VALUES (1, 5), (3, 7)")
    cur.execute("UPDATE users SET score = users.score + b.pts FROM bonus b WHERE users.id = b.uid")
    assert cur.rowcount == 2
    assert rows(cur, "SELECT id, score FROM users ORDER BY id") == [(1, 15), (2, 20), (3, 37)]


def test_update_errors(cur, users, sales) -> None:
    with pytest.raises(pymysql.err.OperationalError, match="Only unique table could be updated"):
        cur.execute("UPDATE sales SET amount = 1 WHERE k = 1")
    with pytest.raises(pymysql.err.OperationalError, match="Only value columns of unique table could be updated"):
        cur.execute("UPDATE users SET id = 9 WHERE id = 1")
    with pytest.raises(pymysql.err.OperationalError, match="Unknown column 'nope'"):
        cur.execute("UPDATE users SET nope = 1")
    with pytest.raises(pymysql.err.OperationalError, match="Unknown column 'nope'"):
        cur.execute("UPDATE users SET score = nope + 1")
    with pytest.raises(pymysql.err.ProgrammingError, match="specified twice"):
        cur.execute("UPDATE users SET score = 1, score = 2")
    with pytest.raises(pymysql.err.OperationalError, match="Insert has filtered data in strict mode|Reason"):
        cur.execute("UPDATE users SET score = 'not a number' WHERE id = 1")
    assert rows(cur, "SELECT id, score FROM users ORDER BY id") == [(1, 10), (2, 20), (3, 30)]
