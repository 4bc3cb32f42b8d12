"""Point queries that differ only in their literals share one plan (planner/plan_template.py): each answer and
each value-dependent decision (partitions, buckets, tablets, rollup) is what planning that text afresh gives,
and a text whose literals play any other part in the plan gets no template."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pyarrow as pa
import pytest
import sqlglot

from planner.bind.bind_select import BoundQuery
from planner.logical import LogicalScan
from planner.olap_source import OlapTableSource
from planner.plan_cache import PlanCache, StatementKey
from planner.query import execute_cached, execute_query, plan_query
from tests.planner.rollup_harness import Harness

MODE = "ONLY_FULL_GROUP_BY"


@pytest.fixture
def h(tmp_path) -> Iterator[Harness]:  # noqa: ANN001
    harness = Harness(tmp_path / "storage")
    harness.create("CREATE TABLE t (k BIGINT, s VARCHAR(20), c CHAR(4), d DATE, v INT, w TINYINT) "
                   "DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 4 PROPERTIES ('replication_num' = '1')")
    harness.load("t", [(i, f"s{i}", f"c{i % 10}", None, i * 10, i % 100) for i in range(400)])
    yield harness
    harness.close()


def run(h: Harness, cache: PlanCache, sql: str) -> pa.Table:
    """As the server runs a statement: its cached plan or its template's if valid, else plan it (and keep it)."""
    key = StatementKey(sql, MODE)
    out = execute_cached(key, h.ctx(), cache)
    if out is None:
        out = execute_query(sqlglot.parse_one(sql, read="doris"), h.ctx(), cache, key)
    return out


def fresh(h: Harness, sql: str) -> pa.Table:
    return execute_query(sqlglot.parse_one(sql, read="doris"), h.ctx())


def decisions(bound: BoundQuery) -> tuple:
    (scan,) = [n for n in bound.plan.walk() if isinstance(n, LogicalScan)]
    source = scan.source
    assert isinstance(source, OlapTableSource)
    return (source.partition_ids, source.buckets, source.tablet_ids, source.index_id,
            source.preaggregation, scan.predicates)


def cached_plan(h: Harness, cache: PlanCache, sql: str) -> BoundQuery:
    bound = cache.lookup(StatementKey(sql, MODE), h.ctx())
    assert bound is not None, f"no template serves {sql}"
    return bound


def test_lookups_of_other_keys_share_the_plan_and_answer_as_planned_afresh(h: Harness) -> None:
    cache = PlanCache(lambda: h.engine.catalog.schema_generation)
    rng = random.Random(3)
    for key in [7] + [rng.randrange(-50, 450) for _ in range(40)]:
        sql = f"SELECT k, s, v FROM t WHERE k = {abs(key)}"
        assert run(h, cache, sql).equals(fresh(h, sql)), sql
        assert decisions(cached_plan(h, cache, sql)) == decisions(plan_query(sqlglot.parse_one(sql), h.ctx()))
    assert cache.misses == 2  # k = 7 (a TINYINT literal) and the first SMALLINT-sized key: a template each
    assert len(cache) == 2 and cache.template_hits >= 38
    assert run(h, cache, "SELECT k, s, v FROM t WHERE k = 123").to_pylist() == [{"k": 123, "s": "s123", "v": 1230}]


def test_buckets_are_chosen_again_for_each_value(h: Harness) -> None:
    cache = PlanCache(lambda: h.engine.catalog.schema_generation)
    run(h, cache, "SELECT k, v FROM t WHERE k = 1")
    chosen = {decisions(cached_plan(h, cache, f"SELECT k, v FROM t WHERE k = {k}"))[1][next(iter(h.table("t").partitions)).partition_id]
              for k in range(1, 100)}
    assert len(chosen) == 4  # every bucket is some key's, one bucket each
    assert all(len(b) == 1 for b in chosen)


def test_strings_and_several_literals(h: Harness) -> None:
    cache = PlanCache(lambda: h.engine.catalog.schema_generation)
    for k, s in [(5, "s5"), (6, "s6"), (7, "s8"), (9, "é ? --"), (300, "s300")]:
        sql = f"SELECT k, v FROM t WHERE s = '{s}' AND k = {k}"
        assert run(h, cache, sql).equals(fresh(h, sql)), sql
    assert run(h, cache, "SELECT k, v FROM t WHERE s = 's6' AND k = 6").to_pylist() == [{"k": 6, "v": 60}]
    assert cache.template_hits == 4 and cache.misses == 2  # k = 300 is a SMALLINT literal: its own template


@pytest.mark.parametrize("sql", [
    "SELECT k, v FROM t WHERE k = -5",  # a sign: the plan's value is not the literal as written
    "SELECT k, v FROM t WHERE k = '5'",  # a string against an integer column is converted
    "SELECT k, v FROM t WHERE c = 'c5'",  # CHAR compares padded
    "SELECT k, v FROM t WHERE d = '2024-01-05'",  # a string made a date
    "SELECT k, v FROM t WHERE k = 5 AND v = 5",  # two literals of one value: which is which?
    "SELECT k, v FROM t WHERE k > 5",  # a range
    "SELECT k, v FROM t WHERE k = 5 LIMIT 3",  # a literal outside the predicates
    "SELECT k, v + 1 FROM t WHERE k = 5",
    "SELECT count(*) FROM t WHERE k = 5",
    "SELECT k, v FROM t WHERE k = 5 OR k = 6",
    "SELECT k, v FROM t WHERE w = 305",  # out of the column's range
])
def test_no_template_where_a_literal_has_another_part(h: Harness, sql: str) -> None:
    cache = PlanCache(lambda: h.engine.catalog.schema_generation)
    first = run(h, cache, sql)
    assert first.equals(fresh(h, sql))
    assert not any(k[0][0] == "template" for k in cache._entries if isinstance(k[0], tuple))
    assert cache.lookup(StatementKey(sql.replace("5", "7"), MODE), h.ctx()) is None


def test_partitions_and_rollups_are_chosen_again(tmp_path) -> None:  # noqa: ANN001
    h = Harness(tmp_path / "storage")
    try:
        h.create("CREATE TABLE p (a INT, b INT, v BIGINT) DUPLICATE KEY(a) PARTITION BY RANGE(a) "
                 "(PARTITION p1 VALUES LESS THAN (100), PARTITION p2 VALUES LESS THAN (200)) "
                 "DISTRIBUTED BY HASH(a) BUCKETS 2 PROPERTIES ('replication_num' = '1')", rollups=[("r", ["b", "a", "v"])])
        h.load("p", [(i, i % 50, i) for i in range(150)])
        cache = PlanCache(lambda: h.engine.catalog.schema_generation)
        for sql in [f"SELECT a, b, v FROM p WHERE a = {a}" for a in (3, 120, 7, 150, 199, 250)] + \
                   [f"SELECT a, b, v FROM p WHERE b = {b} AND a = {a}" for b, a in ((3, 103), (4, 4), (5, 255))]:
            assert run(h, cache, sql).equals(fresh(h, sql)), sql
            assert decisions(cached_plan(h, cache, sql)) == decisions(plan_query(sqlglot.parse_one(sql), h.ctx()))
        assert decisions(cached_plan(h, cache, "SELECT a, b, v FROM p WHERE a = 120"))[0] == \
            (h.table("p").partition("p2").partition_id,)
        assert decisions(cached_plan(h, cache, "SELECT a, b, v FROM p WHERE a = 250"))[0] == ()
        assert cache.template_hits >= 5
    finally:
        h.close()


def test_merge_on_read_tables_answer_the_latest_row(tmp_path) -> None:  # noqa: ANN001
    h = Harness(tmp_path / "storage")
    try:
        h.create("CREATE TABLE u (k INT, v VARCHAR(10)) UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 3 "
                 "PROPERTIES ('replication_num' = '1')")
        h.load("u", [(i, "old") for i in range(50)])
        cache = PlanCache(lambda: h.engine.catalog.schema_generation)
        assert run(h, cache, "SELECT k, v FROM u WHERE k = 1").to_pylist() == [{"k": 1, "v": "old"}]
        h.load("u", [(i, "new") for i in range(0, 50, 2)])
        for k in range(2, 12):
            assert run(h, cache, f"SELECT k, v FROM u WHERE k = {k}").to_pylist() == \
                [{"k": k, "v": "new" if k % 2 == 0 else "old"}]
        assert cache.template_hits == 10
    finally:
        h.close()


def test_the_sql_mode_is_part_of_the_key(h: Harness) -> None:
    cache = PlanCache(lambda: h.engine.catalog.schema_generation)
    run(h, cache, "SELECT k, v FROM t WHERE k = 1")
    assert cache.lookup(StatementKey("SELECT k, v FROM t WHERE k = 2", "ANSI_QUOTES"), h.ctx()) is None
    assert cache.lookup(StatementKey("SELECT k, v FROM t WHERE k = 2", MODE), h.ctx()) is not None


def test_a_schema_change_drops_the_template(h: Harness) -> None:
    cache = PlanCache(lambda: h.engine.catalog.schema_generation)
    run(h, cache, "SELECT k, v FROM t WHERE k = 1")
    h.create("CREATE TABLE other (k INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 "
             "PROPERTIES ('replication_num' = '1')")
    assert cache.lookup(StatementKey("SELECT k, v FROM t WHERE k = 2", MODE), h.ctx()) is None


def test_quick_is_a_light_kept_plan_that_ran_fast(h: Harness) -> None:
    cache = PlanCache(lambda: h.engine.catalog.schema_generation)
    lookup, total = StatementKey("SELECT k, v FROM t WHERE k = 1", MODE), StatementKey("SELECT sum(v) FROM t", MODE)
    join = StatementKey("SELECT count(*) FROM t a JOIN t b ON a.k = b.v", MODE)
    assert not cache.quick(lookup, "db")  # nothing kept yet
    for _ in range(3):  # a first run decodes pages: it may take more than QUICK_SECONDS
        for key in (lookup, total, join):
            run(h, cache, key.text)
    assert cache.quick(StatementKey("SELECT k, v FROM t WHERE k = 2", MODE), "db")  # the template ran in ~0.1 ms
    assert not cache.quick(total, "db")  # an aggregate: not on the event loop (plan_cache._light)
    assert not cache.quick(join, "db")  # a join: DuckDB's threads, whose time is not the caller's
    assert not cache.quick(lookup, "other_db")
    cache.observe(lookup, "db", 0.0001)
    cache.observe(lookup, "db", 0.0001)  # (the runs above were light or not by this machine's speed)
    cache.observe(lookup, "db", 0.5)
    assert cache.quick(lookup, "db")  # one slow run of three (a garbage collection) does not decide
    cache.observe(lookup, "db", 0.5)
    assert not cache.quick(lookup, "db")
    cache.observe(lookup, "db", 0.0001)
    cache.observe(lookup, "db", 0.0001)
    assert cache.quick(lookup, "db")
    h.load("t", [(1000, "s", "c", None, 1, 1)])  # its publish reads the table back into the catalog's memory
    assert cache.quick(lookup, "db")
    catalog = h.engine.catalog
    table_id = catalog.get_table("db", "t").table_id
    catalog._table_cache.pop(table_id)  # noqa: SLF001 - as a failed read-back leaves it
    assert not cache.quick(lookup, "db")  # reading it again would wait for the catalog lock
    for _ in range(3):  # read back into memory
        run(h, cache, lookup.text)
    assert cache.quick(lookup, "db")
    cache.observe(lookup, "db", 0.0001, rows_read=1_000_000)  # the scan worked on other threads too
    assert not cache.quick(lookup, "db")
    h.create("CREATE TABLE other (k INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 "
             "PROPERTIES ('replication_num' = '1')")
    assert not cache.quick(lookup, "db")  # planned against another schema generation


def test_short_is_a_kept_plan_whose_runs_take_a_few_milliseconds(h: Harness) -> None:
    cache = PlanCache(lambda: h.engine.catalog.schema_generation)
    total = StatementKey("SELECT sum(v) FROM t", MODE)
    assert not cache.short(total, "db")  # nothing kept yet
    for _ in range(3):
        run(h, cache, total.text)
    assert cache.short(total, "db")  # an aggregate over 400 rows: not quick, but short
    assert not cache.short(total, "other_db")
    cache.observe(total, "db", 0.5)
    cache.observe(total, "db", 0.5)
    assert not cache.short(total, "db")  # its runs now take half a second

