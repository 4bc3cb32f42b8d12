"""The statements of issue 2 through the real server: DDL, SHOW, DESC, INSERT, SELECT and their errors."""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal

import pymysql
import pytest

SALES_DDL = """
CREATE TABLE sales (
    `id` BIGINT NOT NULL COMMENT "order id",
    `day` DATE NOT NULL,
    `region` VARCHAR(16) NOT NULL DEFAULT "north",
    `amount` DECIMAL(12, 2) NULL,
    `qty` INT NULL DEFAULT "1"
) DUPLICATE KEY(`id`, `day`)
DISTRIBUTED BY HASH(`id`) BUCKETS 4
PROPERTIES ("replication_num" = "1")
"""

ROWS = [
    (1, "2024-01-01", "north", "10.50", 2),
    (2, "2024-01-01", "south", "20.00", 1),
    (3, "2024-01-02", "north", "5.25", 4),
    (4, "2024-01-03", "east", None, 3),
    (5, "2024-01-03", "south", "7.75", None),
]


def _errno(excinfo: pytest.ExceptionInfo) -> int:
    return excinfo.value.args[0]


def _load(cur) -> None:
    cur.execute(SALES_DDL)
    values = ", ".join(
        "(" + ", ".join("NULL" if v is None else (str(v) if isinstance(v, int) else f"'{v}'") for v in r) + ")"
        for r in ROWS
    )
    cur.execute(f"INSERT INTO sales VALUES {values}")


def test_database_ddl_and_errors(server) -> None:
    with server.connect() as conn, conn.cursor() as cur:
        cur.execute("CREATE DATABASE IF NOT EXISTS surface_a")
        cur.execute("CREATE DATABASE IF NOT EXISTS surface_a")
        with pytest.raises(pymysql.err.MySQLError) as e:
            cur.execute("CREATE DATABASE surface_a")
        assert _errno(e) == 1007
        cur.execute("SHOW DATABASES")
        assert ("surface_a",) in cur.fetchall()
        with pytest.raises(pymysql.err.MySQLError) as e:
            cur.execute("USE no_such_db")
        assert _errno(e) == 1049
        with pytest.raises(pymysql.err.MySQLError) as e:
            cur.execute("CREATE TABLE t (k INT) DISTRIBUTED BY HASH(k) BUCKETS 1")
        assert _errno(e) == 1046
        cur.execute("DROP DATABASE surface_a")
        cur.execute("DROP DATABASE IF EXISTS surface_a")
        with pytest.raises(pymysql.err.MySQLError) as e:
            cur.execute("DROP DATABASE surface_a")
        assert _errno(e) == 1008


def test_table_ddl_show_desc(cur, db) -> None:
    _load(cur)
    cur.execute("SHOW TABLES")
    assert cur.fetchall() == (("sales",),)
    assert cur.description[0][0] == f"Tables_in_{db}"
    cur.execute("DESC sales")
    assert cur.fetchall() == (
        ("id", "BIGINT", "No", "true", None, ""),
        ("day", "DATE", "No", "true", None, ""),
        ("region", "VARCHAR(16)", "No", "false", "north", "NONE"),
        ("amount", "DECIMAL(12, 2)", "Yes", "false", None, "NONE"),
        ("qty", "INT", "Yes", "false", "1", "NONE"),
    )
    with pytest.raises(pymysql.err.MySQLError) as e:
        cur.execute(SALES_DDL)
    assert _errno(e) == 1050
    cur.execute(SALES_DDL.replace("CREATE TABLE", "CREATE TABLE IF NOT EXISTS"))
    with pytest.raises(pymysql.err.MySQLError) as e:
        cur.execute("DROP TABLE nope")
    assert _errno(e) == 1051
    cur.execute("DROP TABLE IF EXISTS nope")


def test_show_create_table_output_recreates_the_table(cur, db) -> None:
    _load(cur)
    cur.execute("SHOW CREATE TABLE sales")
    name, ddl = cur.fetchone()
    assert name == "sales"
    assert "DUPLICATE KEY(`id`, `day`)" in ddl and "BUCKETS 4" in ddl
    cur.execute("DROP TABLE sales")
    cur.execute(ddl)
    cur.execute("SHOW CREATE TABLE sales")
    assert cur.fetchone()[1] == ddl


def test_create_table_rules_use_doris_messages(cur) -> None:
    cases = {
        "CREATE TABLE a (k INT, v INT) AGGREGATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1":
            "AGG_KEYS table should specify aggregate type for non-key column[v]",
        "CREATE TABLE a (k INT, v INT SUM) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1":
            "should not specify aggregate type for non-key column[v]",
        "CREATE TABLE a (k1 INT, k2 INT, v INT) DUPLICATE KEY(k2) DISTRIBUTED BY HASH(k2) BUCKETS 1":
            "Key columns should be a ordered prefix of the schema",
        "CREATE TABLE a (k INT, v INT) UNIQUE KEY(k) DISTRIBUTED BY RANDOM BUCKETS 1":
            "Should not be distributed by random when keys type is unique",
        "CREATE TABLE a (k INT, k INT) DISTRIBUTED BY HASH(k) BUCKETS 1": "Duplicate column name 'k'",
        "CREATE TABLE a (k INT, v INT) DUPLICATE KEY(x) DISTRIBUTED BY HASH(k) BUCKETS 1": "Key column[x] doesn't exist",
    }
    for ddl, message in cases.items():
        with pytest.raises(pymysql.err.MySQLError) as e:
            cur.execute(ddl)
        assert message in e.value.args[1], (ddl, e.value.args)
    cur.execute("SHOW TABLES")
    assert cur.fetchall() == ()


def test_insert_reply_and_typed_results(cur) -> None:
    cur.execute(SALES_DDL)
    n = cur.execute("INSERT INTO sales (id, day, amount) VALUES (7, '2024-02-01', 1.5), (8, '2024-02-02', -2)")
    assert n == 2
    # MySQL sends the OK packet's info as a length-encoded string; pymysql keeps the length byte
    message = cur.connection._result.message
    info = message[1:].decode()
    assert re.fullmatch(r"\{'label':'label_[0-9a-f_]+', 'status':'VISIBLE', 'txnId':'\d+'\}", info), info
    cur.execute("SELECT id, day, region, amount, qty FROM sales ORDER BY id")
    assert cur.fetchall() == (
        (7, dt.date(2024, 2, 1), "north", Decimal("1.50"), 1),
        (8, dt.date(2024, 2, 2), "north", Decimal("-2.00"), 1),
    )


def test_insert_strict_mode_errors_leave_nothing(cur) -> None:
    cur.execute(SALES_DDL)
    bad = [
        "INSERT INTO sales VALUES (1, '2024-13-01', 'x', 1, 1)",
        "INSERT INTO sales VALUES (1, '2024-01-01', NULL, 1, 1)",
        "INSERT INTO sales VALUES (1, '2024-01-01', 'a-region-name-that-is-too-long', 1, 1)",
        "INSERT INTO sales VALUES (1, '2024-01-01', 'x', 12345678901.5, 1)",
        "INSERT INTO sales VALUES (1, '2024-01-01', 'x', 1, 99999999999)",
        "INSERT INTO sales VALUES (1, '2024-01-01', 'x', 1, 1), (2, '2024-01-01', 'x', 1, 'abc')",
    ]
    for sql in bad:
        with pytest.raises(pymysql.err.MySQLError):
            cur.execute(sql)
    with pytest.raises(pymysql.err.MySQLError) as e:
        cur.execute("INSERT INTO sales VALUES (1, '2024-01-01')")
    assert _errno(e) == 1136
    with pytest.raises(pymysql.err.MySQLError) as e:
        cur.execute("INSERT INTO sales (id, nope) VALUES (1, 2)")
    assert _errno(e) == 1054
    cur.execute("SELECT count(*) FROM sales")
    assert cur.fetchone() == (0,)


def test_select_surface(cur) -> None:
    _load(cur)
    cur.execute("SELECT region, count(*) AS n, sum(amount), min(qty), max(day) FROM sales "
                "WHERE day BETWEEN '2024-01-01' AND '2024-01-03' AND region IN ('north', 'south') "
                "GROUP BY region HAVING count(*) > 1 ORDER BY region")
    assert cur.fetchall() == (("north", 2, Decimal("15.75"), 2, dt.date(2024, 1, 2)),
                              ("south", 2, Decimal("27.75"), 1, dt.date(2024, 1, 3)))
    cur.execute("SELECT id FROM sales WHERE amount IS NULL OR qty IS NULL ORDER BY id")
    assert cur.fetchall() == ((4,), (5,))
    cur.execute("SELECT id FROM sales WHERE region LIKE 's%' AND NOT id = 2")
    assert cur.fetchall() == ((5,),)
    cur.execute("SELECT id, CASE WHEN qty > 2 THEN 'big' ELSE 'small' END, CAST(amount AS INT) "
                "FROM sales ORDER BY id DESC LIMIT 2 OFFSET 1")
    assert cur.fetchall() == ((4, "big", None), (3, "big", 5))
    cur.execute("SELECT count(DISTINCT region), avg(qty), year(day) y FROM sales GROUP BY y")
    assert cur.fetchall() == ((3, 2.5, 2024),)
    cur.execute("SELECT upper(region), concat(region, '-', id), date_format(day, '%Y/%m') FROM sales WHERE id = 1")
    assert cur.fetchall() == (("NORTH", "north-1", "2024/01"),)
    cur.execute("SELECT 1 + 1, 'x', NULL, 7 / 2")
    assert cur.fetchall() == ((2, "x", None, 3.5),)


def test_errors_keep_the_connection(cur) -> None:
    with pytest.raises(pymysql.err.MySQLError) as e:
        cur.execute("SELEC 1")
    assert _errno(e) == 1064
    assert "\x1b[" not in e.value.args[1]
    with pytest.raises(pymysql.err.MySQLError) as e:
        cur.execute("SELECT * FROM no_such_table")
    assert _errno(e) == 1146
    with pytest.raises(pymysql.err.MySQLError) as e:
        cur.execute("CREATE MATERIALIZED VIEW v AS SELECT 1")
    assert e.value.args[1] == "errCode = 2, detailMessage = Unsupported statement: CREATE MATERIALIZED VIEW"
    cur.execute("SELECT 1")
    assert cur.fetchone() == (1,)


def test_truncate(cur) -> None:
    _load(cur)
    cur.execute("TRUNCATE TABLE sales")
    cur.execute("SELECT count(*) FROM sales")
    assert cur.fetchone() == (0,)
    cur.execute("INSERT INTO sales (id, day) VALUES (1, '2024-01-01')")
    cur.execute("SELECT count(*) FROM sales")
    assert cur.fetchone() == (1,)


def test_datetime_prints_its_declared_fraction_digits(cur) -> None:
    cur.execute("CREATE TABLE dt (k INT, a DATETIME, b DATETIME(3)) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1")
    cur.execute("INSERT INTO dt VALUES (1, '2017-10-01 07:00:00', '2017-10-01 07:00:00.125')")
    cur.execute("SELECT a, b, CAST('2017-10-01 12:00:00' AS DATETIME), DATE_ADD('2017-10-01', INTERVAL 3 DAY) FROM dt")
    conn = cur.connection
    conn.query("SELECT a, b FROM dt")
    assert [f.scale for f in conn._result.fields] == [0, 3]
    text = pymysql.connect(host=conn.host, port=conn.port, user="root", database=conn.db.decode(),
                           conv=dict(pymysql.converters.encoders))  # no decoders: the wire text itself
    with text.cursor() as c:
        c.execute("SELECT a, b, CAST('2017-10-01 12:00:00' AS DATETIME), DATE_ADD('2017-10-01', INTERVAL 3 DAY) FROM dt")
        row = tuple(v.decode() if isinstance(v, bytes) else v for v in c.fetchone())
        assert row == ("2017-10-01 07:00:00", "2017-10-01 07:00:00.125", "2017-10-01 12:00:00", "2017-10-04 00:00:00")
    text.close()


def test_select_from_named_partitions(cur) -> None:
    cur.execute("""CREATE TABLE rng (d DATE NOT NULL, v INT) DUPLICATE KEY(d)
                   PARTITION BY RANGE(d) (PARTITION p1 VALUES [('2020-01-01'), ('2020-02-01')),
                                          PARTITION p3 VALUES [('2020-03-01'), ('2020-04-01')))
                   DISTRIBUTED BY HASH(d) BUCKETS 2""")
    cur.execute("INSERT INTO rng VALUES ('2020-01-15', 1), ('2020-03-15', 2)")
    cur.execute("SELECT v FROM rng PARTITION (p3)")
    assert cur.fetchall() == ((2,),)
    cur.execute("SELECT count(*) FROM rng PARTITION (p1, p3)")
    assert cur.fetchone() == (2,)
    with pytest.raises(pymysql.err.MySQLError) as e:
        cur.execute("SELECT * FROM rng PARTITION (p9)")
    assert "p9" in e.value.args[1]


def test_strict_mode_error_code_is_readable_by_mariadb_clients(cur) -> None:
    cur.execute(SALES_DDL)
    with pytest.raises(pymysql.err.MySQLError) as e:
        cur.execute("INSERT INTO sales VALUES (1, '2024-01-01', NULL, 1, 1)")
    assert e.value.args[0] == 1105  # 5000-5999 are client-side codes in libmariadb
    assert "Insert has filtered data in strict mode" in e.value.args[1]


def test_non_strict_insert_warnings(cur) -> None:
    cur.execute(SALES_DDL)
    cur.execute("SET enable_insert_strict = false")
    assert cur.execute("INSERT INTO sales VALUES (1, '2024-01-01', 'n', 1, 1), (2, '2024-01-01', NULL, 1, 1)") == 1
    cur.execute("SHOW WARNINGS")
    rows = cur.fetchall()
    assert len(rows) == 1 and "1 rows were filtered" in rows[0][2]


def test_syntax_errors_echo_the_statement(cur) -> None:
    for sql in ("SELECT * FROM", "gibberish here", "CREATE DATABASE demo2 USE demo"):
        with pytest.raises(pymysql.err.MySQLError) as e:
            cur.execute(sql)
        assert e.value.args[0] == 1064, sql
        assert sql in e.value.args[1] and "Token" not in e.value.args[1] and "<class" not in e.value.args[1]
