"""Dynamic partitions and BUCKETS AUTO end to end: CREATE TABLE's first pass, the scheduler walking through
simulated days (fe.conf dynamic_partition_debug_current_time through ADMIN SET FRONTEND CONFIG), SHOW
PARTITIONS / SHOW DYNAMIC PARTITION TABLES, switching to manual, and the property errors."""

from __future__ import annotations

import pymysql
import pytest

from storage.partition_policy.dynamic_partition import SHOW_DYNAMIC_PARTITION_TABLES_COLUMNS
from tests.conftest import ServerProcess

DDL = """
CREATE TABLE events (dt DATE NOT NULL, id INT NOT NULL, v BIGINT)
DUPLICATE KEY(dt, id)
PARTITION BY RANGE(dt) ()
DISTRIBUTED BY HASH(id) BUCKETS AUTO
PROPERTIES (
    "replication_num" = "1",
    "dynamic_partition.enable" = "true",
    "dynamic_partition.time_unit" = "DAY",
    "dynamic_partition.start" = "-3",
    "dynamic_partition.end" = "2",
    "dynamic_partition.prefix" = "p",
    "dynamic_partition.create_history_partition" = "true"
)
"""


def _partitions(cur) -> dict[str, dict]:
    cur.execute("SHOW PARTITIONS FROM events")
    names = [d[0] for d in cur.description]
    return {row[1]: dict(zip(names, row, strict=True)) for row in cur.fetchall()}


def _set_clock(cur, text: str) -> None:
    cur.execute(f'ADMIN SET FRONTEND CONFIG ("dynamic_partition_debug_current_time" = "{text}")')


@pytest.fixture
def dcur(fresh_server: ServerProcess):
    conn = fresh_server.connect()
    with conn.cursor() as cur:
        cur.execute("CREATE DATABASE d")
        cur.execute("USE d")
        _set_clock(cur, "2020-05-29 12:00:00")
        yield cur
    conn.close()


def test_days_go_by_through_the_scheduler(dcur):
    cur = dcur
    cur.execute(DDL)
    # the first pass ran inside CREATE TABLE: three days of history, today, two days ahead
    parts = _partitions(cur)
    assert list(parts) == [f"p202005{d}" for d in range(26, 32)]
    assert parts["p20200529"]["Range"] == (
        "[types: [DATEV2]; keys: [2020-05-29]; ..types: [DATEV2]; keys: [2020-05-30]; )")
    assert {p["Buckets"] for p in parts.values()} == {"10"}  # BUCKETS AUTO without history or estimate: 10
    assert {p["VisibleVersion"] for p in parts.values()} == {"1"}

    # loads: each INSERT is one version of the partitions it touches
    for day, loads in ((26, 1), (27, 2), (28, 3), (29, 1)):
        for i in range(loads):
            values = ", ".join(f"('2020-05-{day}', {i * 100 + j}, {j})" for j in range(50 * day))
            cur.execute(f"INSERT INTO events VALUES {values}")
    parts = _partitions(cur)
    assert [parts[f"p202005{d}"]["VisibleVersion"] for d in (26, 27, 28, 29, 30)] == ["2", "3", "4", "2", "1"]
    assert parts["p20200528"]["DataSize"] != "0.000 "

    # a day later: p20200601 is created ahead, p20200526 falls out of the window [-3, 2]
    _set_clock(cur, "2020-05-30 12:00:00")
    parts = _partitions(cur)  # the pass ran inside ADMIN SET FRONTEND CONFIG
    assert list(parts) == ["p20200527", "p20200528", "p20200529", "p20200530", "p20200531", "p20200601"]
    # BUCKETS AUTO from history: the earlier partitions hold a few KB, so the seed's rule gives N = 1
    assert parts["p20200601"]["Buckets"] == "1"
    assert parts["p20200527"]["Buckets"] == "10"
    cur.execute("SELECT count(*) FROM events")
    assert cur.fetchone()[0] == 50 * (27 * 2 + 28 * 3 + 29)  # the dropped day's rows went with it

    cur.execute("SHOW DYNAMIC PARTITION TABLES")
    assert [d[0] for d in cur.description] == list(SHOW_DYNAMIC_PARTITION_TABLES_COLUMNS)
    row = dict(zip(SHOW_DYNAMIC_PARTITION_TABLES_COLUMNS, cur.fetchone(), strict=True))
    assert (row["TableName"], row["Enable"], row["TimeUnit"], row["Start"], row["End"], row["Prefix"]) == (
        "events", "true", "DAY", "-3", "2", "p")
    assert row["State"] == "NORMAL" and row["LastSchedulerTime"] is not None
    cur.execute("SHOW DYNAMIC PARTITION TABLES WHERE TableName = 'other'")
    assert cur.fetchall() == ()
    cur.execute("SHOW DYNAMIC PARTITION TABLES WHERE TimeUnit = 'DAY'")
    assert [r[0] for r in cur.fetchall()] == ["events"]


def test_manual_partitions_only_after_switching_dynamic_off(dcur):
    cur = dcur
    cur.execute(DDL)
    add = "ALTER TABLE events ADD PARTITION p_old VALUES [('2019-01-01'), ('2019-01-02'))"
    with pytest.raises(pymysql.err.OperationalError) as err:
        cur.execute(add)
    assert "dynamic_partition.enable" in err.value.args[1]
    cur.execute('ALTER TABLE events SET ("dynamic_partition.enable" = "false")')
    cur.execute(add)
    assert "p_old" in _partitions(cur)
    cur.execute("SHOW DYNAMIC PARTITION TABLES")
    assert cur.fetchone()[1] == "false"
    cur.execute("SHOW CREATE TABLE events")
    assert '"dynamic_partition.enable" = "false"' in cur.fetchone()[1]


@pytest.mark.parametrize("key,value,message", [
    ("dynamic_partition.time_unit", "MINUTE", "Unsupported time unit MINUTE. Expect HOUR/DAY/WEEK/MONTH/YEAR."),
    ("dynamic_partition.end", "-1", "end"),
    ("dynamic_partition.start_day_of_week", "9", "start_day_of_week"),
    ("dynamic_partition.time_zone", "Mars/Olympus", "time zone"),
])
def test_property_errors(dcur, key: str, value: str, message: str):
    ddl = DDL.replace('"dynamic_partition.prefix" = "p",', f'"dynamic_partition.prefix" = "p", "{key}" = "{value}",')
    with pytest.raises(pymysql.err.MySQLError) as err:
        dcur.execute(ddl)
    assert message in err.value.args[1]
    dcur.execute("SHOW TABLES")
    assert dcur.fetchall() == ()  # nothing half-created
