"""Rollups through the real server: CREATE TABLE ... ROLLUP, ALTER TABLE ADD / DROP ROLLUP, SHOW ALTER TABLE
ROLLUP, CANCEL ALTER TABLE ROLLUP, DESC t ALL, errors, restarts, and loads (INSERT VALUES and Spark)
writing the rollups.

Rollup contents are read from the server's storage root with a read-only engine (`read_only_engine`, as
Spark reads tables): these tests do not depend on SELECT choosing a rollup.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pymysql
import pytest

from storage.spark.tables import read_only_engine
from tests.conftest import ROOT, ServerProcess, free_port

SEED_DDL = """
CREATE TABLE {name} (
    user_id LARGEINT NOT NULL, `date` DATE NOT NULL, `timestamp` DATETIME NOT NULL, city VARCHAR(20),
    age SMALLINT, sex TINYINT, last_visit_date DATETIME REPLACE DEFAULT "1970-01-01 00:00:00",
    cost BIGINT SUM DEFAULT "0", max_dwell_time INT MAX DEFAULT "0", min_dwell_time INT MIN DEFAULT "99999"
) AGGREGATE KEY(user_id, `date`, `timestamp`, city, age, sex)
DISTRIBUTED BY HASH(user_id) BUCKETS 3
{rollup}
PROPERTIES ("replication_num" = "1")
"""
SEED_VALUES = """
(10000,'2017-10-01','2017-10-01 08:00:05','北京',20,0,'2017-10-01 06:00:00',20,10,10),
(10000,'2017-10-01','2017-10-01 09:00:05','北京',20,0,'2017-10-01 07:00:00',15,2,2),
(10001,'2017-10-01','2017-10-01 18:12:10','北京',30,1,'2017-10-01 17:05:45',2,22,22),
(10002,'2017-10-02','2017-10-02 13:10:00','上海',20,1,'2017-10-02 12:59:12',200,5,5),
(10003,'2017-10-02','2017-10-02 13:15:00','广州',32,0,'2017-10-02 11:20:00',30,11,11),
(10004,'2017-10-01','2017-10-01 12:12:48','深圳',35,0,'2017-10-01 10:00:15',100,3,3),
(10004,'2017-10-03','2017-10-03 12:38:20','深圳',35,0,'2017-10-03 10:20:22',11,6,6)
"""
SEED_USER_COST = [(10000, 35), (10001, 2), (10002, 200), (10003, 30), (10004, 111)]
SEED_CITY_AGE = [("上海", 20, 200, 5, 5), ("北京", 20, 35, 10, 2), ("北京", 30, 2, 22, 22),
                 ("广州", 32, 30, 11, 11), ("深圳", 35, 111, 6, 3)]
SEED_ROLLUPS = "ROLLUP (r_user_cost (user_id, cost), r_city_age (city, age, cost, max_dwell_time, min_dwell_time))"
ADD_SEED_ROLLUPS = ("ALTER TABLE {name} ADD ROLLUP r_user_cost (user_id, cost), "
                    "r_city_age (city, age, cost, max_dwell_time, min_dwell_time)")

SHOW_COLUMNS = ["JobId", "TableName", "CreateTime", "FinishTime", "BaseIndexName", "RollupIndexName", "RollupId",
                "TransactionId", "State", "Msg", "Progress", "Timeout"]


def rollup_rows(storage: Path, db: str, table: str, index: str) -> list[tuple]:
    """Every row of one materialized index as stored (merged per the model), sorted."""
    engine = read_only_engine(storage)
    try:
        t = engine.catalog.get_table(db, table)
        meta = next(i for i in t.indexes if i.name == index)
        names = [c.name for c in meta.columns]
        got = engine.scan(_scan(t, names, meta.index_id)).table
    finally:
        engine.close()
    cols = [[int(v) if isinstance(v, Decimal) else v for v in c.to_pylist()] for c in got.columns]
    return sorted(zip(*cols, strict=True))


def _scan(table, names, index_id):
    from planner.olap_source import arrow_schema
    from storage.engine import ScanRequest

    return ScanRequest(table, arrow_schema(table), names, index_id=index_id)


def show_alter(cur, db: str | None = None) -> list[dict]:
    cur.execute("SHOW ALTER TABLE ROLLUP" + (f" FROM {db}" if db else ""))
    assert [d[0] for d in cur.description] == SHOW_COLUMNS
    return [dict(zip(SHOW_COLUMNS, r, strict=True)) for r in cur.fetchall()]


def wait_jobs(cur, table: str, timeout: float = 60.0) -> list[dict]:
    deadline = time.monotonic() + timeout
    while True:
        jobs = [j for j in show_alter(cur) if j["TableName"] == table]
        if jobs and all(j["State"] in ("FINISHED", "CANCELLED") for j in jobs):
            return jobs
        if time.monotonic() > deadline:
            raise AssertionError(f"rollup jobs did not finish: {jobs}")
        time.sleep(0.1)


def error_of(cur, sql: str) -> str:
    with pytest.raises(pymysql.MySQLError) as info:
        cur.execute(sql)
    return info.value.args[1]


def desc_all(cur, table: str) -> list[tuple]:
    cur.execute(f"DESC {table} ALL")
    return [tuple(r) for r in cur.fetchall()]


# -- CREATE TABLE ... ROLLUP and the seed's rows ----------------------------------------------------------


def test_create_table_rollups_hold_the_seeds_rows(server: ServerProcess, db: str, cur) -> None:
    cur.execute(SEED_DDL.format(name="t", rollup=SEED_ROLLUPS))
    cur.execute(f"INSERT INTO t VALUES {SEED_VALUES}")
    assert rollup_rows(server.storage, db, "t", "r_user_cost") == SEED_USER_COST
    assert rollup_rows(server.storage, db, "t", "r_city_age") == SEED_CITY_AGE
    assert show_alter(cur) == []  # created with the table: no job
    cur.execute("SHOW CREATE TABLE t")  # Doris does not print rollups in SHOW CREATE TABLE
    assert "r_user_cost" not in cur.fetchone()[1]


def test_desc_all_lists_every_index(cur) -> None:
    cur.execute(SEED_DDL.format(name="t", rollup="ROLLUP (r_user_cost (user_id, cost))"))
    rows = desc_all(cur, "t")
    assert len(rows[0]) == 12
    base, sep, rollup = rows[:10], rows[10], rows[11:]
    assert base[0][:5] == ("t", "AGG_KEYS", "user_id", "LARGEINT", "LARGEINT")
    assert base[1][:2] == ("", "")
    assert sep == ("",) * 12
    assert rollup == [
        ("r_user_cost", "AGG_KEYS", "user_id", "LARGEINT", "LARGEINT", "No", "true", None, "", "true", "", ""),
        ("", "", "cost", "BIGINT", "BIGINT", "Yes", "false", "0", "SUM", "true", "", ""),
    ]


def test_dup_rollup_keys_by_default_rule_and_by_duplicate_key(cur) -> None:
    cur.execute("CREATE TABLE d (user_id BIGINT, age INT, message VARCHAR(100), max_dwell_time DATETIME) "
                "DUPLICATE KEY(user_id, age) DISTRIBUTED BY HASH(user_id) BUCKETS 2 "
                "ROLLUP (r_age (age, user_id, message, max_dwell_time), r_msg (message, age) DUPLICATE KEY (message)) "
                "PROPERTIES ('replication_num' = '1')")
    rows = desc_all(cur, "d")
    keys = {}
    name = None
    for r in rows:
        name = r[0] or name
        if r[2]:
            keys.setdefault(name, []).append((r[2], r[6], r[8]))
    assert keys["r_age"] == [("age", "true", ""), ("user_id", "true", ""), ("message", "true", ""),
                             ("max_dwell_time", "false", "NONE")]
    assert keys["r_msg"] == [("message", "true", ""), ("age", "false", "NONE")]


# -- ALTER TABLE ... ADD ROLLUP as a job ------------------------------------------------------------------


def test_add_rollup_backfills_existing_data(server: ServerProcess, db: str, cur) -> None:
    cur.execute(SEED_DDL.format(name="t", rollup=""))
    cur.execute(f"INSERT INTO t VALUES {SEED_VALUES}")
    cur.execute(ADD_SEED_ROLLUPS.format(name="t"))  # a batch: two jobs, run one after the other
    jobs = wait_jobs(cur, "t")
    assert [(j["RollupIndexName"], j["State"], j["BaseIndexName"], j["Msg"]) for j in jobs] == [
        ("r_user_cost", "FINISHED", "t", ""), ("r_city_age", "FINISHED", "t", "")]
    job = jobs[0]
    assert job["FinishTime"] is not None and job["Progress"] is None and job["Timeout"] == "86400"
    assert int(job["TransactionId"]) > 0 and int(job["RollupId"]) > 0
    assert rollup_rows(server.storage, db, "t", "r_user_cost") == SEED_USER_COST
    assert rollup_rows(server.storage, db, "t", "r_city_age") == SEED_CITY_AGE
    assert [r[0] for r in desc_all(cur, "t") if r[0]] == ["t", "r_user_cost", "r_city_age"]

    # every later load writes the rollups in the same transaction
    cur.execute("INSERT INTO t VALUES (10000,'2017-10-09','2017-10-09 00:00:00','北京',20,0,"
                "'2017-10-09 00:00:00',5,50,1)")
    assert rollup_rows(server.storage, db, "t", "r_user_cost")[0] == (10000, 40)
    assert rollup_rows(server.storage, db, "t", "r_city_age")[1] == ("北京", 20, 40, 50, 1)


def test_add_rollup_from_another_rollup_and_timeout_property(server: ServerProcess, db: str, cur) -> None:
    cur.execute(SEED_DDL.format(name="t", rollup="ROLLUP (r_city_age (city, age, cost, max_dwell_time))"))
    cur.execute(f"INSERT INTO t VALUES {SEED_VALUES}")
    cur.execute("ALTER TABLE t ADD ROLLUP r_city (city, cost) FROM r_city_age PROPERTIES ('timeout' = '600')")
    [job] = wait_jobs(cur, "t")
    assert (job["State"], job["BaseIndexName"], job["Timeout"]) == ("FINISHED", "r_city_age", "600")
    # a rollup tablet holds the rows of the base tablet with its bucket (hash of user_id), so one city may
    # sit in two tablets; a query's aggregation adds them up
    totals: dict[str, int] = {}
    for city, cost in rollup_rows(server.storage, db, "t", "r_city"):
        totals[city] = totals.get(city, 0) + cost
    assert totals == {"上海": 200, "北京": 37, "广州": 30, "深圳": 111}


def test_loads_while_jobs_run_are_counted_once(server: ServerProcess, db: str, cur) -> None:
    """Loads race a real job on the scheduler thread; whatever phase each lands in, totals must agree."""
    cur.execute(SEED_DDL.format(name="t", rollup=""))
    cur.execute(f"INSERT INTO t VALUES {SEED_VALUES}")
    cur.execute("ALTER TABLE t ADD ROLLUP r_user_cost (user_id, cost)")
    extra = 0
    for i in range(12):
        cur.execute(f"INSERT INTO t VALUES (10000,'2017-10-1{i % 10}','2017-10-01 00:00:0{i % 10}','北京',20,0,"
                    f"'2017-10-01 00:00:00',{i + 1},1,1)")
        extra += i + 1
    wait_jobs(cur, "t")
    got = dict(rollup_rows(server.storage, db, "t", "r_user_cost"))
    assert got[10000] == 35 + extra
    cur.execute("SELECT user_id, SUM(cost) FROM t GROUP BY user_id ORDER BY user_id")
    assert [(int(u), int(c)) for u, c in cur.fetchall()] == sorted(got.items())


def test_spark_load_writes_the_rollups(server: ServerProcess, db: str, cur) -> None:
    pytest.importorskip("pyspark")
    cur.execute(SEED_DDL.format(name="src", rollup=""))
    cur.execute(f"INSERT INTO src VALUES {SEED_VALUES}")
    cur.execute(SEED_DDL.format(name="t", rollup=SEED_ROLLUPS))
    cur.execute("INSERT INTO t SELECT * FROM src")
    assert rollup_rows(server.storage, db, "t", "r_user_cost") == SEED_USER_COST
    assert rollup_rows(server.storage, db, "t", "r_city_age") == SEED_CITY_AGE


# -- DROP ROLLUP --------------------------------------------------------------------------------------------


def test_drop_rollup_removes_the_indexes_and_files(server: ServerProcess, db: str, cur) -> None:
    cur.execute(SEED_DDL.format(name="t", rollup=SEED_ROLLUPS))
    cur.execute(f"INSERT INTO t VALUES {SEED_VALUES}")
    engine = read_only_engine(server.storage)
    t = engine.catalog.get_table(db, "t")
    tablets = [tb.tablet_id for i in t.indexes[1:] for tb in engine.catalog.tablets(t.table_id, index_id=i.index_id)]
    engine.close()
    assert any((server.storage / "data" / str(tb)).exists() for tb in tablets)
    cur.execute("ALTER TABLE t DROP ROLLUP r_user_cost, r_city_age")
    assert [r[0] for r in desc_all(cur, "t") if r[0]] == ["t"]
    assert not any((server.storage / "data" / str(tb)).exists() for tb in tablets)
    cur.execute(f"INSERT INTO t VALUES {SEED_VALUES}")  # loads go on with the base only
    cur.execute("SELECT SUM(cost) FROM t")
    assert int(cur.fetchone()[0]) == 2 * 378


# -- errors -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("sql, message", [
    ("ALTER TABLE t ADD ROLLUP r (user_id, nope)", "Column[nope] does not exist"),
    ("ALTER TABLE t ADD ROLLUP r_user_cost (user_id, max_dwell_time)", "Rollup index[r_user_cost] already exists"),
    ("ALTER TABLE t ADD ROLLUP t (user_id, cost)", "Rollup index[t] already exists"),
    ("ALTER TABLE t ADD ROLLUP r1 (user_id, cost), r1 (city, cost)", "Rollup index[r1] already exists"),
    ("ALTER TABLE t ADD ROLLUP r (cost, user_id)", "Invalid column order. value should be after key"),
    ("ALTER TABLE t ADD ROLLUP r (cost)", "No key column is found"),
    ("ALTER TABLE t ADD ROLLUP r (user_id, last_visit_date)",
     "Rollup should contains all keys if there is a REPLACE value"),
    ("ALTER TABLE t ADD ROLLUP r (user_id, `date`, `timestamp`, city, age, sex, cost)",
     "Rollup contains all keys in base table with same order for aggregation or unique table is useless."),
    ("ALTER TABLE t ADD ROLLUP r (user_id, cost) FROM nope", "Base index[nope] does not exist"),
    ("ALTER TABLE t ADD ROLLUP r (user_id, cost) DUPLICATE KEY (user_id)",
     "DUPLICATE KEY can only be specified for a rollup of a DUP_KEYS table"),
    ("ALTER TABLE t DROP ROLLUP t", "Cannot drop base index by using DROP ROLLUP or DROP MATERIALIZED VIEW."),
    ("ALTER TABLE t DROP ROLLUP nope", "Materialized view [nope] does not exist in table [t]"),
    ("CANCEL ALTER TABLE ROLLUP FROM t", "Table[t] is not under ROLLUP. Use 'ALTER TABLE DROP ROLLUP' if you want to."),
])
def test_rollup_errors(cur, sql: str, message: str) -> None:
    cur.execute(SEED_DDL.format(name="t", rollup="ROLLUP (r_user_cost (user_id, cost))"))
    assert error_of(cur, sql) == f"errCode = 2, detailMessage = {message}"


@pytest.mark.parametrize("sql, message", [
    ("ROLLUP (r (age, user_id) DUPLICATE KEY (user_id))", "Duplicate keys should be the prefix of rollup columns"),
    ("ROLLUP (r (user_id, age))",
     "Rollup contain the columns of the base table in prefix order for duplicate table is useless."),
    ("ROLLUP (r (age, nope))", "Column[nope] does not exist in base index"),
])
def test_dup_rollup_errors(cur, sql: str, message: str) -> None:
    ddl = ("CREATE TABLE d (user_id BIGINT, age INT, message VARCHAR(100)) DUPLICATE KEY(user_id, age) "
           f"DISTRIBUTED BY HASH(user_id) BUCKETS 2 {sql} PROPERTIES ('replication_num' = '1')")
    assert error_of(cur, ddl) == f"errCode = 2, detailMessage = {message}"


def test_unique_rollup_needs_every_key(cur) -> None:
    cur.execute("CREATE TABLE u (k1 INT, k2 INT, v INT) UNIQUE KEY(k1, k2) DISTRIBUTED BY HASH(k1) BUCKETS 2 "
                "PROPERTIES ('replication_num' = '1')")
    assert error_of(cur, "ALTER TABLE u ADD ROLLUP r (k1, v)") == \
        "errCode = 2, detailMessage = Rollup should contains all unique keys in basetable"
    cur.execute("INSERT INTO u VALUES (1, 2, 3), (1, 2, 4), (2, 1, 5)")
    cur.execute("ALTER TABLE u ADD ROLLUP r (k2, k1, v)")
    assert wait_jobs(cur, "u")[0]["State"] == "FINISHED"


# -- paused scheduler: job states, CANCEL, one job per table, restarts ---------------------------------------


class ConfServer(ServerProcess):
    """A server started with its own conf folder (the ALTER job scheduler turned off): ServerProcess's `conf`."""


def _conf(folder: Path, scheduler: bool) -> Path:
    folder.mkdir(exist_ok=True)
    for name in ("fe.conf", "be.conf"):
        if (ROOT / "conf" / name).exists():
            shutil.copy(ROOT / "conf" / name, folder / name)
    with (folder / "fe.conf").open("a") as f:
        f.write(f"\nalter_job_scheduler_enable = {'true' if scheduler else 'false'}\n")
    return folder


@pytest.fixture
def paused(tmp_path: Path) -> Iterator[ConfServer]:
    srv = ConfServer(free_port(), tmp_path / "data")
    srv.conf = _conf(tmp_path / "paused", scheduler=False)
    srv.start()
    yield srv
    srv.stop()


def test_job_states_cancel_and_one_job_per_table(paused: ConfServer) -> None:
    with paused.connect() as conn, conn.cursor() as cur:
        cur.execute("CREATE DATABASE d1")
        cur.execute("USE d1")
        cur.execute(SEED_DDL.format(name="t", rollup=""))
        cur.execute(f"INSERT INTO t VALUES {SEED_VALUES}")
        cur.execute("ALTER TABLE t ADD ROLLUP r_user_cost (user_id, cost)")
        [job] = show_alter(cur, "d1")
        assert {k: job[k] for k in ("TableName", "BaseIndexName", "RollupIndexName", "TransactionId", "State",
                                    "Msg", "Progress", "FinishTime", "Timeout")} == {
            "TableName": "t", "BaseIndexName": "t", "RollupIndexName": "r_user_cost", "TransactionId": "-1",
            "State": "PENDING", "Msg": "", "Progress": None, "FinishTime": None, "Timeout": "86400"}
        not_normal = "errCode = 2, detailMessage = Table[t]'s state(ROLLUP) is not NORMAL. Do not allow doing ALTER ops"
        assert error_of(cur, "ALTER TABLE t ADD ROLLUP r2 (city, cost)") == not_normal
        assert error_of(cur, "ALTER TABLE t DROP ROLLUP r_user_cost") == not_normal
        assert [r[0] for r in desc_all(cur, "t") if r[0]] == ["t"]  # not visible before FINISHED
        cur.execute("CANCEL ALTER TABLE ROLLUP FROM d1.t")
        [job] = show_alter(cur)
        assert (job["State"], job["Msg"]) == ("CANCELLED", "user cancelled") and job["FinishTime"] is not None
        assert error_of(cur, "CANCEL ALTER TABLE ROLLUP FROM t").endswith("is not under ROLLUP. Use 'ALTER TABLE "
                                                                          "DROP ROLLUP' if you want to.")
        cur.execute("ALTER TABLE t ADD ROLLUP r_user_cost (user_id, cost)")  # the name is free again
        assert [j["State"] for j in show_alter(cur)] == ["CANCELLED", "PENDING"]


def test_unfinished_job_survives_a_restart_and_then_finishes(tmp_path: Path) -> None:
    srv = ConfServer(free_port(), tmp_path / "data")
    srv.conf = _conf(tmp_path / "paused", scheduler=False)
    srv.start()
    try:
        with srv.connect() as conn, conn.cursor() as cur:
            cur.execute("CREATE DATABASE d1")
            cur.execute("USE d1")
            cur.execute(SEED_DDL.format(name="t", rollup=""))
            cur.execute(f"INSERT INTO t VALUES {SEED_VALUES}")
            cur.execute(ADD_SEED_ROLLUPS.format(name="t"))
    finally:
        srv.stop()
    srv.conf = _conf(tmp_path / "running", scheduler=True)
    srv.start()
    try:
        with srv.connect("d1") as conn, conn.cursor() as cur:
            jobs = wait_jobs(cur, "t")
            assert [j["State"] for j in jobs] == ["FINISHED", "FINISHED"]
            assert rollup_rows(srv.storage, "d1", "t", "r_user_cost") == SEED_USER_COST
            assert rollup_rows(srv.storage, "d1", "t", "r_city_age") == SEED_CITY_AGE
    finally:
        srv.stop()
    srv.start()  # and the finished jobs are still listed after another restart
    try:
        with srv.connect("d1") as conn, conn.cursor() as cur:
            assert [j["State"] for j in show_alter(cur)] == ["FINISHED", "FINISHED"]
    finally:
        srv.stop()


def test_show_alter_table_rollup_columns_without_jobs(cur) -> None:
    assert show_alter(cur) == []
    cur.execute("SHOW ALTER TABLE MATERIALIZED VIEW")
    assert [d[0] for d in cur.description] == SHOW_COLUMNS

