"""Temporary partitions (issue 13): ADD / DROP TEMPORARY PARTITION, loads into and reads from them by name only,
SHOW TEMPORARY PARTITIONS, and the atomic ALTER TABLE REPLACE PARTITION ... WITH TEMPORARY PARTITION with
strict_range and use_temp_partition_name, as Doris's temporary-partition manual describes them."""

from __future__ import annotations

import pytest

from tests.server.test_schema_change import PROPS, error, rows


@pytest.fixture
def t(cur):
    cur.execute("CREATE TABLE t (k INT, d DATE, v INT) DUPLICATE KEY(k) PARTITION BY RANGE(d) ("
                "PARTITION p1 VALUES LESS THAN ('2020-02-01'), PARTITION p2 VALUES LESS THAN ('2020-03-01'), "
                "PARTITION p3 VALUES LESS THAN ('2020-04-01')) "
                f"DISTRIBUTED BY HASH(k) BUCKETS 2 {PROPS}")
    cur.execute("INSERT INTO t VALUES (1, '2020-01-05', 1), (2, '2020-02-05', 2), (3, '2020-03-05', 3)")
    return cur


def names(cur, temporary: bool = False) -> list[str]:
    cur.execute(f"SHOW {'TEMPORARY ' if temporary else ''}PARTITIONS FROM t")
    return [r[1] for r in cur.fetchall()]


def test_replace_two_partitions_with_one(t) -> None:
    t.execute("ALTER TABLE t ADD TEMPORARY PARTITION tp1 VALUES LESS THAN ('2020-03-01') "
              "DISTRIBUTED BY HASH(k) BUCKETS 4")
    t.execute("INSERT INTO t TEMPORARY PARTITION (tp1) VALUES (10, '2020-01-07', 10), (20, '2020-02-07', 20)")
    # nothing but the named read sees them
    assert rows(t, "SELECT k FROM t ORDER BY k") == [(1,), (2,), (3,)]
    assert rows(t, "SELECT k FROM t TEMPORARY PARTITION (tp1) ORDER BY k") == [(10,), (20,)]
    assert rows(t, "SELECT count(*) FROM t TEMPORARY PARTITION tp1 WHERE d < '2020-02-01'") == [(1,)]
    assert names(t, temporary=True) == ["tp1"] and names(t) == ["p1", "p2", "p3"]
    # p1 alone covers less than tp1: refused under strict_range
    assert error(t, "ALTER TABLE t REPLACE PARTITION (p1) WITH TEMPORARY PARTITION (tp1)").startswith(
        "errCode = 2, detailMessage = 2 range lists are not stricly matched.")
    t.execute("ALTER TABLE t REPLACE PARTITION (p1, p2) WITH TEMPORARY PARTITION (tp1)")
    assert names(t) == ["tp1", "p3"] and names(t, temporary=True) == []
    assert rows(t, "SELECT k FROM t ORDER BY k") == [(3,), (10,), (20,)]
    t.execute("INSERT INTO t VALUES (30, '2020-02-20', 30)")
    assert rows(t, "SELECT k FROM t PARTITION (tp1) ORDER BY k") == [(10,), (20,), (30,)]


def test_same_count_keeps_the_names(t) -> None:
    t.execute("ALTER TABLE t ADD TEMPORARY PARTITION tp1 VALUES LESS THAN ('2020-02-01')")
    t.execute("INSERT INTO t TEMPORARY PARTITION (tp1) VALUES (7, '2020-01-01', 7)")
    t.execute("ALTER TABLE t REPLACE PARTITION p1 WITH TEMPORARY PARTITION tp1")
    assert names(t) == ["p1", "p2", "p3"]
    assert rows(t, "SELECT k FROM t PARTITION (p1)") == [(7,)]
    t.execute("ALTER TABLE t ADD TEMPORARY PARTITION tp2 VALUES [('2020-02-01'), ('2020-02-15'))")
    t.execute("ALTER TABLE t REPLACE PARTITION (p2) WITH TEMPORARY PARTITION (tp2) "
              "PROPERTIES ('strict_range' = 'false', 'use_temp_partition_name' = 'true')")
    assert names(t) == ["p1", "tp2", "p3"]
    assert rows(t, "SELECT count(*) FROM t") == [(2,)]  # p2's row went with it


def test_errors_and_rules(t) -> None:
    t.execute("ALTER TABLE t ADD TEMPORARY PARTITION tp1 VALUES LESS THAN ('2020-02-01')")
    assert error(t, "ALTER TABLE t ADD TEMPORARY PARTITION tp1 VALUES LESS THAN ('2020-05-01')") == \
        "errCode = 2, detailMessage = Duplicate partition name tp1"
    assert error(t, "ALTER TABLE t ADD TEMPORARY PARTITION p1 VALUES LESS THAN ('2020-05-01')") == \
        "errCode = 2, detailMessage = Duplicate partition name p1"
    assert "is intersected with range" in error(
        t, "ALTER TABLE t ADD TEMPORARY PARTITION tp2 VALUES LESS THAN ('2020-01-15')")
    assert error(t, "ALTER TABLE t ADD PARTITION tp1 VALUES LESS THAN ('2020-05-01')") == \
        "errCode = 2, detailMessage = Duplicate partition name tp1"
    assert "Unknown partition 'nope'" in error(t, "SELECT * FROM t TEMPORARY PARTITION (nope)")
    assert "Unknown partition 'nope'" in error(t, "INSERT INTO t TEMPORARY PARTITION (nope) VALUES (1, '2020-01-01', 1)")
    assert "no partition" in error(t, "INSERT INTO t TEMPORARY PARTITION (tp1) VALUES (1, '2020-03-01', 1)")
    assert error(t, "ALTER TABLE t ADD COLUMN x INT") == \
        "errCode = 2, detailMessage = Can not alter table when there are temp partitions in table"
    assert "Unknown properties" in error(t, "ALTER TABLE t REPLACE PARTITION (p1) WITH TEMPORARY PARTITION (tp1) "
                                            "PROPERTIES ('swap' = 'true')")
    assert "does not exist" in error(t, "ALTER TABLE t REPLACE PARTITION (p9) WITH TEMPORARY PARTITION (tp1)")
    t.execute("ALTER TABLE t DROP TEMPORARY PARTITION tp1")
    assert names(t, temporary=True) == []
    t.execute("ALTER TABLE t ADD COLUMN x INT")
    t.execute("ALTER TABLE t ADD TEMPORARY PARTITION tp1 VALUES LESS THAN ('2020-02-01')")
    t.execute("TRUNCATE TABLE t")  # drops the temporary partitions, as Doris does
    assert names(t, temporary=True) == [] and rows(t, "SELECT count(*) FROM t") == [(0,)]


def test_list_partitions_replace_exactly(cur) -> None:
    cur.execute("CREATE TABLE l (k INT, c VARCHAR(10)) DUPLICATE KEY(k) PARTITION BY LIST(c) ("
                "PARTITION pa VALUES IN ('a', 'b'), PARTITION pc VALUES IN ('c')) "
                f"DISTRIBUTED BY HASH(k) BUCKETS 1 {PROPS}")
    cur.execute("INSERT INTO l VALUES (1, 'a'), (2, 'c')")
    cur.execute("ALTER TABLE l ADD TEMPORARY PARTITION ta VALUES IN ('a')")
    cur.execute("ALTER TABLE l ADD TEMPORARY PARTITION tb VALUES IN ('b')")
    cur.execute("INSERT INTO l TEMPORARY PARTITION (ta, tb) VALUES (5, 'a'), (6, 'b')")
    assert "do not match" in error(cur, "ALTER TABLE l REPLACE PARTITION (pa) WITH TEMPORARY PARTITION (ta)")
    cur.execute("ALTER TABLE l REPLACE PARTITION (pa) WITH TEMPORARY PARTITION (ta, tb)")
    assert rows(cur, "SELECT k, c FROM l ORDER BY k") == [(2, "c"), (5, "a"), (6, "b")]
