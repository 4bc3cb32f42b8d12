"""Views through the server: CREATE [OR REPLACE] VIEW, ALTER VIEW, DROP VIEW, SHOW CREATE VIEW, views in
SHOW TABLES, DESC and information_schema, TPC-H Q15's use of one, the errors, and a restart."""

from __future__ import annotations

import pymysql
import pytest

from tests.conftest import ServerProcess

DDL = "DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2 PROPERTIES ('replication_num' = '1')"


def rows(cur, sql: str) -> list[tuple]:
    cur.execute(sql)
    return [tuple(r) for r in cur.fetchall()]


@pytest.fixture
def sales(cur) -> None:
    cur.execute(f"CREATE TABLE sales (k INT, region VARCHAR(10), amount DECIMAL(10, 2)) {DDL}")
    cur.execute("INSERT INTO sales VALUES (1, 'north', 10.00), (2, 'north', 5.50), (3, 'south', 7.25), "
                "(4, 'east', 1.00)")


def test_create_query_and_replace_views(cur, db: str, sales) -> None:
    cur.execute("CREATE VIEW by_region AS SELECT region, sum(amount) AS total FROM sales GROUP BY region")
    cur.execute("SELECT * FROM by_region ORDER BY region")
    assert [(r, str(t)) for r, t in cur.fetchall()] == [("east", "1.00"), ("north", "15.50"), ("south", "7.25")]
    cur.execute("SELECT region, total FROM by_region ORDER BY total DESC LIMIT 1")
    assert [(r, str(t)) for r, t in cur.fetchall()] == [("north", "15.50")]
    # a column list, a view over a view, a join with a table
    cur.execute("CREATE VIEW big (r, t) AS SELECT region, total FROM by_region WHERE total > 5")
    assert rows(cur, "SELECT r FROM big ORDER BY r") == [("north",), ("south",)]
    assert rows(cur, "SELECT s.k FROM sales s JOIN big b ON s.region = b.r ORDER BY s.k") == [(1,), (2,), (3,)]
    cur.execute("CREATE OR REPLACE VIEW big (r, t) AS SELECT region, total FROM by_region WHERE total > 10")
    assert rows(cur, "SELECT r FROM big") == [("north",)]
    cur.execute("ALTER VIEW big (r, t) AS SELECT region, total FROM by_region WHERE total < 10")
    assert rows(cur, "SELECT r FROM big ORDER BY r") == [("east",), ("south",)]
    cur.execute("CREATE VIEW IF NOT EXISTS big AS SELECT 1")  # kept as it was
    assert rows(cur, "SELECT count(*) FROM big") == [(2,)]
    # the view names its tables with their database: it reads the same ones from elsewhere
    cur.execute("USE information_schema")
    assert rows(cur, f"SELECT count(*) FROM {db}.big") == [(2,)]
    cur.execute(f"USE {db}")
    cur.execute("DROP VIEW big")
    cur.execute("DROP VIEW IF EXISTS big")
    with pytest.raises(pymysql.err.ProgrammingError, match=r"Table \[big\] does not exist"):
        cur.execute("SELECT * FROM big")


def test_show_describe_and_information_schema(cur, db: str, sales) -> None:
    cur.execute("CREATE VIEW v1 COMMENT 'north only' AS SELECT k, amount * 2 AS twice FROM sales "
                "WHERE region = 'north'")
    assert rows(cur, "SHOW TABLES") == [("sales",), ("v1",)]
    assert rows(cur, "SHOW FULL TABLES") == [("sales", "BASE TABLE"), ("v1", "VIEW")]
    cur.execute("SHOW CREATE VIEW v1")
    assert [d[0] for d in cur.description] == ["View", "Create View", "character_set_client", "collation_connection"]
    name, text, _, _ = cur.fetchone()
    assert name == "v1" and text.startswith("CREATE VIEW `v1` COMMENT 'north only' AS SELECT")
    assert f"{db}.sales" in text
    cur.execute("SHOW CREATE TABLE v1")
    assert cur.fetchone()[1] == text
    (k, twice) = rows(cur, "DESC v1")
    assert k == ("k", "INT", "Yes", "false", None, "")
    assert twice[0] == "twice" and twice[1].startswith("DECIMAL(") and twice[1].endswith(", 2)")
    assert rows(cur, f"SELECT table_name, table_type FROM information_schema.tables WHERE table_schema = '{db}' "
                     "ORDER BY table_name") == [("sales", "BASE TABLE"), ("v1", "VIEW")]
    cur.execute(f"SELECT view_definition FROM information_schema.views WHERE table_schema = '{db}'")
    assert cur.fetchone()[0].startswith("SELECT")


def test_tpch_q15_shape(cur, sales) -> None:
    cur.execute("CREATE VIEW revenue0 (supplier_no, total_revenue) AS SELECT region, sum(amount) FROM sales "
                "GROUP BY region")
    assert rows(cur, "SELECT supplier_no FROM revenue0 WHERE total_revenue = (SELECT max(total_revenue) "
                     "FROM revenue0) ORDER BY supplier_no") == [("north",)]
    cur.execute("DROP VIEW revenue0")


def test_view_errors(cur, sales) -> None:
    with pytest.raises(pymysql.err.ProgrammingError, match=r"Table \[nope\] does not exist"):
        cur.execute("CREATE VIEW bad AS SELECT * FROM nope")
    with pytest.raises(pymysql.err.OperationalError, match="Unknown column 'nope'"):
        cur.execute("CREATE VIEW bad AS SELECT nope FROM sales")
    with pytest.raises(pymysql.err.OperationalError, match="doesn't match the number of columns"):
        cur.execute("CREATE VIEW bad (a, b) AS SELECT k FROM sales")
    with pytest.raises(pymysql.err.OperationalError, match="Duplicate column name 'k'"):
        cur.execute("CREATE VIEW bad AS SELECT k, k FROM sales")
    with pytest.raises(pymysql.err.OperationalError, match="Table 'sales' already exists"):
        cur.execute("CREATE VIEW sales AS SELECT 1")
    cur.execute("CREATE VIEW v2 AS SELECT 1 AS one")
    with pytest.raises(pymysql.err.OperationalError, match="Table 'v2' already exists"):
        cur.execute("CREATE VIEW v2 AS SELECT 2")
    with pytest.raises(pymysql.err.OperationalError, match="Table 'v2' already exists"):
        cur.execute(f"CREATE TABLE v2 (k INT) {DDL}")
    with pytest.raises(pymysql.err.OperationalError, match="Unknown view 'nope'"):
        cur.execute("DROP VIEW nope")
    with pytest.raises(pymysql.err.ProgrammingError, match="Unknown view 'nope'"):
        cur.execute("ALTER VIEW nope AS SELECT 1")
    with pytest.raises(pymysql.err.OperationalError, match="Unsupported statement: CREATE MATERIALIZED VIEW"):
        cur.execute("CREATE MATERIALIZED VIEW mv AS SELECT region, sum(amount) FROM sales GROUP BY region")


def test_views_survive_a_restart(fresh_server: ServerProcess) -> None:
    with fresh_server.connect() as conn, conn.cursor() as cur:
        cur.execute("CREATE DATABASE vr")
        cur.execute(f"CREATE TABLE vr.t (k INT) {DDL}")
        cur.execute("INSERT INTO vr.t VALUES (1), (2)")
        cur.execute("CREATE VIEW vr.doubled AS SELECT k * 2 AS d FROM vr.t")
    fresh_server.stop()
    fresh_server.start()
    with fresh_server.connect("vr") as conn, conn.cursor() as cur:
        assert rows(cur, "SELECT d FROM doubled ORDER BY d") == [(2,), (4,)]
        cur.execute("DROP DATABASE vr")
