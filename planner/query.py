"""SELECT execution entry point: sqlglot expression -> bind -> rewrite -> physical -> Arrow table."""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Hashable

import pyarrow as pa
from sqlglot import exp

from planner.bind.bind_select import BoundQuery, SelectBinder
from planner.context import QueryContext, TableSource  # noqa: F401  (re-exported API)
from planner.functions.bitmaps import is_object
from planner.logical import evolve
from planner.olap_source import OlapTableSource
from planner.physical.plan import to_physical
from planner.plan_cache import PlanCache, execution_sources
from planner.rewrite import rewrite
from planner.sources import ArrowTableSource  # noqa: F401  (re-exported API)
from sql.errors import SqlError, analysis_error

log = logging.getLogger("dorislite.query")


def plan_query(expression: exp.Expression, ctx: QueryContext, ctes: dict | None = None) -> BoundQuery:
    binder = SelectBinder(ctx, lambda q, visible: _run(q, ctx, visible), ctes)
    bound = binder.bind_query(expression)
    return BoundQuery(rewrite(bound.plan, ctx), bound.names)


def _run(expression: exp.Expression, ctx: QueryContext, ctes: dict | None) -> pa.Table:
    bound = plan_query(expression, ctx, ctes)
    table = to_physical(bound.plan, ctx).execute()
    return _result(table, bound)


def _result(table: pa.Table, bound: BoundQuery) -> pa.Table:
    output = list(bound.plan.output)
    if not any(is_object(t) for t in table.schema.types):  # most answers: a selection (a point query's 4 us)
        return (table if table.column_names == output else table.select(output)).rename_columns(bound.names)
    cols = [table.column(i) for i in output]
    # a BITMAP / HLL value prints as NULL, as Doris sends it (bitmap_to_string / hll_cardinality show one)
    cols = [pa.nulls(len(c), pa.string()) if is_object(c.type) else c for c in cols]
    return pa.Table.from_arrays(cols, names=bound.names)


def execute_query(expression: exp.Expression, ctx: QueryContext, cache: PlanCache | None = None,
                  key: Hashable | None = None, profile: list | None = None) -> pa.Table:
    """Run a SELECT / UNION and return its rows; result columns carry MySQL's names (duplicates allowed).
    With a `cache` and the statement's `key` (its text), the plan is kept for the next run of the same key
    when it may be reused (planner/plan_cache.py); `profile` is the statement's query profile scan list."""
    ctx.statement_time()  # fix now() for the whole statement
    with _errors():
        if cache is None or key is None:
            return _run(expression, ctx, None)
        bound = cache.plan(key, expression, ctx, _run)
        return _execute_plan(bound, ctx, profile, cache, key)


def execute_cached(key: Hashable, ctx: QueryContext, cache: PlanCache, profile: list | None = None
                   ) -> pa.Table | None:
    """The rows of the statement cached under `key`, or None when no valid plan is cached (then parse it
    and call execute_query with the same cache and key)."""
    bound = cache.lookup(key, ctx)
    if bound is None:
        return None
    ctx.statement_time()
    with _errors():
        return _execute_plan(bound, ctx, profile, cache, key)


def _execute_plan(bound: BoundQuery, ctx: QueryContext, profile: list | None, cache: PlanCache,
                  key: Hashable) -> pa.Table:
    """Run a kept plan, noting its cost in the cache: this thread's CPU time and the rows its scans read."""
    scanned: list[TableSource] = []
    run_ctx = evolve(ctx, source_override=execution_sources(profile, scanned))
    started = time.thread_time()
    table = _result(to_physical(bound.plan, run_ctx).execute(), bound)
    cache.observe(key, ctx.current_db, time.thread_time() - started,
                  sum(s.stats.raw_rows_read for s in scanned if isinstance(s, OlapTableSource)))
    return table


class _errors:
    """Errors of a query as MySQL errors: a type combination an Arrow kernel rejects is an analysis
    error, not a traceback; storage / server errors keep their MySQL code."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type | None, e: BaseException | None, tb: object) -> bool:
        if e is None or isinstance(e, SqlError) or not isinstance(e, Exception):
            return False
        if isinstance(e, (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError)):
            raise analysis_error(f"Unsupported expression types: {_first_line(e)}") from e
        if hasattr(e, "code") and hasattr(e, "message"):
            return False
        incident = uuid.uuid4().hex[:12]
        log.error("unexpected error in a query (incident %s)", incident, exc_info=e)  # the server log only
        if isinstance(e, MemoryError):
            raise analysis_error(f"Memory limit exceeded: the query needs more memory than the server can give "
                                 f"it (incident {incident})") from e
        raise analysis_error(f"Internal error while running the query; the server log has it as incident "
                             f"{incident}") from e


def _first_line(e: Exception) -> str:
    return str(e).splitlines()[0] if str(e) else type(e).__name__
