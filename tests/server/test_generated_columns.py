"""Generated columns (issue 13): `c INT AS (a + b)` / `GENERATED ALWAYS AS (..)`, stored and computed by every
load (VALUES, column lists, INSERT ... SELECT, UPDATE), shown by DESC and SHOW CREATE TABLE, with Doris's
(MySQL's) rules and messages at CREATE, INSERT, UPDATE and ALTER."""

from __future__ import annotations

import pytest

from tests.server.test_schema_change import PROPS, error, rows


@pytest.fixture
def g(cur):
    cur.execute("CREATE TABLE g (a INT, b INT, c INT AS (a + b), d BIGINT GENERATED ALWAYS AS (c * 2) NOT NULL "
                f"COMMENT 'dd') UNIQUE KEY(a) DISTRIBUTED BY HASH(a) BUCKETS 1 {PROPS}")
    return cur


def test_loads_compute_them(g) -> None:
    g.execute("INSERT INTO g VALUES (1, 2, DEFAULT, DEFAULT)")
    g.execute("INSERT INTO g (a, b) VALUES (2, 5), (3, 7)")
    g.execute(f"CREATE TABLE src (x INT, y INT) DUPLICATE KEY(x) DISTRIBUTED BY HASH(x) BUCKETS 1 {PROPS}")
    g.execute("INSERT INTO src VALUES (10, 1)")
    g.execute("INSERT INTO g (a, b) SELECT x, y FROM src")
    assert rows(g, "SELECT * FROM g ORDER BY a") == [(1, 2, 3, 6), (2, 5, 7, 14), (3, 7, 10, 20), (10, 1, 11, 22)]
    g.execute("UPDATE g SET b = 100 WHERE a = 2")
    assert rows(g, "SELECT c, d FROM g WHERE a = 2") == [(102, 204)]
    assert "NOT NULL generated column" in error(g, "INSERT INTO g (a, b) VALUES (9, NULL)")


def test_desc_and_show_create(g) -> None:
    g.execute("DESC g")
    assert [(r[0], r[5]) for r in g.fetchall()][2:] == [("c", "NONE,STORED GENERATED"), ("d", "NONE,STORED GENERATED")]
    g.execute("SHOW CREATE TABLE g")
    text = g.fetchone()[1]
    assert "`c` int AS (`a` + `b`) NULL," in text and "`d` bigint AS (`c` * 2) NOT NULL COMMENT 'dd'" in text


@pytest.mark.parametrize("sql", [
    "INSERT INTO g VALUES (5, 1, 2, 3)",
    "INSERT INTO g (a, b, c) VALUES (5, 1, 2)",
    "INSERT INTO g (a, c) SELECT 1, 2",
    "UPDATE g SET c = 1 WHERE a = 1",
])
def test_values_for_them_are_refused(g, sql: str) -> None:
    assert error(g, sql).endswith("The value specified for generated column 'c' in table 'g' is not allowed.")


@pytest.mark.parametrize("definition, message", [
    ("c INT AS (a + rand())", "Expression of generated column 'c' contains a disallowed function: rand."),
    ("c INT AS (now())", "Expression of generated column 'c' contains a disallowed function"),
    ("c INT AS (sum(a))", "Expression of generated column 'c' contains a disallowed function."),
    ("c INT AS (e + 1), e INT AS (a)", "Generated column can refer only to generated columns defined prior to it."),
    ("c INT AS (zz + 1)", "Unknown column 'zz' in 'generated column function'"),
    ("c INT AS (a + 1) DEFAULT '1'", "Generated column 'c' cannot have a default value"),
])
def test_create_rules(cur, definition: str, message: str) -> None:
    got = error(cur, f"CREATE TABLE bad (a INT, {definition}) DUPLICATE KEY(a) DISTRIBUTED BY HASH(a) BUCKETS 1 "
                     f"{PROPS}")
    assert message in got


def test_alter_rules(g) -> None:
    assert error(g, "ALTER TABLE g ADD COLUMN e INT AS (a + 1)").endswith(
        "Not supporting alter table add generated columns.")
    assert error(g, "ALTER TABLE g DROP COLUMN b").endswith("Column 'b' has a generated column dependency on :['c']")
    assert "generated column dependency" in error(g, "ALTER TABLE g RENAME COLUMN b b2")
    assert error(g, "ALTER TABLE g MODIFY COLUMN c BIGINT").endswith(
        "Not supporting alter table modify generated columns.")
    g.execute("ALTER TABLE g ADD COLUMN e INT DEFAULT '5'")  # other changes still work
    g.execute("INSERT INTO g (a, b) VALUES (1, 1)")
    assert rows(g, "SELECT c, d, e FROM g") == [(2, 4, 5)]
