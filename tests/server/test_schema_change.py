"""Light schema change (issue 13): ALTER TABLE ADD / DROP / MODIFY / RENAME COLUMN and ORDER BY change the
catalog; rows already written are read through the new schema (by column id, defaults for added columns,
casts for widened ones), in scans, merges, rollups, compaction and Spark reads. Doris's rules and messages."""

from __future__ import annotations

import pymysql
import pytest

from tests.server.test_compaction import manual, run_compaction, tablets  # noqa: F401 - the fixture is used by name

PROPS = "PROPERTIES ('replication_num' = '1')"


def rows(cur, sql: str) -> list[tuple]:
    cur.execute(sql)
    return [tuple(r) for r in cur.fetchall()]


def error(cur, sql: str) -> str:
    with pytest.raises(pymysql.err.MySQLError) as info:
        cur.execute(sql)
    return info.value.args[1]


def test_add_rename_drop_and_widen_on_a_duplicate_table(cur) -> None:
    cur.execute(f"CREATE TABLE t (k INT, v INT, s VARCHAR(10)) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2 {PROPS}")
    cur.execute("INSERT INTO t VALUES (1, 10, 'a'), (2, 20, 'b'), (3, 30, 'c')")
    cur.execute("ALTER TABLE t ADD COLUMN n INT DEFAULT '7'")
    assert rows(cur, "SELECT * FROM t ORDER BY k") == [(1, 10, "a", 7), (2, 20, "b", 7), (3, 30, "c", 7)]
    cur.execute("INSERT INTO t VALUES (4, 40, 'd', 44)")
    assert rows(cur, "SELECT k FROM t WHERE n = 7 ORDER BY k") == [(1,), (2,), (3,)]
    assert rows(cur, "SELECT count(*) FROM t WHERE n = 8") == [(0,)]
    cur.execute("ALTER TABLE t RENAME COLUMN v vv")
    assert rows(cur, "SELECT k, vv FROM t WHERE vv > 15 ORDER BY k") == [(2, 20), (3, 30), (4, 40)]
    assert "Unknown column 'v'" in error(cur, "SELECT v FROM t")
    # a dropped column's data never comes back under a new column of the same name
    cur.execute("ALTER TABLE t DROP COLUMN s")
    cur.execute("ALTER TABLE t ADD COLUMN s VARCHAR(5) DEFAULT 'zz' AFTER k")
    assert rows(cur, "SELECT k, s, vv, n FROM t ORDER BY k") == [
        (1, "zz", 10, 7), (2, "zz", 20, 7), (3, "zz", 30, 7), (4, "zz", 40, 44)]
    cur.execute("ALTER TABLE t MODIFY COLUMN vv BIGINT COMMENT 'widened'")
    cur.execute("DESC t")
    assert [(r[0], r[1]) for r in cur.fetchall()] == [("k", "INT"), ("s", "VARCHAR(5)"), ("vv", "BIGINT"), ("n", "INT")]
    cur.execute("INSERT INTO t VALUES (5, 'e', 9000000000, 1)")
    assert rows(cur, "SELECT sum(vv), max(n) FROM t") == [(9000000100, 44)]
    assert rows(cur, "SELECT k FROM t WHERE vv = 9000000000 OR vv = 20 ORDER BY k") == [(2,), (5,)]
    cur.execute("SHOW CREATE TABLE t")
    assert "`vv` bigint NULL COMMENT 'widened'" in cur.fetchall()[0][1]


def test_aggregate_and_unique_models(cur) -> None:
    cur.execute(f"CREATE TABLE a (k INT, d DATE, v BIGINT SUM DEFAULT '0', r VARCHAR(10) REPLACE) "
                f"AGGREGATE KEY(k, d) DISTRIBUTED BY HASH(k) BUCKETS 1 {PROPS}")
    cur.execute("INSERT INTO a VALUES (1, '2024-01-01', 5, 'x'), (1, '2024-01-01', 6, 'y'), (2, '2024-01-02', 1, 'z')")
    cur.execute("ALTER TABLE a ADD COLUMN m INT MAX DEFAULT '3', ADD COLUMN k2 INT DEFAULT '9'")  # k2: a key
    cur.execute("DESC a")
    assert [(r[0], r[3]) for r in cur.fetchall()] == [
        ("k", "true"), ("d", "true"), ("k2", "true"), ("v", "false"), ("r", "false"), ("m", "false")]
    cur.execute("INSERT INTO a VALUES (1, '2024-01-01', 9, 1, 'w', 9), (1, '2024-01-01', 8, 1, 'q', 1)")
    assert rows(cur, "SELECT k, k2, v, r, m FROM a ORDER BY k, k2") == [
        (1, 8, 1, "q", 1), (1, 9, 12, "w", 9), (2, 9, 1, "z", 3)]
    assert error(cur, "ALTER TABLE a ADD COLUMN bad INT SUM DEFAULT '5'").endswith(
        "The default value of 'bad' with SUM aggregation function must be zero")
    assert error(cur, "ALTER TABLE a ADD COLUMN v2 INT KEY SUM").endswith(
        "Can not assign aggregation method on key column: v2")
    assert error(cur, "ALTER TABLE a DROP COLUMN k2").endswith(
        "Can not drop key column when table has value column with REPLACE aggregation method")
    assert error(cur, "ALTER TABLE a ADD COLUMN v INT SUM").endswith(
        "Can not add column which already exists in base table: v")

    cur.execute(f"CREATE TABLE u (k INT, v INT, w VARCHAR(3)) UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 {PROPS}")
    cur.execute("INSERT INTO u VALUES (1, 1, 'a'), (2, 2, 'b')")
    cur.execute("ALTER TABLE u ADD COLUMN x INT DEFAULT '0' AFTER v, MODIFY COLUMN w VARCHAR(10)")
    cur.execute("INSERT INTO u VALUES (1, 100, 5, 'aaaaaaaaa')")
    assert rows(cur, "SELECT * FROM u ORDER BY k") == [(1, 100, 5, "aaaaaaaaa"), (2, 2, 0, "b")]
    cur.execute("ALTER TABLE u ORDER BY (k, w, x, v)")
    assert rows(cur, "SELECT * FROM u ORDER BY k") == [(1, "aaaaaaaaa", 5, 100), (2, "b", 0, 2)]
    cur.execute("UPDATE u SET x = 7 WHERE k = 2")
    assert rows(cur, "SELECT k, x FROM u ORDER BY k") == [(1, 5), (2, 7)]
    assert error(cur, "ALTER TABLE u DROP COLUMN k").endswith("Can not drop distribution column[k]")
    assert error(cur, "ALTER TABLE u MODIFY COLUMN v TINYINT").endswith("Can not change INT to TINYINT")
    assert error(cur, "ALTER TABLE u MODIFY COLUMN w VARCHAR(2)").endswith("Cannot shorten string length")
    assert error(cur, "ALTER TABLE u MODIFY COLUMN v INT NOT NULL").endswith(
        "Can not change from nullable to non-nullable")
    assert error(cur, "ALTER TABLE u ADD COLUMN z INT SUM").endswith(
        "Can not assign aggregation method on column in Unique data model table: z")
    assert error(cur, "ALTER TABLE u RENAME COLUMN v v").endswith("Same column name")
    assert error(cur, "ALTER TABLE u RENAME COLUMN v w").endswith("Column name[w] is already used")
    assert error(cur, "ALTER TABLE u RENAME COLUMN nope w2").endswith("Column[nope] does not exists")
    assert error(cur, "ALTER TABLE u DROP COLUMN nope").endswith("Column does not exists: nope")
    assert error(cur, "ALTER TABLE u MODIFY COLUMN nope INT").endswith("Column[nope] does not exists")
    assert error(cur, "ALTER TABLE u ORDER BY (k, w)").endswith("Reorder stmt should contains all columns")
    assert error(cur, "ALTER TABLE u ADD COLUMN q INT AFTER nope").endswith("Column[nope] does not found")
    assert "Syntax error" in error(cur, "ALTER TABLE u DROP COLUMN")
    assert "Unknown table" in error(cur, "ALTER TABLE nope ADD COLUMN q INT") or "nope" in error(
        cur, "ALTER TABLE nope ADD COLUMN q INT")


def test_renames_follow_partitions_distribution_indexes_and_rollups(cur) -> None:
    cur.execute("CREATE TABLE p (d DATE, k INT, tag VARCHAR(8), v BIGINT SUM DEFAULT '0') AGGREGATE KEY(d, k, tag) "
                "PARTITION BY RANGE(d) (PARTITION p1 VALUES LESS THAN ('2024-02-01'), "
                "PARTITION p2 VALUES LESS THAN ('2024-03-01')) DISTRIBUTED BY HASH(k) BUCKETS 1 "
                "ROLLUP (r_tag (tag, v)) "
                "PROPERTIES ('replication_num' = '1', 'bloom_filter_columns' = 'tag')")
    cur.execute("INSERT INTO p VALUES ('2024-01-05', 1, 'a', 10), ('2024-02-05', 2, 'b', 20), ('2024-02-06', 2, 'a', 5)")
    cur.execute("ALTER TABLE p RENAME COLUMN d day, RENAME COLUMN k id, RENAME COLUMN tag label")
    cur.execute("SHOW CREATE TABLE p")
    ddl = cur.fetchall()[0][1]
    assert "PARTITION BY RANGE(`day`)" in ddl and "DISTRIBUTED BY HASH(`id`)" in ddl
    assert '"bloom_filter_columns" = "label"' in ddl
    assert rows(cur, "SELECT label, sum(v) FROM p GROUP BY label ORDER BY label") == [("a", 15), ("b", 20)]
    cur.execute("EXPLAIN SELECT label, sum(v) FROM p GROUP BY label")
    plan = "\n".join(r[0] for r in cur.fetchall())
    assert ".p(r_tag), PREAGGREGATION: ON" in plan
    cur.execute("EXPLAIN SELECT * FROM p WHERE day >= '2024-02-01'")
    assert "partitions=1/2 (p2)" in "\n".join(r[0] for r in cur.fetchall())
    # a column added to the rollup too reads as its default in the rows the rollup already holds
    cur.execute("ALTER TABLE p ADD COLUMN c BIGINT SUM DEFAULT '0' TO r_tag")
    cur.execute("INSERT INTO p VALUES ('2024-02-07', 3, 'a', 1, 4)")
    assert rows(cur, "SELECT label, sum(v), sum(c) FROM p GROUP BY label ORDER BY label") == [("a", 16, 4), ("b", 20, 0)]
    cur.execute("EXPLAIN SELECT label, sum(c) FROM p GROUP BY label")
    assert ".p(r_tag), PREAGGREGATION: ON" in "\n".join(r[0] for r in cur.fetchall())
    assert error(cur, "ALTER TABLE p DROP COLUMN day").endswith("Can not drop partition column[day]")
    assert error(cur, "ALTER TABLE p ADD COLUMN z INT SUM TO nope").endswith("Index[nope] does not exist in table[p]")


def test_deletes_name_their_columns(cur) -> None:
    cur.execute(f"CREATE TABLE dl (k INT, v INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 {PROPS}")
    cur.execute("INSERT INTO dl VALUES (1, 1), (2, 2)")
    cur.execute("DELETE FROM dl WHERE v = 1")
    cur.execute("ALTER TABLE dl RENAME COLUMN v w")  # the DELETE's condition follows the rename
    assert rows(cur, "SELECT * FROM dl") == [(2, 2)]
    assert "is used by a DELETE condition" in error(cur, "ALTER TABLE dl DROP COLUMN w")
    cur.execute("ALTER TABLE dl ADD COLUMN x INT DEFAULT '1'")
    assert rows(cur, "SELECT * FROM dl") == [(2, 2, 1)]
    # a key DELETE of a UNIQUE table (a key set) follows a rename of a key column too
    cur.execute(f"CREATE TABLE ku (k INT, v INT) UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 {PROPS}")
    cur.execute("INSERT INTO ku VALUES (1, 1), (2, 2), (3, 3)")
    cur.execute("DELETE FROM ku WHERE v >= 2")
    cur.execute("ALTER TABLE ku RENAME COLUMN k id, RENAME COLUMN v val")
    assert rows(cur, "SELECT id, val FROM ku ORDER BY id") == [(1, 1)]
    cur.execute("INSERT INTO ku VALUES (2, 20)")
    assert rows(cur, "SELECT id, val FROM ku ORDER BY id") == [(1, 1), (2, 20)]


@pytest.fixture
def mcur(manual):  # noqa: F811 - test_compaction's server without automatic compaction
    conn = manual.connect()
    with conn.cursor() as c:
        c.execute("CREATE DATABASE sc")
        c.execute("USE sc")
        yield c
        c.execute("DROP DATABASE sc")
    conn.close()


def test_compaction_writes_the_new_schema(manual, mcur) -> None:  # noqa: F811
    cur = mcur
    cur.execute(f"CREATE TABLE c (k INT, tag VARCHAR(8), v BIGINT SUM) AGGREGATE KEY(k, tag) "
                f"DISTRIBUTED BY HASH(k) BUCKETS 1 {PROPS}")
    for i in range(6):
        cur.execute(f"INSERT INTO c VALUES ({i % 3}, 'a', {i}), (1, 'b', 1)")
    with pytest.raises(pymysql.err.OperationalError, match="Alter operation SCHEMA_CHANGE conflicts with operation "
                                                           "RENAME"):
        cur.execute("ALTER TABLE c RENAME COLUMN tag label, ADD COLUMN m INT MAX DEFAULT '5'")
    cur.execute("ALTER TABLE c ADD COLUMN m INT MAX DEFAULT '5', DROP COLUMN v")
    cur.execute("ALTER TABLE c RENAME COLUMN tag label")
    cur.execute("INSERT INTO c VALUES (1, 'b', 9)")
    before = rows(cur, "SELECT * FROM c ORDER BY k, label")
    assert before == [(0, "a", 5), (1, "a", 5), (1, "b", 9), (2, "a", 5)]
    (row,) = tablets(cur, "c")
    tablet_id = int(row["TabletId"])
    run_compaction(manual, tablet_id)
    (row,) = tablets(cur, "c")
    assert row["VersionCount"] == "1"
    assert rows(cur, "SELECT * FROM c ORDER BY k, label") == before
    cur.execute("ALTER TABLE c RENAME COLUMN label tag2")  # the compacted rowset carries the new ids
    assert rows(cur, "SELECT tag2, max(m) FROM c GROUP BY tag2 ORDER BY tag2") == [("a", 5), ("b", 9)]


def test_show_alter_table_column_lists_light_changes_as_finished(cur) -> None:
    # Doris records a FINISHED job for a light change, which scripts poll the way Doris's own tests do
    cur.execute(f"CREATE TABLE j (k INT, v INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 {PROPS}")
    cur.execute("ALTER TABLE j ADD COLUMN x INT")
    cur.execute("SHOW ALTER TABLE COLUMN WHERE TableName = 'j' ORDER BY CreateTime DESC LIMIT 1")
    (row,) = cur.fetchall()
    assert (row[1], row[9]) == ("j", "FINISHED")
    cur.execute("ALTER TABLE j DROP COLUMN x")
    cur.execute("SHOW ALTER TABLE COLUMN WHERE TableName = 'j' AND State = 'FINISHED'")
    assert len(cur.fetchall()) == 2
    cur.execute("SHOW ALTER TABLE COLUMN WHERE TableName = 'nope'")
    assert cur.fetchall() == ()


def test_value_columns_convert_as_they_are_read(cur) -> None:
    cur.execute(f"CREATE TABLE cv (k INT, v INT, d DATE, m DECIMAL(5, 2)) DUPLICATE KEY(k) "
                f"DISTRIBUTED BY HASH(k) BUCKETS 1 {PROPS}")
    cur.execute("INSERT INTO cv VALUES (1, -5, '2024-01-02', 1.50), (2, 123456, '2024-03-04', -2.25)")
    cur.execute("ALTER TABLE cv MODIFY COLUMN v VARCHAR(20), MODIFY COLUMN d DATETIME, MODIFY COLUMN m STRING")
    cur.execute("INSERT INTO cv VALUES (3, 'text', '2024-05-06 07:08:09', 'x')")
    cur.execute("SELECT k, v, CAST(d AS CHAR), m FROM cv ORDER BY k")
    assert cur.fetchall() == ((1, "-5", "2024-01-02 00:00:00", "1.50"), (2, "123456", "2024-03-04 00:00:00", "-2.25"),
                              (3, "text", "2024-05-06 07:08:09", "x"))
    assert rows(cur, "SELECT k FROM cv WHERE v = '123456'") == [(2,)]
    assert rows(cur, "SELECT k FROM cv WHERE d < '2024-02-01'") == [(1,)]
    cur.execute("ALTER TABLE cv ADD COLUMN big BIGINT DEFAULT '7'")
    cur.execute("ALTER TABLE cv MODIFY COLUMN big DECIMAL(25, 2)")
    # the old rows keep the value the column was added with (7), whatever MODIFY does to DEFAULT
    assert rows(cur, "SELECT CAST(sum(big) AS CHAR) FROM cv") == [("21.00",)]
    # conversions Doris does not run at all
    assert error(cur, "ALTER TABLE cv MODIFY COLUMN d INT") == "errCode = 2, detailMessage = Can not change DATETIME to INT"
    assert error(cur, "ALTER TABLE cv MODIFY COLUMN m INT") == "errCode = 2, detailMessage = Can not change STRING to INT"


def test_a_duplicate_table_without_keys(cur) -> None:
    """enable_duplicate_without_keys_by_default = true and no key clause: a duplicate table with no sort key
    (every column Key false, no DUPLICATE KEY in SHOW CREATE TABLE), which loads, changes schema and takes a
    rollup like any other; without the property the first columns are the keys as before."""
    cur.execute("CREATE TABLE nk (a INT, b VARCHAR(10), c INT) DISTRIBUTED BY HASH(a) BUCKETS 2 PROPERTIES "
                "('replication_num' = '1', 'enable_duplicate_without_keys_by_default' = 'true')")
    assert [r[3] for r in rows(cur, "DESC nk")] == ["false", "false", "false"]
    assert [r[5] for r in rows(cur, "DESC nk")] == ["NONE", "NONE", "NONE"]
    ddl = rows(cur, "SHOW CREATE TABLE nk")[0][1]
    assert "DUPLICATE KEY" not in ddl and '"enable_duplicate_without_keys_by_default" = "true"' in ddl
    cur.execute("INSERT INTO nk VALUES (3, 'x', 1), (1, 'y', 2), (3, 'x', 1)")
    cur.execute("ALTER TABLE nk ADD COLUMN d INT DEFAULT '7'")
    assert rows(cur, "SELECT a, b, c, d FROM nk WHERE a = 3") == [(3, "x", 1, 7)] * 2
    cur.execute("DROP TABLE nk")
    cur.execute(ddl)  # SHOW CREATE TABLE's text makes the same table
    assert [r[3] for r in rows(cur, "DESC nk")] == ["false", "false", "false"]
    cur.execute("CREATE TABLE wk (a INT, b VARCHAR(10), c INT) DISTRIBUTED BY HASH(a) BUCKETS 2 PROPERTIES "
                "('replication_num' = '1', 'enable_duplicate_without_keys_by_default' = 'false')")
    assert [r[3] for r in rows(cur, "DESC wk")] == ["true", "true", "false"]
