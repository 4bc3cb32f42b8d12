"""DELETE FROM and SHOW DELETE through the real server: each data model's rules (DUPLICATE any column,
AGGREGATE and merge-on-read UNIQUE key columns only, merge-on-write UNIQUE any WHERE on merged rows), rows
loaded again after a delete, partitions (inferred, named, delete_without_partition), rollups, every error
with Doris's code and message, SHOW DELETE, restarts, and pruning / profiles after deletes."""

from __future__ import annotations

import re

import pymysql
import pytest

ERR = "errCode = 2, detailMessage = "
DELETE_INFO = re.compile(r"\{'label':'delete_[0-9a-f-]{36}', 'status':'VISIBLE', 'txnId':'(\d+)'\}")
INSERT_INFO = re.compile(r"\{'label':'label_[0-9a-f]{16}_[0-9a-f]{16}', 'status':'VISIBLE', 'txnId':'\d+'\}")
SHOW_DELETE = ["TableName", "PartitionName", "CreateTime", "DeleteCondition", "State"]

DUP_DDL = """CREATE TABLE dup (k INT NOT NULL, v INT, s VARCHAR(10), d DATE, f DOUBLE)
DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 3 PROPERTIES ("replication_num" = "1")"""
DUP_ROWS = "(1, 10, 'a', '2024-01-01', 1.0), (2, 20, 'b', '2024-01-02', 2.0), (3, 30, 'c', '2024-01-03', 3.0), " \
           "(4, NULL, 'd', NULL, 4.0), (5, 50, NULL, '2024-01-05', 5.0)"
AGG_DDL = """CREATE TABLE agg (k1 INT NOT NULL, k2 VARCHAR(10) NOT NULL, v BIGINT SUM DEFAULT "0", m INT MAX)
AGGREGATE KEY(k1, k2) DISTRIBUTED BY HASH(k1) BUCKETS 2
ROLLUP (r_k1 (k1, v)) PROPERTIES ("replication_num" = "1")"""
RANGE_DDL = """CREATE TABLE events (dt DATE NOT NULL, id INT NOT NULL, v INT)
DUPLICATE KEY(dt, id)
PARTITION BY RANGE(dt) (PARTITION p1 VALUES LESS THAN ('2024-02-01'), PARTITION p2 VALUES LESS THAN ('2024-03-01'),
                        PARTITION p3 VALUES LESS THAN ('2024-04-01'))
DISTRIBUTED BY HASH(id) BUCKETS 2 PROPERTIES ("replication_num" = "1")"""
RANGE_ROWS = ", ".join(f"('2024-0{m}-{10 + i}', {m * 10 + i}, {i})" for m in (1, 2, 3) for i in range(5))


def rows(cur, sql: str) -> list[tuple]:  # noqa: ANN001
    cur.execute(sql)
    return [tuple(r) for r in cur.fetchall()]


def error_of(cur, sql: str) -> tuple[int, str]:  # noqa: ANN001
    with pytest.raises(pymysql.MySQLError) as info:
        cur.execute(sql)
    return info.value.args[0], info.value.args[1]


def delete(cur, sql: str) -> tuple[int, str]:  # noqa: ANN001
    """(rows affected, info string) of a DELETE."""
    affected = cur.execute(sql)
    return affected, cur.connection._result.message.decode()


def show_delete(cur, sql: str = "SHOW DELETE") -> list[dict]:  # noqa: ANN001
    cur.execute(sql)
    assert [d[0] for d in cur.description] == SHOW_DELETE
    return [dict(zip(SHOW_DELETE, r, strict=True)) for r in cur.fetchall()]


def versions(cur, table: str) -> dict[str, int]:  # noqa: ANN001
    cur.execute(f"SHOW PARTITIONS FROM {table}")
    names = [d[0] for d in cur.description]
    return {r[names.index("PartitionName")]: int(r[names.index("VisibleVersion")]) for r in cur.fetchall()}


def explain(cur, sql: str) -> str:  # noqa: ANN001
    cur.execute(f"EXPLAIN {sql}")
    return "\n".join(r[0] for r in cur.fetchall())


# -- DUPLICATE -----------------------------------------------------------------------------------------


def test_duplicate_delete_by_value_columns(cur) -> None:  # noqa: ANN001
    cur.execute(DUP_DDL)
    cur.execute(f"INSERT INTO dup VALUES {DUP_ROWS}")
    affected, info = delete(cur, "DELETE FROM dup WHERE v >= 20 AND s <> 'c'")
    assert affected == 0 and DELETE_INFO.search(info), info
    # NULL matches nothing: k = 4 (v NULL) and k = 5 (s NULL) stay
    assert rows(cur, "SELECT k FROM dup ORDER BY k") == [(1,), (3,), (4,), (5,)]
    assert rows(cur, "SELECT count(*) FROM dup") == [(4,)]
    # rows loaded after the delete are not touched by it
    cur.execute("INSERT INTO dup VALUES (2, 20, 'b', '2024-01-02', 2.0), (6, 60, 'x', NULL, 6.0)")
    assert rows(cur, "SELECT k FROM dup ORDER BY k") == [(1,), (2,), (3,), (4,), (5,), (6,)]
    delete(cur, "DELETE FROM dup WHERE d = '2024-01-03' AND k IN (3, 7) AND v IS NOT NULL")
    delete(cur, "DELETE FROM dup WHERE d IS NULL AND k BETWEEN 4 AND 5")
    assert rows(cur, "SELECT k FROM dup ORDER BY k") == [(1,), (2,), (5,), (6,)]
    shown = show_delete(cur)
    assert [(r["TableName"], r["PartitionName"], r["DeleteCondition"], r["State"]) for r in shown] == [
        ("dup", "*", 'v GE "20", s NE "c"', "FINISHED"),
        ("dup", "*", 'd EQ "2024-01-03", k IN (3, 7), v IS NOT NULL', "FINISHED"),
        ("dup", "*", 'd IS NULL, k GE "4", k LE "5"', "FINISHED"),
    ]
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", r["CreateTime"]) for r in shown)


def test_not_in_does_not_match_null(cur) -> None:  # noqa: ANN001
    cur.execute(DUP_DDL)
    cur.execute(f"INSERT INTO dup VALUES {DUP_ROWS}")
    delete(cur, "DELETE FROM dup WHERE s NOT IN ('a')")
    assert rows(cur, "SELECT k FROM dup ORDER BY k") == [(1,), (5,)]  # s NULL: NOT IN is not true


# -- AGGREGATE -----------------------------------------------------------------------------------------


def test_aggregate_delete_by_keys_and_rollup_answers(cur) -> None:  # noqa: ANN001
    cur.execute(AGG_DDL)
    cur.execute("INSERT INTO agg VALUES (1, 'a', 10, 1), (1, 'b', 20, 2), (2, 'a', 30, 3)")
    cur.execute("INSERT INTO agg VALUES (1, 'a', 5, 9), (2, 'a', 1, 1)")
    code, message = error_of(cur, "DELETE FROM agg WHERE v = 15")
    assert (code, message) == (1105, ERR + "delete predicate on value column only supports Unique table with "
                                            "merge-on-write enabled and Duplicate table, but Table[agg] is an "
                                            "Aggregate table.")
    assert error_of(cur, "DELETE FROM agg WHERE k2 = 'a'") == (
        1105, ERR + "Column[k2] not exist in index r_k1. maybe you need drop the corresponding materialized-view.")
    assert delete(cur, "DELETE FROM agg WHERE k1 = 1")[0] == 0
    assert rows(cur, "SELECT * FROM agg ORDER BY k1, k2") == [(2, "a", 31, 3)]
    query = "SELECT k1, sum(v) FROM agg GROUP BY k1"
    assert "TABLE: " in explain(cur, query) and "(r_k1)" in explain(cur, query)
    assert rows(cur, query) == [(2, 31)]
    cur.execute("INSERT INTO agg VALUES (1, 'a', 7, 7)")  # the deleted key again: only the new row counts
    assert rows(cur, "SELECT * FROM agg ORDER BY k1, k2") == [(1, "a", 7, 7), (2, "a", 31, 3)]
    assert sorted(rows(cur, query)) == [(1, 7), (2, 31)]
    cur.execute("SET enable_rollup_selection = false")
    assert sorted(rows(cur, query)) == [(1, 7), (2, 31)]


def test_rollup_added_after_a_delete_is_built_without_the_deleted_rows(cur) -> None:  # noqa: ANN001
    from tests.server.test_rollup import wait_jobs

    cur.execute(AGG_DDL)
    cur.execute("INSERT INTO agg VALUES (1, 'a', 10, 1), (2, 'b', 20, 2), (3, 'a', 30, 3)")
    delete(cur, "DELETE FROM agg WHERE k1 = 2")
    cur.execute("ALTER TABLE agg ADD ROLLUP r_k2 (k2, k1, v)")
    assert wait_jobs(cur, "agg")[-1]["State"] == "FINISHED"
    query = "SELECT k2, sum(v) FROM agg GROUP BY k2"
    assert "(r_k2)" in explain(cur, query)
    assert sorted(rows(cur, query)) == [("a", 40)]
    delete(cur, "DELETE FROM agg WHERE k1 = 1")  # reaches the new rollup's tablets too
    assert sorted(rows(cur, query)) == [("a", 30)]


# -- UNIQUE --------------------------------------------------------------------------------------------


def test_unique_merge_on_write_deletes_the_matching_keys(cur) -> None:  # noqa: ANN001
    cur.execute("""CREATE TABLE u (k INT NOT NULL, k2 VARCHAR(4), v INT, f DOUBLE) UNIQUE KEY(k, k2)
                   DISTRIBUTED BY HASH(k) BUCKETS 3 PROPERTIES ("replication_num" = "1")""")
    cur.execute("INSERT INTO u VALUES (1, 'a', 10, 0.5), (2, 'b', 20, 1.5), (3, NULL, 30, 2.5), (4, 'd', 40, 3.5)")
    cur.execute("INSERT INTO u VALUES (2, 'b', 5, 1.0)")  # merged: v of (2, 'b') is now 5
    # evaluated on the merged rows: (2, 'b') no longer has v >= 20
    affected, info = delete(cur, "DELETE FROM u WHERE v >= 20 AND v < 40")
    assert affected == 1 and INSERT_INFO.search(info), info
    assert rows(cur, "SELECT k, k2, v FROM u ORDER BY k") == [(1, "a", 10), (2, "b", 5), (4, "d", 40)]
    # any WHERE a query takes (Doris runs it as an insert of the keys): expressions, OR, doubles
    assert delete(cur, "DELETE FROM u WHERE v + 1 = 11 OR f > 3")[0] == 2
    assert rows(cur, "SELECT k FROM u") == [(2,)]
    assert delete(cur, "DELETE FROM u WHERE v > 100") == (0, "")  # nothing matched: nothing published
    cur.execute("INSERT INTO u VALUES (3, NULL, 33, 0.0), (4, 'd', 44, 0.0)")  # deleted keys come back
    assert rows(cur, "SELECT k, v FROM u ORDER BY k") == [(2, 5), (3, 33), (4, 44)]
    cur.execute("CREATE TABLE other (id INT) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1 "
                "PROPERTIES ('replication_num' = '1')")
    cur.execute("INSERT INTO other VALUES (3), (9)")
    assert delete(cur, "DELETE FROM u x USING other WHERE x.k = other.id")[0] == 1
    assert rows(cur, "SELECT k FROM u ORDER BY k") == [(2,), (4,)]
    assert show_delete(cur) == []  # as in Doris: these ran as loads of the keys, not delete jobs


def test_unique_merge_on_read_deletes_by_keys_only(cur) -> None:  # noqa: ANN001
    cur.execute("""CREATE TABLE mor (k INT NOT NULL, v INT) UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2
                   PROPERTIES ("replication_num" = "1", "enable_unique_key_merge_on_write" = "false")""")
    cur.execute("INSERT INTO mor VALUES (1, 10), (2, 20), (3, 30)")
    assert error_of(cur, "DELETE FROM mor WHERE v = 10") == (
        1105, ERR + "delete predicate on value column only supports Unique table with merge-on-write enabled and "
                    "Duplicate table, but Table[mor] is an Aggregate table.")
    assert delete(cur, "DELETE FROM mor WHERE k >= 2")[0] == 0
    cur.execute("INSERT INTO mor VALUES (3, 33)")
    assert rows(cur, "SELECT * FROM mor ORDER BY k") == [(1, 10), (3, 33)]
    assert [r["DeleteCondition"] for r in show_delete(cur)] == ['k GE "2"']


# -- partitions ----------------------------------------------------------------------------------------


def test_partitions_inferred_named_or_all(cur) -> None:  # noqa: ANN001
    cur.execute(RANGE_DDL)
    cur.execute(f"INSERT INTO events VALUES {RANGE_ROWS}")
    before = versions(cur, "events")
    # inferred from the partition column: only p1 gets a new version
    delete(cur, "DELETE FROM events WHERE dt = '2024-01-11' AND v = 1")
    after = versions(cur, "events")
    assert after == {**before, "p1": before["p1"] + 1}
    assert rows(cur, "SELECT count(*) FROM events") == [(14,)]
    message = ("This is a range or list partitioned table. You should specify partition in delete stmt, "
               "or set delete_without_partition to true")
    assert error_of(cur, "DELETE FROM events WHERE v = 2") == (1105, ERR + message)
    assert error_of(cur, "DELETE FROM events WHERE dt NOT IN ('2024-01-12') AND v = 2") == (1105, ERR + message)
    assert error_of(cur, "DELETE FROM events WHERE dt > '2024-05-01'") == (1105, ERR + message)  # no partition
    delete(cur, "DELETE FROM events PARTITION p2 WHERE v = 2")
    delete(cur, "DELETE FROM events PARTITIONS (p2, p3) WHERE v = 3")
    assert versions(cur, "events") == {"p1": after["p1"], "p2": after["p2"] + 2, "p3": after["p3"] + 1}
    cur.execute("SET delete_without_partition = true")
    delete(cur, "DELETE FROM events WHERE v = 4")
    assert sorted(rows(cur, "SELECT v, count(*) FROM events GROUP BY v")) == [(0, 3), (1, 2), (2, 2), (3, 1)]
    assert [(r["PartitionName"], r["DeleteCondition"]) for r in show_delete(cur)] == [
        ("*", 'dt EQ "2024-01-11", v EQ "1"'), ("p2", 'v EQ "2"'), ("p2, p3", 'v EQ "3"'), ("*", 'v EQ "4"')]
    assert error_of(cur, "DELETE FROM events PARTITION p9 WHERE v = 1") == (
        1105, ERR + "Partition does not exist. name: p9")
    # pruning still works over DELETE versions
    plan = explain(cur, "SELECT * FROM events WHERE dt = '2024-02-12'")
    assert "partitions=1/3 (p2)" in plan
    assert rows(cur, "SELECT id, v FROM events WHERE dt = '2024-02-12'") == []  # v = 2 was deleted in p2
    assert rows(cur, "SELECT id, v FROM events WHERE dt = '2024-01-12'") == [(12, 2)]


def test_list_partition_inference(cur) -> None:  # noqa: ANN001
    cur.execute("""CREATE TABLE cities (city VARCHAR(20) NOT NULL, id INT NOT NULL, v INT) DUPLICATE KEY(city, id)
                   PARTITION BY LIST(city) (PARTITION p_bj VALUES IN ("Beijing"), PARTITION p_sh VALUES IN ("Shanghai"))
                   DISTRIBUTED BY HASH(id) BUCKETS 1 PROPERTIES ("replication_num" = "1")""")
    cur.execute("INSERT INTO cities VALUES ('Beijing', 1, 1), ('Shanghai', 2, 1), ('Shanghai', 3, 2)")
    before = versions(cur, "cities")
    delete(cur, "DELETE FROM cities WHERE city IN ('Shanghai') AND v = 1")
    assert versions(cur, "cities") == {"p_bj": before["p_bj"], "p_sh": before["p_sh"] + 1}
    assert rows(cur, "SELECT id FROM cities ORDER BY id") == [(1,), (3,)]


# -- errors --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("sql, code, message", [
    ("DELETE FROM dup WHERE v = k", 1105, "Right expr of binary predicate should be value"),
    ("DELETE FROM dup WHERE d = (SELECT 1)", 1105, "Right expr of binary predicate should be value"),
    ("DELETE FROM dup WHERE 1 = k", 1105, "Left expr of binary predicate should be column name"),
    ("DELETE FROM dup WHERE k + 1 = 2", 1105, "Left expr of binary predicate should be column name"),
    ("DELETE FROM dup WHERE k = 1 OR v = 2", 1105, "Compound predicate's op should be AND"),
    ("DELETE FROM dup WHERE s LIKE 'a%'", 1105, "Where clause only supports compound predicate, binary predicate, "
                                                "is_null predicate or in predicate"),
    ("DELETE FROM dup WHERE NOT (k = 1)", 1105, "Where clause only supports compound predicate, binary predicate, "
                                                "is_null predicate or in predicate"),
    ("DELETE FROM dup WHERE k IN (SELECT 1)", 1105, "Child of in predicate should be value"),
    ("DELETE FROM dup WHERE k IN (1, v)", 1105, "Child of in predicate should be value"),
    ("DELETE FROM dup WHERE k IN (" + ", ".join(map(str, range(1025))) + ")", 1105,
     "Element num of in predicate should not be more than 1024"),
    ("DELETE FROM dup WHERE nope = 1", 1054, "Unknown column 'nope' in 'dup'"),
    ("DELETE FROM dup WHERE other.k = 1", 1054, "Unknown column 'k' in 'dup'"),
    ("DELETE FROM dup WHERE k = 1.5", 1105, "Invalid column value[1.5] for column k"),
    ("DELETE FROM dup WHERE d = 'not a date'", 1105, "Invalid column value[not a date] for column d"),
    ("DELETE FROM dup WHERE f = 1", 1105, "Column[f] type is float or double."),
    ("DELETE FROM dup", 1105, "Where clause is not set"),
    ("DELETE FROM dup PARTITION nope WHERE k = 1", 1105, "Partition does not exist. name: nope"),
    ("DELETE FROM dup TEMPORARY PARTITION dup WHERE k = 1", 1105, "Do not support deleting temp partitions"),
    ("DELETE FROM dup USING agg WHERE dup.k = agg.k1", 1105,
     "delete command on with using clause only supports unique key model"),
])
def test_delete_errors(cur, sql: str, code: int, message: str) -> None:  # noqa: ANN001
    cur.execute(DUP_DDL)
    cur.execute(AGG_DDL)
    cur.execute(f"INSERT INTO dup VALUES {DUP_ROWS}")
    assert error_of(cur, sql) == (code, ERR + message)
    assert rows(cur, "SELECT count(*) FROM dup") == [(5,)]  # nothing was deleted
    assert show_delete(cur) == []


def test_delete_unknown_names(cur, db) -> None:  # noqa: ANN001
    assert error_of(cur, "DELETE FROM nope WHERE k = 1") == (1146, ERR + f"Table [nope] does not exist in database [{db}].")
    assert error_of(cur, "SHOW DELETE FROM no_such_db") == (1049, ERR + "Unknown database 'no_such_db'")
    cur.execute(DUP_DDL)
    cur.execute(f"INSERT INTO dup VALUES {DUP_ROWS}")
    delete(cur, f"DELETE FROM {db}.dup x WHERE x.k = 1 AND dup.v = 10")  # qualified by db, alias and table
    assert rows(cur, "SELECT count(*) FROM dup") == [(4,)]
    assert delete(cur, "DELETE FROM dup WHERE k = NULL") == (0, "")  # matches nothing: no job
    assert len(show_delete(cur, f"SHOW DELETE FROM {db}")) == 1


# -- profiles, restarts --------------------------------------------------------------------------------


def test_profile_counts_deleted_rows(cur) -> None:  # noqa: ANN001
    cur.execute(DUP_DDL)
    cur.execute(f"INSERT INTO dup VALUES {DUP_ROWS}")
    delete(cur, "DELETE FROM dup WHERE v <= 20")
    cur.execute("SET enable_profile = true")
    assert rows(cur, "SELECT k FROM dup ORDER BY k") == [(3,), (4,), (5,)]
    cur.execute('SHOW QUERY PROFILE "/"')
    query_id = cur.fetchall()[0][0]
    cur.execute(f'SHOW QUERY PROFILE "/{query_id}"')
    text = "\n".join(r[0] for r in cur.fetchall())
    assert re.search(r"RowsDelFiltered: 2\b", text), text
    assert re.search(r"RowsReturned: 3\b", text), text


def test_restart_keeps_deletes_applied(fresh_server) -> None:  # noqa: ANN001
    with fresh_server.connect() as conn, conn.cursor() as cur:
        cur.execute("CREATE DATABASE keep")
        cur.execute("USE keep")
        cur.execute(DUP_DDL)
        cur.execute(f"INSERT INTO dup VALUES {DUP_ROWS}")
        delete(cur, "DELETE FROM dup WHERE k >= 4")
        cur.execute("""CREATE TABLE u (k INT NOT NULL, v INT) UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2
                       PROPERTIES ("replication_num" = "1")""")
        cur.execute("INSERT INTO u VALUES (1, 1), (2, 2)")
        delete(cur, "DELETE FROM u WHERE v = 2")
    fresh_server.stop()
    fresh_server.start()
    with fresh_server.connect("keep") as conn, conn.cursor() as cur:
        assert rows(cur, "SELECT k FROM dup ORDER BY k") == [(1,), (2,), (3,)]
        assert rows(cur, "SELECT k FROM u") == [(1,)]
        assert [r["DeleteCondition"] for r in show_delete(cur)] == ['k GE "4"']
