"""Doris's sequence_match / sequence_count, count_by_enum and collect_list / collect_set's max_size through the
server, with the answers Doris's documentation and regression tests give.

Each query runs over the table alone (the Arrow aggregate over the scan) and under a join with a one-row table
(DuckDB runs the join, the aggregate falls back to the Arrow operators above it); both must give Doris's
answer."""

from __future__ import annotations

import datetime
import json

import pymysql
import pytest

PROPS = "DISTRIBUTED BY HASH({k}) BUCKETS 1 PROPERTIES ('replication_num' = '1')"
ONE = "JOIN one ON one.j <= 1"


def _table(cur, name: str, rows: list[tuple[int, str | None, int | None]]) -> None:
    cur.execute(f"CREATE TABLE {name} (uid INT, `date` DATETIME, number INT NULL) DUPLICATE KEY(uid) "
                f"{PROPS.format(k='uid')}")
    values = ", ".join(f"({u}, {'NULL' if d is None else repr(d)}, {'NULL' if n is None else n})" for u, d, n in rows)
    cur.execute(f"INSERT INTO {name} VALUES {values}")


# Doris's documentation: sequence_match_test1 / sequence_count_test1 ("match examples") and _test2 / _test3
MATCHING = [(1, "2022-11-02 10:41:00", 1), (2, "2022-11-02 13:28:02", 2), (3, "2022-11-02 16:15:01", 1),
            (4, "2022-11-02 19:05:04", 2), (5, "2022-11-02 20:08:44", 3)]
NOT_MATCHING = [(1, "2022-11-02 10:41:00", 1), (2, "2022-11-02 11:41:00", 7), (3, "2022-11-02 16:15:01", 3),
                (4, "2022-11-02 19:05:04", 4), (5, "2022-11-02 21:24:12", 5)]


@pytest.fixture
def docs(cur) -> None:
    _table(cur, "test1", MATCHING)
    _table(cur, "test2", NOT_MATCHING)
    _table(cur, "test3", list(reversed(MATCHING)))  # Doris's regression test "reverse": the rows inserted backwards
    cur.execute(f"CREATE TABLE one (j INT) DUPLICATE KEY(j) {PROPS.format(k='j')}")
    cur.execute("INSERT INTO one VALUES (1)")


def both(cur, select: str, table: str, rest: str = "") -> list[tuple]:
    """`SELECT select FROM table rest` over the scan and under a join: the same rows."""
    cur.execute(f"SELECT {select} FROM {table} {rest}")
    scan = list(cur.fetchall())
    cur.execute(f"SELECT {select} FROM {table} {ONE} {rest}")
    joined = list(cur.fetchall())
    assert scan == joined, (scan, joined)
    return scan


DOC_EXAMPLES = [
    # (table, pattern, conditions, sequence_match, sequence_count)
    ("test1", "(?1)(?2)", "number = 1, number = 3", 1, 1),
    ("test1", "(?1)(?2)", "number = 1, number = 2", 1, 2),
    ("test1", "(?1)(?t>=3600)(?2)", "number = 1, number = 2", 1, 2),
    ("test2", "(?1)(?2)", "number = 1, number = 2", 0, 0),
    ("test2", "(?1)(?2).*", "number = 1, number = 2", 0, 0),
    ("test2", "(?1)(?t>3600)(?2)", "number = 1, number = 7", 0, 0),  # exactly 3600 s apart
    ("test2", "(?1)(?t>=3600)(?2)", "number = 1, number = 7", 1, 1),
    ("test2", "(?1)(?2)", "number = 1, number = 5", 1, 1),  # 7, 3, 4 are no events: skipped
    ("test2", "(?1)(?2)", "number = 1, number = 5, number = 4", 0, 0),  # 4 is an event between 1 and 5
    ("test2", "(?1)(?2)", "number = 1, number = 5, number = 6", 1, 1),
    ("test2", "(?1)(?2)", "number = 1, number = 4, number = 3", 0, 0),
    ("test3", "(?1)(?2)", "number = 1, number = 3", 1, 1),  # events are ordered by time, not by insertion
    ("test3", "(?1)(?2)", "number = 1, number = 2", 1, 2),
    ("test3", "(?1)(?2)", "number = 1, number = 3, number = 4", 1, 1),
]


@pytest.mark.parametrize(("table", "pattern", "conditions", "matched", "count"), DOC_EXAMPLES)
def test_documented_examples(cur, docs, table: str, pattern: str, conditions: str, matched: int, count: int) -> None:
    rows = both(cur, f"sequence_match('{pattern}', date, {conditions}), "
                     f"sequence_count('{pattern}', date, {conditions})", table)
    assert rows == [(matched, count)]


def test_result_types_and_labels(cur, docs) -> None:
    cur.execute("SELECT sequence_match('(?1)(?2)', date, number = 1, number = 3) AS m, "
                "sequence_count('(?1)(?2)', date, number = 1, number = 3), count_by_enum(number) FROM test1")
    assert [d[1] for d in cur.description] == [pymysql.constants.FIELD_TYPE.TINY,  # BOOLEAN
                                               pymysql.constants.FIELD_TYPE.LONGLONG,  # BIGINT
                                               pymysql.constants.FIELD_TYPE.VAR_STRING]
    assert [d[0] for d in cur.description][1:] == [
        "sequence_count('(?1)(?2)', date, (number = 1), (number = 3))", "count_by_enum(number)"]


@pytest.fixture
def events(cur) -> None:
    cur.execute(f"CREATE TABLE ev (uid INT, ts DATETIME, e VARCHAR(10)) DUPLICATE KEY(uid) {PROPS.format(k='uid')}")
    cur.execute("""INSERT INTO ev VALUES
        (1, '2024-01-01 10:00:00', 'view'), (1, '2024-01-01 10:05:00', 'cart'), (1, '2024-01-01 10:20:00', 'buy'),
        (1, '2024-01-01 11:00:00', 'view'), (1, '2024-01-01 11:10:00', 'buy'),
        (2, '2024-01-01 09:00:00', 'buy'), (2, '2024-01-01 09:30:00', 'view'), (2, NULL, 'cart'),
        (2, '2024-01-01 12:00:00', NULL),
        (3, NULL, 'view'), (3, NULL, 'buy'),
        (4, '2024-01-01 10:00:00', 'other')""")
    cur.execute(f"CREATE TABLE one (j INT) DUPLICATE KEY(j) {PROPS.format(k='j')}")
    cur.execute("INSERT INTO one VALUES (1)")


VB = "ts, e = 'view', e = 'buy'"
VBC = "ts, e = 'view', e = 'buy', e = 'cart'"
GROUPED = [
    # a row with a NULL argument is skipped; a group with no other row (uid 3) is NULL, one without events 0
    (f"sequence_match('(?1)(?2)', {VB})", [1, 0, None, 0]),
    (f"sequence_count('(?1)(?2)', {VB})", [2, 0, None, 0]),
    (f"sequence_count('(?1)(?2)', {VBC})", [1, 0, None, 0]),  # 'cart' is an event now: it parts view and buy
    (f"sequence_count('(?1).*(?2)', {VBC})", [2, 0, None, 0]),
    (f"sequence_count('(?1).(?2)', {VBC})", [1, 0, None, 0]),
    (f"sequence_match('(?2)(?1)', {VB})", [1, 1, None, 0]),
    (f"sequence_match('(?1)(?t<=900)(?2)', {VB})", [1, 0, None, 0]),
    (f"sequence_count('(?1)(?t<=900)(?2)', {VB})", [1, 0, None, 0]),
    (f"sequence_count('(?1)(?t<=1200)(?2)', {VB})", [2, 0, None, 0]),
    (f"sequence_match('(?1)(?t>3600)(?2)', {VB})", [1, 0, None, 0]),  # view 10:00 -> buy 11:10
    (f"sequence_count('(?1)(?t>3600)(?2)', {VB})", [1, 0, None, 0]),
    (f"sequence_match('(?1)(?t==600)(?2)', {VB})", [1, 0, None, 0]),
    (f"sequence_match('(?1)(?t<600)(?2)', {VB})", [0, 0, None, 0]),
    (f"sequence_match('(?2)(?t>=1800)(?1)', {VB})", [1, 1, None, 0]),
    (f"sequence_match('(?3)', {VBC})", [1, 0, None, 0]),  # uid 2's cart has no time: skipped
    (f"sequence_match('.*', {VB})", [0, 0, None, 0]),  # a pattern naming no condition never matches
    ("sequence_match('(?1)(?2)', ts, e = 'view', e IS NULL)", [0, 0, None, 0]),
]


@pytest.mark.parametrize(("expr", "expected"), GROUPED)
def test_grouped_with_nulls(cur, events, expr: str, expected: list) -> None:
    rows = both(cur, f"uid, {expr}", "ev", "GROUP BY uid ORDER BY uid")
    assert [r[1] for r in rows] == expected


def test_timestamp_kinds(cur) -> None:
    cur.execute(f"CREATE TABLE d (k INT, d DATE, t DATETIME(3), e INT) DUPLICATE KEY(k) {PROPS.format(k='k')}")
    cur.execute("INSERT INTO d VALUES (1, '2024-01-01', '2024-01-01 00:00:00.900', 1), "
                "(2, '2024-01-03', '2024-01-01 00:00:01.100', 2)")
    cur.execute("SELECT sequence_match('(?1)(?t>=172800)(?2)', d, e = 1, e = 2), "
                "sequence_match('(?1)(?t>172800)(?2)', d, e = 1, e = 2), "
                # Doris compares whole seconds: .900 -> 1.100 is 1 second apart
                "sequence_match('(?1)(?t==1)(?2)', t, e = 1, e = 2) FROM d")
    assert cur.fetchall() == ((1, 0, 1),)


def test_empty_input(cur, events) -> None:
    for source in ("ev", f"ev {ONE}"):
        cur.execute(f"SELECT sequence_match('(?1)', ts, e = 'x'), sequence_count('(?1)', ts, e = 'x'), "
                    f"count_by_enum(e), collect_list(e, 2), collect_set(e, 1) FROM {source} WHERE uid > 10")
        assert cur.fetchall() == ((None, None, "[]", "[]", "[]"),)
        cur.execute(f"SELECT uid, sequence_count('(?1)', ts, e = 'x') FROM {source} WHERE uid > 10 GROUP BY uid")
        assert cur.fetchall() == ()


def test_long_group(cur) -> None:
    """Groups of thousands of events: the matchers are linear in them."""
    cur.execute(f"CREATE TABLE big (k INT, ts DATETIME, e INT) DUPLICATE KEY(k) {PROPS.format(k='k')}")
    start = datetime.datetime(2024, 1, 1)
    cur.execute("INSERT INTO big VALUES " + ", ".join(
        f"({n % 2}, '{start + datetime.timedelta(seconds=n)}', {n % 3})" for n in range(6000)))
    cur.execute("SELECT k, sequence_count('(?1)(?2)', ts, e = 0, e = 1), "
                "sequence_match('(?1)(?2)(?3)', ts, e = 0, e = 1, e = 2), "
                "sequence_count('(?1)(?3)(?2)', ts, e = 0, e = 1, e = 2), "
                "sequence_count('(?1)(?t<=5)(?3)', ts, e = 0, e = 1, e = 2) FROM big GROUP BY k ORDER BY k")
    # k = 0 (n = 0, 2, 4 ...): e cycles 0, 2, 1, two seconds apart; k = 1: e cycles 1, 0, 2
    assert cur.fetchall() == ((0, 1000, 0, 1000, 1000), (1, 999, 0, 999, 1000))


ERRORS = [
    ("sequence_match('(?1)(?2', date, number = 1, number = 3)",
     "The format of pattern params is wrong: sequence_match('(?1)(?2', date, (number = 1), (number = 3))"),
    ("sequence_count('(?1)(?t=3600)(?2)', date, number = 1, number = 3)", "The format of pattern params is wrong"),
    ("sequence_match('(?1) (?2)', date, number = 1, number = 3)", "The format of pattern params is wrong"),
    ("sequence_match('(?1)(?t>1)(?t<5)(?2)', date, number = 1, number = 3)", "a time condition must follow an event"),
    ("sequence_match('(?1)(?3)', date, number = 1, number = 3)",
     "Event number 3 is out of range, valid range is [1, 2]"),
    ("sequence_match('(?0)', date, number = 1)", "Event number 0 is out of range, valid range is [1, 1]"),
    ("sequence_match(number, date, number = 1)",
     "The pattern param `number` of sequence_match function must be string literal, but it is SlotReference"),
    ("sequence_match('(?1)', date)", "Can not found function 'sequence_match' which has 2 arity"),
    ("sequence_count()", "Can not found function 'sequence_count' which has 0 arity"),
    ("sequence_match('(?1)', uid, number = 1)",
     "The timestamp params of sequence_match function must be DATE or DATETIME, but it is INT"),
    ("sequence_count('(?1)', '2022-11-02 10:41:00', number = 1)",
     "The timestamp params of sequence_count function must be DATE or DATETIME"),
    ("sequence_match('(?1)', date, number)",
     "The 3th and subsequent params of sequence_match function must be boolean, but param 3 is INT"),
    ("sequence_match('(?1)', date, number = 1, 'x')", "must be boolean, but param 4 is VARCHAR"),
    ("sequence_match('(?1)', date, " + ", ".join(["number = 1"] * 33) + ")",
     "Aggregate function sequence_match supports up to 32 event arguments."),
    ("sequence_match(DISTINCT '(?1)', date, number = 1)", "sequence_match(DISTINCT ...) is not supported"),
    ("count_by_enum()", "Can not found function 'count_by_enum' which has 0 arity"),
    ("array_agg(number, 2)", "Can not found function 'array_agg' which has 2 arity"),
    ("collect_list(number, uid)", "The max_size argument of collect_list must be a constant integer"),
    ("collect_set(number, 'abc')", "The max_size argument of collect_set must be a constant integer"),
]


@pytest.mark.parametrize(("expr", "message"), ERRORS)
def test_errors(cur, docs, expr: str, message: str) -> None:
    for source in ("test1", f"test1 {ONE}"):
        with pytest.raises(pymysql.MySQLError) as err:
            cur.execute(f"SELECT {expr} FROM {source}")
        assert message in err.value.args[1], err.value.args


# -- count_by_enum -------------------------------------------------------------------------------------------


@pytest.fixture
def enums(cur) -> None:
    # Doris's documentation and regression test (count_by_enum_test), one bucket so the scan order is the keys'
    cur.execute("CREATE TABLE cbe (id VARCHAR(1024) NULL, f1 TEXT REPLACE_IF_NOT_NULL NULL, "
                "f2 TEXT REPLACE_IF_NOT_NULL NULL, f3 TEXT REPLACE_IF_NOT_NULL NULL) AGGREGATE KEY(id) "
                f"{PROPS.format(k='id')}")
    cur.execute("INSERT INTO cbe VALUES (1, 'F', '10', 'China'), (2, 'F', '20', 'China'), "
                "(3, 'M', NULL, 'United States'), (4, 'M', NULL, 'United States'), (5, 'M', NULL, 'England')")
    cur.execute(f"CREATE TABLE one (j INT) DUPLICATE KEY(j) {PROPS.format(k='j')}")
    cur.execute("INSERT INTO one VALUES (1)")


def test_count_by_enum_documented(cur, enums) -> None:
    cur.execute("SELECT count_by_enum(f1), count_by_enum(f2), count_by_enum(f1, f2, f3) FROM cbe")
    f1, f2, f123 = cur.fetchone()
    # the values each argument took, the latest first seen first (Doris's hash map over a few values)
    assert f1 == '[{"cbe":{"M":3,"F":2},"notnull":5,"null":0,"all":5}]'
    assert f2 == '[{"cbe":{"20":1,"10":1},"notnull":2,"null":3,"all":5}]'
    assert f123 == ('[{"cbe":{"M":3,"F":2},"notnull":5,"null":0,"all":5},'
                    '{"cbe":{"20":1,"10":1},"notnull":2,"null":3,"all":5},'
                    '{"cbe":{"England":1,"United States":2,"China":2},"notnull":5,"null":0,"all":5}]')
    cur.execute(f"SELECT count_by_enum(f1, f2, f3) FROM cbe {ONE}")  # the join's row order is DuckDB's
    assert json.loads(cur.fetchone()[0]) == json.loads(f123)


def test_count_by_enum_grouped(cur, enums) -> None:
    rows = both(cur, "id, count_by_enum(f2, f1)", "cbe", "GROUP BY id ORDER BY id")
    assert rows == [
        ("1", '[{"cbe":{"10":1},"notnull":1,"null":0,"all":1},{"cbe":{"F":1},"notnull":1,"null":0,"all":1}]'),
        ("2", '[{"cbe":{"20":1},"notnull":1,"null":0,"all":1},{"cbe":{"F":1},"notnull":1,"null":0,"all":1}]'),
        ("3", '[{"cbe":{},"notnull":0,"null":1,"all":1},{"cbe":{"M":1},"notnull":1,"null":0,"all":1}]'),
        ("4", '[{"cbe":{},"notnull":0,"null":1,"all":1},{"cbe":{"M":1},"notnull":1,"null":0,"all":1}]'),
        ("5", '[{"cbe":{},"notnull":0,"null":1,"all":1},{"cbe":{"M":1},"notnull":1,"null":0,"all":1}]'),
    ]
    rows = both(cur, "f1, count_by_enum(f3)", "cbe", "GROUP BY f1 ORDER BY f1")
    assert [(f, json.loads(j)) for f, j in rows] == [
        ("F", [{"cbe": {"China": 2}, "notnull": 2, "null": 0, "all": 2}]),
        ("M", [{"cbe": {"United States": 2, "England": 1}, "notnull": 3, "null": 0, "all": 3}]),
    ]


def test_count_by_enum_text_of_other_types_and_escapes(cur) -> None:
    cur.execute(f"CREATE TABLE x (k INT, n INT, d DATE, s VARCHAR(20)) DUPLICATE KEY(k) {PROPS.format(k='k')}")
    cur.execute("INSERT INTO x VALUES (1, 7, '2024-01-02', 'a\"b'), (2, 7, NULL, 'c\\\\d'), (3, NULL, NULL, 'e\\tf')")
    cur.execute("SELECT count_by_enum(n, d, s) FROM x")
    assert cur.fetchone()[0] == ('[{"cbe":{"7":2},"notnull":2,"null":1,"all":3},'
                                 '{"cbe":{"2024-01-02":1},"notnull":1,"null":2,"all":3},'
                                 '{"cbe":{"e\\tf":1,"c\\\\d":1,"a\\"b":1},"notnull":3,"null":0,"all":3}]')


# -- collect_list / collect_set (x, max_size) --------------------------------------------------------------


@pytest.fixture
def collect(cur) -> None:
    # Doris's documentation's collect_list_test
    cur.execute(f"CREATE TABLE c (k1 INT, k2 DATE, k3 VARCHAR(10)) DUPLICATE KEY(k1) {PROPS.format(k='k1')}")
    cur.execute("INSERT INTO c VALUES (1, '2023-01-01', 'hello'), (2, '2023-01-02', NULL), (2, '2023-01-02', 'hello'), "
                "(3, NULL, 'world'), (3, '2023-01-02', 'hello'), (4, '2023-01-02', 'sql'), (4, '2023-01-03', 'sql')")
    cur.execute(f"CREATE TABLE one (j INT) DUPLICATE KEY(j) {PROPS.format(k='j')}")
    cur.execute("INSERT INTO one VALUES (1)")


def test_collect_max_size_documented(cur, collect) -> None:
    cur.execute("SELECT collect_list(k1), collect_list(k1, 3), collect_set(k1, 2 ORDER BY k1) FROM c")
    assert cur.fetchall() == (("[1, 2, 2, 3, 3, 4, 4]", "[1, 2, 2]", "[1, 2]"),)
    # max_size applies after an ORDER BY inside (written after max_size, as group_concat's after its separator)
    rows = both(cur, "k1, collect_list(k2 ORDER BY k2), collect_list(k3, 1 ORDER BY k3 DESC), "
                     "collect_set(k2, 1 ORDER BY k2), group_array(k3, 0), group_uniq_array(k3, -1 ORDER BY k3)",
                "c", "GROUP BY k1 ORDER BY k1")
    assert rows == [
        (1, '["2023-01-01"]', '["hello"]', '["2023-01-01"]', "[]", '["hello"]'),
        (2, '["2023-01-02", "2023-01-02"]', '["hello"]', '["2023-01-02"]', "[]", '["hello"]'),
        (3, '["2023-01-02"]', '["world"]', '["2023-01-02"]', "[]", '["hello", "world"]'),
        (4, '["2023-01-02", "2023-01-03"]', '["sql"]', '["2023-01-02"]', "[]", '["sql"]'),
    ]


def test_collect_max_size_bounds(cur, collect) -> None:
    # a negative max_size is no limit (Doris compares it unsigned), NULL skips every row, text is cast to INT
    rows = both(cur, "collect_list(k1, 2 ORDER BY k1 DESC), collect_set(k3, 5 ORDER BY k3), collect_list(k1, NULL), "
                     "collect_list(k1, -3 ORDER BY k1), collect_list(k1, '4' ORDER BY k1)", "c")
    assert rows == [("[4, 4]", '["hello", "sql", "world"]', "[]", "[1, 2, 2, 3, 3, 4, 4]", "[1, 2, 2, 3]")]
