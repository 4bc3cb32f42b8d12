"""Seed 004's worked examples, loaded in the seed's batches through the server, read back exactly."""

from __future__ import annotations

from datetime import date, datetime

AGG_DDL = """
CREATE TABLE IF NOT EXISTS example_tbl (
    `user_id` LARGEINT NOT NULL COMMENT "user id",
    `date` DATE NOT NULL COMMENT "load date",
    {extra}
    `city` VARCHAR(20) COMMENT "city",
    `age` SMALLINT COMMENT "age",
    `sex` TINYINT COMMENT "sex",
    `last_visit_date` DATETIME REPLACE DEFAULT "1970-01-01 00:00:00" COMMENT "last visit",
    `cost` BIGINT SUM DEFAULT "0" COMMENT "total cost",
    `max_dwell_time` INT MAX DEFAULT "0" COMMENT "max dwell",
    `min_dwell_time` INT MIN DEFAULT "99999" COMMENT "min dwell"
)
AGGREGATE KEY(`user_id`, `date`, {extra_key} `city`, `age`, `sex`)
DISTRIBUTED BY HASH(`user_id`) BUCKETS 1
PROPERTIES ("replication_allocation" = "tag.location.default: 1")
"""

BATCH_1 = [
    (10000, "2017-10-01", "北京", 20, 0, "2017-10-01 06:00:00", 20, 10, 10),
    (10000, "2017-10-01", "北京", 20, 0, "2017-10-01 07:00:00", 15, 2, 2),
    (10001, "2017-10-01", "北京", 30, 1, "2017-10-01 17:05:45", 2, 22, 22),
    (10002, "2017-10-02", "上海", 20, 1, "2017-10-02 12:59:12", 200, 5, 5),
    (10003, "2017-10-02", "广州", 32, 0, "2017-10-02 11:20:00", 30, 11, 11),
    (10004, "2017-10-01", "深圳", 35, 0, "2017-10-01 10:00:15", 100, 3, 3),
    (10004, "2017-10-03", "深圳", 35, 0, "2017-10-03 10:20:22", 11, 6, 6),
]
STORED_1 = [
    (10000, "2017-10-01", "北京", 20, 0, "2017-10-01 07:00:00", 35, 10, 2),
    (10001, "2017-10-01", "北京", 30, 1, "2017-10-01 17:05:45", 2, 22, 22),
    (10002, "2017-10-02", "上海", 20, 1, "2017-10-02 12:59:12", 200, 5, 5),
    (10003, "2017-10-02", "广州", 32, 0, "2017-10-02 11:20:00", 30, 11, 11),
    (10004, "2017-10-01", "深圳", 35, 0, "2017-10-01 10:00:15", 100, 3, 3),
    (10004, "2017-10-03", "深圳", 35, 0, "2017-10-03 10:20:22", 11, 6, 6),
]
BATCH_3 = [
    (10004, "2017-10-03", "深圳", 35, 0, "2017-10-03 11:22:00", 44, 19, 19),
    (10005, "2017-10-03", "长沙", 29, 1, "2017-10-03 18:11:02", 3, 1, 1),
]
STORED_3 = STORED_1[:5] + [
    (10004, "2017-10-03", "深圳", 35, 0, "2017-10-03 11:22:00", 55, 19, 6),
    (10005, "2017-10-03", "长沙", 29, 1, "2017-10-03 18:11:02", 3, 1, 1),
]


def _typed(row: tuple) -> tuple:
    """The Python values pymysql returns for a row of example_tbl."""
    out = list(row)
    for i, v in enumerate(out):
        if isinstance(v, str) and len(v) == 10 and v[4] == "-":
            out[i] = date.fromisoformat(v)
        elif isinstance(v, str) and len(v) == 19 and v[4] == "-":
            out[i] = datetime.fromisoformat(v)
    return tuple(out)


def _insert(cur, table: str, rows: list[tuple]) -> int:
    def literal(v: object) -> str:
        return "NULL" if v is None else f"'{v}'" if isinstance(v, str) else repr(v)

    values = ", ".join("(" + ", ".join(literal(v) for v in r) + ")" for r in rows)
    return cur.execute(f"INSERT INTO {table} VALUES {values}")


def test_aggregate_example_1_one_batch(cur) -> None:
    cur.execute(AGG_DDL.format(extra="", extra_key=""))
    assert _insert(cur, "example_tbl", BATCH_1) == 7
    cur.execute("SELECT * FROM example_tbl ORDER BY user_id, `date`")
    assert cur.fetchall() == tuple(_typed(r) for r in STORED_1)


def test_aggregate_example_2_keeps_detail_with_timestamp_key(cur) -> None:
    cur.execute(AGG_DDL.format(extra="`timestamp` DATETIME NOT NULL,", extra_key="`timestamp`,"))
    times = ["2017-10-01 08:00:05", "2017-10-01 09:00:05", "2017-10-01 18:12:10", "2017-10-02 13:10:00",
             "2017-10-02 13:15:00", "2017-10-01 12:12:48", "2017-10-03 12:38:20"]
    rows = [r[:2] + (ts,) + r[2:] for r, ts in zip(BATCH_1, times, strict=True)]
    _insert(cur, "example_tbl", rows)
    cur.execute("SELECT * FROM example_tbl ORDER BY user_id, `date`, `timestamp`")
    assert cur.fetchall() == tuple(_typed(r) for r in sorted(rows, key=lambda r: (r[0], r[1], r[2])))


def test_aggregate_example_3_second_batch_merges_with_stored(cur) -> None:
    cur.execute(AGG_DDL.format(extra="", extra_key=""))
    _insert(cur, "example_tbl", BATCH_1)
    _insert(cur, "example_tbl", BATCH_3)
    cur.execute("SELECT * FROM example_tbl ORDER BY user_id, `date`")
    assert cur.fetchall() == tuple(_typed(r) for r in STORED_3)
    cur.execute("SELECT count(*), sum(cost) FROM example_tbl")
    assert cur.fetchone() == (7, 35 + 2 + 200 + 30 + 100 + 55 + 3)


def test_unique_newest_row_wins(cur) -> None:
    cur.execute("""
        CREATE TABLE user_tbl (
            `user_id` BIGINT NOT NULL, `username` VARCHAR(50) NOT NULL,
            `city` VARCHAR(20), `age` SMALLINT, `sex` TINYINT, `phone` LARGEINT,
            `address` VARCHAR(500), `register_time` DATETIME
        ) UNIQUE KEY(`user_id`, `username`) DISTRIBUTED BY HASH(`user_id`) BUCKETS 3
        PROPERTIES ("replication_num" = "1")""")
    _insert(cur, "user_tbl", [(1, "a", "bj", 20, 0, 13800000000, "x", "2020-01-01 00:00:00"),
                              (2, "b", "sh", 30, 1, 13900000000, "y", "2020-01-02 00:00:00")])
    _insert(cur, "user_tbl", [(1, "a", "gz", 21, 0, 13800000001, "z", "2020-02-01 00:00:00")])
    cur.execute("SELECT user_id, city, age, phone FROM user_tbl ORDER BY user_id")
    assert cur.fetchall() == ((1, "gz", 21, 13800000001), (2, "sh", 30, 13900000000))
    # within one batch the later row wins too
    _insert(cur, "user_tbl", [(3, "c", "p", 1, 0, 1, "q", None), (3, "c", "r", 2, 0, 1, "q", None)])
    cur.execute("SELECT city, age FROM user_tbl WHERE user_id = 3")
    assert cur.fetchall() == (("r", 2),)


def test_duplicate_keeps_every_row(cur) -> None:
    cur.execute("""
        CREATE TABLE log_tbl (
            `timestamp` DATETIME NOT NULL, `type` INT NOT NULL, `error_code` INT,
            `error_msg` VARCHAR(1024), `op_id` BIGINT, `op_time` DATETIME
        ) DUPLICATE KEY(`timestamp`, `type`, `error_code`) DISTRIBUTED BY HASH(`type`) BUCKETS 2
        PROPERTIES ("replication_num" = "1")""")
    row = ("2017-10-01 08:00:05", 1, 404, "not found", 7, "2017-10-01 08:00:06")
    _insert(cur, "log_tbl", [row, row])
    _insert(cur, "log_tbl", [row])
    cur.execute("SELECT count(*) FROM log_tbl")
    assert cur.fetchone() == (3,)
    cur.execute("SELECT * FROM log_tbl LIMIT 1")
    assert cur.fetchone() == _typed(row)


def test_aggregate_table_distributed_at_random_merges_across_tablets(cur) -> None:
    # loads land in random buckets: equal keys sit in several tablets and still read as one row
    cur.execute("CREATE TABLE agg_rnd (k INT, v BIGINT SUM, m INT MAX) AGGREGATE KEY(k) "
                "DISTRIBUTED BY RANDOM BUCKETS 4 PROPERTIES ('replication_num' = '1')")
    for i in range(1, 9):
        cur.execute(f"INSERT INTO agg_rnd VALUES (1, 1, {i}), (2, 10, {i})")
    cur.execute("SHOW TABLETS FROM agg_rnd")
    assert sum(1 for r in cur.fetchall() if int(r[10]) > 0) > 1  # RowCount: the rows are spread
    cur.execute("SELECT * FROM agg_rnd ORDER BY k")
    assert cur.fetchall() == ((1, 8, 8), (2, 80, 8))
    cur.execute("SELECT count(*) FROM agg_rnd")
    assert cur.fetchall() == ((2,),)
    cur.execute("SELECT k FROM agg_rnd WHERE v = 8")  # a value predicate sees the merged value
    assert cur.fetchall() == ((1,),)
