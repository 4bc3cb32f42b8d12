"""The plan cache: a repeated SELECT reuses its plan while the catalog's schema and the variables planning read
are unchanged (loads and compactions keep it), never when the plan depends on the statement (time, session functions, subqueries, random),
and every reuse reads a fresh snapshot with its own counters."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from decimal import Decimal

import pyarrow as pa
import pytest
import sqlglot

from planner.context import QueryContext
from planner.olap_source import OlapTableSource
from planner.plan_cache import PlanCache, _nondeterministic
from planner.query import execute_cached, execute_query
from planner.sources import ArrowTableSource
from tests.planner.rollup_harness import Harness


@pytest.fixture
def h(tmp_path) -> Iterator[Harness]:  # noqa: ANN001
    harness = Harness(tmp_path / "storage")
    harness.create("CREATE TABLE t (k INT, g INT, v BIGINT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2 "
                   "PROPERTIES ('replication_num' = '1')")
    harness.load("t", [(i, i % 3, i * 10) for i in range(100)])
    yield harness
    harness.close()


def _cache(h: Harness) -> PlanCache:
    return PlanCache(lambda: h.engine.catalog.schema_generation)  # as the server's


def run(h: Harness, cache: PlanCache, sql: str, ctx: QueryContext | None = None, profile: list | None = None
        ) -> pa.Table:
    """What the server does per statement: the cached plan if valid, else parse and plan (keeping it)."""
    ctx = ctx or h.ctx()
    out = execute_cached(sql, ctx, cache, profile)
    if out is None:
        out = execute_query(sqlglot.parse_one(sql, read="doris"), ctx, cache, sql, profile)
    return out


def _with_user_x(h: Harness, x: object) -> QueryContext:
    """h's context where the user variable @x is `x`."""
    c = h.ctx()
    base = c.variables
    c.variables = lambda scope, name: x if scope == "user" and name == "x" else base(scope, name)
    return c


def test_repeat_reuses_the_plan(h: Harness) -> None:
    cache = _cache(h)
    sql = "SELECT g, sum(v) AS s FROM t WHERE k >= 10 GROUP BY g ORDER BY g"
    first = run(h, cache, sql)
    assert (cache.hits, cache.misses, len(cache)) == (0, 1, 1)
    again = run(h, cache, sql)
    assert cache.hits == 1 and again.equals(first)
    assert first.to_pylist() == [{"g": g, "s": sum(i * 10 for i in range(10, 100) if i % 3 == g)} for g in range(3)]


def test_a_load_keeps_the_plan_and_the_new_rows_are_read(h: Harness) -> None:
    cache = _cache(h)
    sql = "SELECT count(*) AS n FROM t"
    assert run(h, cache, sql).column(0).to_pylist() == [100]
    h.load("t", [(1000, 0, 1)])
    assert run(h, cache, sql).column(0).to_pylist() == [101]  # its own snapshot, taken at this run
    assert cache.hits == 1 and cache.misses == 1
    h.load("t", [(1001, 0, 1)])
    assert run(h, cache, sql).column(0).to_pylist() == [102]
    assert cache.hits == 2


def test_a_plan_made_on_an_empty_table_is_not_kept(h: Harness) -> None:
    h.create("CREATE TABLE e (k INT, g INT, v BIGINT SUM) AGGREGATE KEY(k, g) DISTRIBUTED BY HASH(k) BUCKETS 2 "
             "ROLLUP (r (g, v)) PROPERTIES ('replication_num' = '1')")
    cache = _cache(h)
    sql = "SELECT g, sum(v) AS s FROM e GROUP BY g"
    assert run(h, cache, sql).num_rows == 0
    assert len(cache) == 0  # with no rows the base index is named: the rollup must be chosen once there are some
    h.load("e", [(1, 1, 5), (2, 1, 6)])
    assert run(h, cache, sql).to_pylist() == [{"g": 1, "s": 11}]
    assert len(cache) == 1


def test_ddl_invalidates(h: Harness) -> None:
    cache = _cache(h)
    run(h, cache, "SELECT * FROM t WHERE k = 1")
    h.engine.catalog.drop_table("db", "t")
    with pytest.raises(Exception, match="doesn't exist"):
        run(h, cache, "SELECT * FROM t WHERE k = 1")


def test_a_variable_planning_read_is_part_of_the_key(h: Harness) -> None:
    cache = _cache(h)
    sql = "SELECT sum(v) FROM t"
    run(h, cache, sql, h.ctx(enable_rollup_selection=True))
    run(h, cache, sql, h.ctx(enable_rollup_selection=True))
    assert cache.hits == 1
    run(h, cache, sql, h.ctx(enable_rollup_selection=False))  # planning read it: a new plan
    assert cache.hits == 1 and cache.misses == 2


def test_user_variables_are_compared(h: Harness) -> None:
    cache = _cache(h)

    sql = "SELECT k FROM t WHERE k = @x"
    assert run(h, cache, sql, _with_user_x(h, 5)).column(0).to_pylist() == [5]
    assert run(h, cache, sql, _with_user_x(h, 5)).column(0).to_pylist() == [5]
    assert run(h, cache, sql, _with_user_x(h, 7)).column(0).to_pylist() == [7]
    assert cache.hits == 1


@pytest.mark.parametrize("sql", [
    "SELECT k FROM t WHERE k < dayofmonth(now())",  # statement time folded while planning
    "SELECT k FROM t WHERE k = length(database())",  # a session function evaluated while planning
    "SELECT k FROM t WHERE k = (SELECT max(k) FROM t)",  # a subquery run while binding
    "SELECT k FROM t, info WHERE k = info.x",  # a source that is not an OLAP table
])
def test_statement_dependent_plans_are_not_kept(h: Harness, sql: str) -> None:
    cache = _cache(h)
    ctx = h.ctx()
    ctx.functions = {"database": lambda: "db"}
    resolve = ctx.resolve_table
    info = ArrowTableSource("info", pa.table({"x": pa.array([1], pa.int32())}))
    ctx.resolve_table = lambda db, name: info if name == "info" else resolve(db, name)
    run(h, cache, sql, ctx)
    assert len(cache) == 0


def test_nondeterministic_functions_are_recognised() -> None:
    """rand() / uuid() are not functions dorislite evaluates yet; a plan holding one must never be reused."""
    assert _nondeterministic(sqlglot.parse_one("SELECT k FROM t WHERE k < rand() * 100", read="doris"))
    assert _nondeterministic(sqlglot.parse_one("SELECT uuid()", read="doris"))
    assert not _nondeterministic(sqlglot.parse_one("SELECT k FROM t WHERE k < abs(-3)", read="doris"))


def test_same_text_in_another_database_is_another_plan(h: Harness) -> None:
    cache = _cache(h)
    sql = "SELECT count(*) FROM t"
    run(h, cache, sql)
    other = h.ctx()
    other.current_db = "other"
    assert execute_cached(sql, other, cache) is None


def test_each_run_has_its_own_snapshot_and_profile(h: Harness) -> None:
    cache = _cache(h)
    sql = "SELECT k, v FROM t WHERE k = 42"
    run(h, cache, sql)
    (entry,) = cache._entries.values()
    (scan,) = [p.source for p in entry.bound.plan.walk() if hasattr(p, "source")]
    assert isinstance(scan, OlapTableSource) and scan.versions is None  # runs never touch the kept plan
    first: list = []
    second: list = []
    assert run(h, cache, sql, profile=first).to_pylist() == [{"k": 42, "v": 420}]
    assert run(h, cache, sql, profile=second).to_pylist() == [{"k": 42, "v": 420}]
    assert len(first) == len(second) == 1 and first[0] is not second[0]
    assert first[0].stats.rows_returned == second[0].stats.rows_returned == 1
    assert scan.versions is None


def test_statement_time_is_per_execution(h: Harness) -> None:
    """now() evaluated at execution (not folded while planning) is each run's own."""
    cache = _cache(h)
    sql = "SELECT k, now() AS t FROM t WHERE k = 1"
    a = h.ctx()
    a.now = dt.datetime(2020, 1, 1)
    b = h.ctx()
    b.now = dt.datetime(2021, 1, 1)
    got = [run(h, cache, sql, c).column("t").to_pylist()[0] for c in (a, b)]
    assert got == [dt.datetime(2020, 1, 1), dt.datetime(2021, 1, 1)]


def test_session_functions_at_execution_are_each_runs_own(h: Harness) -> None:
    cache = _cache(h)
    sql = "SELECT k, user() AS u FROM t WHERE k = 1"
    got = []
    for user in ("a@%", "b@%"):
        ctx = h.ctx()
        ctx.functions = {"user": lambda user=user: user}
        got.append(run(h, cache, sql, ctx).column("u").to_pylist())
    assert got == [["a@%"], ["b@%"]] and cache.hits == 1


def test_capacity_evicts_the_least_recently_used(h: Harness) -> None:
    cache = PlanCache(lambda: h.engine.catalog.generation, capacity=2)
    for k in (1, 2, 1, 3):
        run(h, cache, f"SELECT v FROM t WHERE k = {k}")
    assert cache.holds("SELECT v FROM t WHERE k = 1", "db")
    assert not cache.holds("SELECT v FROM t WHERE k = 2", "db")


def test_a_user_variable_of_another_type_is_planned_again(h: Harness) -> None:
    """1, 1.0, 1.00 and TRUE are == in Python but not the same literal: pushed against a VARCHAR column
    they are '1', '1.0', '1.00', 'true'; a plan folded with one must not answer for another."""
    cache = _cache(h)

    sql = "SELECT k FROM t WHERE k = @x"
    for value in (1, Decimal("1.0"), Decimal("1.00"), 1.0, True):
        run(h, cache, sql, _with_user_x(h, value))
    assert cache.hits == 0 and cache.misses == 5
    run(h, cache, sql, _with_user_x(h, True))
    assert cache.hits == 1


def test_a_plan_is_quick_by_its_typical_run(h: Harness) -> None:
    """Quick once two of its last three runs were light: one slow run (a garbage collection) does not change
    that, one run that read many rows does until two light runs follow."""
    cache = _cache(h)
    sql = "SELECT k, v FROM t WHERE k = 42"
    run(h, cache, sql)
    key = next(iter(cache._entries))[0]
    # the first run was observed too, light or not by this machine's speed: a heavy run makes the start known
    for seconds, rows, quick in ((0.0005, 10**6, False), (0.0005, 1, False), (0.0005, 1, True), (0.05, 1, True),
                                 (0.0005, 1, True), (0.0005, 10**6, False), (0.0005, 1, False), (0.0005, 1, True)):
        cache.observe(key, h.ctx().current_db, seconds, rows)
        assert cache.quick(key, h.ctx().current_db) is quick, (seconds, rows)
