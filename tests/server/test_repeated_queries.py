"""A repeated SELECT runs from its cached plan; through the wire it must answer exactly as a fresh plan
would: after loads, DDL, USE, SET of variables, with profiles and sql_select_limit."""

from __future__ import annotations

import time

import pymysql
import pytest


def _all(cur, sql: str) -> list[tuple]:
    cur.execute(sql)
    return [tuple(r) for r in cur.fetchall()]


@pytest.fixture
def t(cur) -> str:
    cur.execute("CREATE TABLE t (k INT, v BIGINT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2 "
                "PROPERTIES ('replication_num' = '1')")
    cur.execute("INSERT INTO t VALUES (1, 10), (2, 20), (3, 30)")
    return "t"


def test_repeat_after_loads_and_deletes(cur, t) -> None:
    sql = "SELECT count(*), sum(v) FROM t WHERE k >= 2"
    assert _all(cur, sql) == [(2, 50)]
    assert _all(cur, sql) == [(2, 50)]
    cur.execute("INSERT INTO t VALUES (4, 40)")
    assert _all(cur, sql) == [(3, 90)]
    cur.execute("DELETE FROM t WHERE k = 2")
    assert _all(cur, sql) == [(2, 70)]


def test_repeat_after_the_table_is_replaced(cur, t) -> None:
    sql = "SELECT * FROM t ORDER BY k"
    assert _all(cur, sql) == [(1, 10), (2, 20), (3, 30)]
    cur.execute("DROP TABLE t")
    with pytest.raises(pymysql.err.ProgrammingError) as e:
        _all(cur, sql)
    assert e.value.args[0] == 1146
    cur.execute("CREATE TABLE t (k INT, s VARCHAR(10), w INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 "
                "PROPERTIES ('replication_num' = '1')")
    cur.execute("INSERT INTO t VALUES (7, 'x', 70)")
    assert _all(cur, sql) == [(7, "x", 70)]
    assert [d[0] for d in cur.description] == ["k", "s", "w"]


def test_same_text_in_another_database(server, db, cur, t) -> None:
    sql = "SELECT count(*) FROM t"
    assert _all(cur, sql) == [(3,)]
    cur.execute(f"CREATE DATABASE {db}_b")
    try:
        cur.execute(f"USE {db}_b")
        cur.execute("CREATE TABLE t (k INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 "
                    "PROPERTIES ('replication_num' = '1')")
        cur.execute("INSERT INTO t VALUES (1)")
        assert _all(cur, sql) == [(1,)]
        cur.execute(f"USE {db}")
        assert _all(cur, sql) == [(3,)]
    finally:
        cur.execute(f"DROP DATABASE {db}_b")


def test_user_and_session_variables(cur, t) -> None:
    sql = "SELECT v FROM t WHERE k = @x"
    cur.execute("SET @x = 2")
    assert _all(cur, sql) == [(20,)]
    assert _all(cur, sql) == [(20,)]
    cur.execute("SET @x = 3")
    assert _all(cur, sql) == [(30,)]
    cur.execute("SET sql_select_limit = 1")
    assert _all(cur, "SELECT k FROM t ORDER BY k") == [(1,)]
    cur.execute("SET sql_select_limit = DEFAULT")
    assert _all(cur, "SELECT k FROM t ORDER BY k") == [(1,), (2,), (3,)]


def test_a_cached_run_is_profiled(cur, t) -> None:
    cur.execute("SET enable_profile = true")
    sql = "SELECT k, v FROM t WHERE k = 3"
    for _ in range(2):
        assert _all(cur, sql) == [(3, 30)]
    cur.execute('SHOW QUERY PROFILE "/"')
    names = [d[0] for d in cur.description]
    ids = [dict(zip(names, r, strict=True))["QueryId"] for r in cur.fetchall()
           if dict(zip(names, r, strict=True))["SQL"] == sql]
    assert len(ids) == 2 and ids[0] != ids[1]
    for qid in ids:
        cur.execute(f'SHOW QUERY PROFILE "/{qid}"')
        text = "\n".join(r[0] for r in cur.fetchall())
        assert "RowsReturned: 1" in text, text


def test_warnings_of_the_previous_statement_are_cleared(cur, t) -> None:
    sql = "SELECT k FROM t WHERE k = 1"
    _all(cur, sql)
    cur.execute("SET enable_insert_strict = false")
    cur.execute("INSERT INTO t VALUES ('x', 1), (5, 50)")  # one row filtered: a warning
    assert _all(cur, "SHOW WARNINGS")
    _all(cur, sql)
    assert _all(cur, "SHOW WARNINGS") == []


def test_user_variables_equal_in_value_but_not_in_type(cur) -> None:
    """@x = 1, 1.0 and 1.00 compare equal as numbers but convert to different strings: each must be
    planned with its own value, as a fresh plan would be."""
    cur.execute("CREATE TABLE s (k INT, s VARCHAR(10)) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 "
                "PROPERTIES ('replication_num' = '1')")
    cur.execute("INSERT INTO s VALUES (1, '1'), (2, '1.0'), (3, '1.00')")
    sql = "SELECT k FROM s WHERE s = @x"
    for value, want in (("1", [(1,)]), ("1.0", [(2,)]), ("1.00", [(3,)]), ("1", [(1,)])):
        cur.execute(f"SET @x = {value}")
        assert _all(cur, sql) == want, value


def test_warnings_are_cleared_when_a_kept_plan_fails(server, db, cur, t) -> None:
    """A kept plan whose execution fails (an unknown function is only found at execution) still clears
    the previous statement's warnings, as every statement does."""
    sql = "SELECT k FROM t WHERE k = utc_date()"
    cur.execute("SET enable_insert_strict = false")
    cur.execute("INSERT INTO t VALUES ('x', 1), (5, 50)")  # one row filtered: a warning
    assert _all(cur, "SHOW WARNINGS")
    with server.connect(db) as other, other.cursor() as c2:  # plans it after the load: the plan is kept
        with pytest.raises(pymysql.err.MySQLError):
            c2.execute(sql)
    with pytest.raises(pymysql.err.MySQLError):
        cur.execute(sql)  # from the kept plan
    assert _all(cur, "SHOW WARNINGS") == []


def test_point_lookups_of_other_keys_share_a_plan(server, db, cur) -> None:
    """Lookups that differ only in the key run one template (on the event loop once known to be quick): each
    answer is the key's, through loads, a DELETE, a schema change and a dropped table."""
    cur.execute("CREATE TABLE pl (k BIGINT, s VARCHAR(10), v INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 4 "
                "PROPERTIES ('replication_num' = '1')")
    cur.execute("INSERT INTO pl VALUES " + ", ".join(f"({k}, 's{k}', {k * 10})" for k in range(100)))
    for k in list(range(0, 100, 7)) * 2:
        assert _all(cur, f"SELECT k, s, v FROM pl WHERE k = {k}") == [(k, f"s{k}", k * 10)]
        assert _all(cur, f"SELECT v FROM pl WHERE s = 's{k}' AND k = {k}") == [(k * 10,)]
    cur.execute("INSERT INTO pl VALUES (7, 'seven', 77)")
    assert sorted(_all(cur, "SELECT k, s, v FROM pl WHERE k = 7")) == [(7, "s7", 70), (7, "seven", 77)]
    cur.execute("DELETE FROM pl WHERE k = 14")
    assert _all(cur, "SELECT k, s, v FROM pl WHERE k = 14") == []
    assert _all(cur, "SELECT k, s, v FROM pl WHERE k = 21") == [(21, "s21", 210)]
    cur.execute("ALTER TABLE pl ADD COLUMN w INT DEFAULT '5'")
    assert _all(cur, "SELECT * FROM pl WHERE k = 28") == [(28, "s28", 280, 5)]
    cur.execute("DROP TABLE pl")
    with pytest.raises(pymysql.err.ProgrammingError) as e:
        _all(cur, "SELECT k, s, v FROM pl WHERE k = 35")
    assert e.value.args[0] == 1146
    assert _all(cur, "SELECT 1") == [(1,)]


def test_the_sql_mode_a_text_was_read_under_is_part_of_its_key(cur, t) -> None:
    sql = "SELECT k || 'x', v FROM t WHERE k = 2"
    before = _all(cur, sql)
    assert _all(cur, sql) == before and before[0][0] != "2x"  # OR
    cur.execute("SET sql_mode = 'PIPES_AS_CONCAT'")
    assert _all(cur, sql) == [("2x", 20)]
    assert _all(cur, sql) == [("2x", 20)]


@pytest.mark.parametrize("model", ["DUPLICATE", "AGGREGATE", "UNIQUE"])
def test_whole_table_reads_between_small_loads(cur, model: str) -> None:
    """Reads of a table taking many small loads extend the rows kept from the last read
    (storage/tablet/scan_cache.py): after every load, DELETE and added column they answer as the model says."""
    import random

    value = {"DUPLICATE": "v BIGINT", "AGGREGATE": "v BIGINT SUM", "UNIQUE": "v BIGINT"}[model]
    cur.execute(f"CREATE TABLE m (k INT, {value}) {model} KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2 "
                "PROPERTIES ('replication_num' = '1')")
    rng = random.Random(7)
    rows: list[tuple[int, int]] = []  # every row loaded and not deleted, in load order
    extra = False

    def expected() -> list[tuple]:
        if model == "DUPLICATE":
            out = sorted(rows)
        else:
            merged: dict[int, int] = {}
            for k, v in rows:
                merged[k] = merged.get(k, 0) + v if model == "AGGREGATE" else v
            out = sorted(merged.items())
        return [(k, v, 0) if extra else (k, v) for k, v in out]

    for step in range(40):
        if step % 13 == 12:
            gone = rng.randrange(8)
            cur.execute(f"DELETE FROM m WHERE k = {gone}")
            rows = [r for r in rows if r[0] != gone]
        elif step == 25:
            cur.execute("ALTER TABLE m ADD COLUMN x INT DEFAULT '0'" if model != "AGGREGATE"
                        else "ALTER TABLE m ADD COLUMN x INT SUM DEFAULT '0'")
            for _ in range(100):
                cur.execute("SHOW ALTER TABLE COLUMN WHERE TableName = 'm'")
                state = [d[0] for d in cur.description].index("State")
                if all(r[state] in ("FINISHED", "CANCELLED") for r in cur.fetchall()):
                    break
                time.sleep(0.1)
            extra = True
        else:
            batch = [(rng.randrange(8), rng.randrange(100)) for _ in range(3)]
            values = ", ".join(f"({k}, {v}, 0)" if extra else f"({k}, {v})" for k, v in batch)
            cur.execute(f"INSERT INTO m VALUES {values}")
            rows += batch
        assert _all(cur, "SELECT * FROM m ORDER BY k, v") == expected(), step
        assert _all(cur, "SELECT count(*), sum(v) FROM m") == [
            (len(expected()), sum(r[1] for r in expected()) if expected() else None)], step
