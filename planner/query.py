"""SELECT execution entry point: sqlglot expression -> bind -> rewrite -> physical -> Arrow table."""

from __future__ import annotations

import pyarrow as pa
from sqlglot import exp

from planner.bind.bind_select import BoundQuery, SelectBinder
from planner.context import QueryContext, TableSource  # noqa: F401  (re-exported API)
from planner.physical.plan import to_physical
from planner.rewrite import rewrite
from planner.sources import ArrowTableSource  # noqa: F401  (re-exported API)
from sql.errors import SqlError, analysis_error


def plan_query(expression: exp.Expression, ctx: QueryContext, ctes: dict | None = None) -> BoundQuery:
    binder = SelectBinder(ctx, lambda q, visible: _run(q, ctx, visible), ctes)
    bound = binder.bind_query(expression)
    return BoundQuery(rewrite(bound.plan, ctx), bound.names)


def _run(expression: exp.Expression, ctx: QueryContext, ctes: dict | None) -> pa.Table:
    bound = plan_query(expression, ctx, ctes)
    table = to_physical(bound.plan, ctx).execute()
    return _result(table, bound)


def _result(table: pa.Table, bound: BoundQuery) -> pa.Table:
    cols = [table.column(i) for i in bound.plan.output]
    return pa.Table.from_arrays(cols, names=bound.names)


def execute_query(expression: exp.Expression, ctx: QueryContext) -> pa.Table:
    """Run a SELECT / UNION and return its rows; result columns carry MySQL's names (duplicates allowed)."""
    ctx.statement_time()  # fix now() for the whole statement
    try:
        return _run(expression, ctx, None)
    except SqlError:
        raise
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as e:
        # a type combination an Arrow kernel rejects: report it as an analysis error, not a traceback
        raise analysis_error(f"Unsupported expression types: {_first_line(e)}") from e
    except Exception as e:
        if hasattr(e, "code") and hasattr(e, "message"):  # storage / server errors carry their MySQL code
            raise
        raise analysis_error(f"Unexpected error: {type(e).__name__}: {_first_line(e)}") from e


def _first_line(e: Exception) -> str:
    return str(e).splitlines()[0] if str(e) else type(e).__name__
