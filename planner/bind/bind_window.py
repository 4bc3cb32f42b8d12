"""Window functions: `f(...) OVER (PARTITION BY ... ORDER BY ... frame)` in the select list, ORDER BY and
QUALIFY become a LogicalWindow after GROUP BY / HAVING (Doris's order of evaluation), and the expressions
that held them read its output columns.

Checks follow Doris's WindowFunctionChecker: a frame needs an ORDER BY, and a RANGE frame's bounds are
UNBOUNDED or CURRENT ROW.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import pyarrow as pa
from sqlglot import exp

from planner.bind.bind_expr import bound_column, find_aggregates
from planner.logical import WindowCall
from planner.values import avg_decimal_scale
from sql.errors import analysis_error

RANKING: dict[type[exp.Expression], str] = {
    exp.RowNumber: "row_number", exp.Rank: "rank", exp.DenseRank: "dense_rank", exp.PercentRank: "percent_rank",
    exp.CumeDist: "cume_dist", exp.Ntile: "ntile",
}
VALUE: dict[type[exp.Expression], str] = {
    exp.Lag: "lag", exp.Lead: "lead", exp.FirstValue: "first_value", exp.LastValue: "last_value",
    exp.NthValue: "nth_value",
}
AGGREGATE: dict[type[exp.Expression], str] = {
    exp.Sum: "sum", exp.Avg: "avg", exp.Min: "min", exp.Max: "max", exp.Count: "count",
    exp.Stddev: "stddev_samp", exp.StddevSamp: "stddev_samp", exp.StddevPop: "stddev",
    exp.Variance: "variance_samp", exp.VariancePop: "variance",
}


class WindowRef(exp.Expression):
    """Stands for a window call's output while the rest of the expression is bound."""

    arg_types = {"this": True}


def _ref(window_id: str) -> WindowRef:
    node = WindowRef()
    node.args["this"] = window_id  # a plain string: not a child expression the binders would visit
    return node


def contains_window(e: exp.Expression) -> bool:
    return any(isinstance(n, exp.Window) for n in e.dfs(prune=lambda n: isinstance(n, exp.Subquery | exp.Select)))


def window_aggregates(window: exp.Window) -> list[exp.AggFunc]:
    """GROUP BY aggregates a window call uses (in its arguments, PARTITION BY, ORDER BY), not its own."""
    parts: list[exp.Expression] = list(window.args.get("partition_by") or [])
    order = window.args.get("order")
    if order is not None:
        parts += [o.this for o in order.expressions]
    func = window.this
    parts += [v for k, v in func.args.items() if isinstance(v, exp.Expression)]
    parts += [x for v in func.args.values() if isinstance(v, list) for x in v if isinstance(x, exp.Expression)]
    return [a for p in parts for a in find_aggregates(p)]


@dataclass
class WindowBinder:
    """Collects the window calls of one SELECT. `extract` swaps each OVER(...) in an (unbound) expression
    for a reference; `bind` binds the collected calls with the SELECT's post-aggregation binder."""

    new_id: Callable[[str], str]
    windows: list[tuple[str, exp.Window]] = field(default_factory=list)

    def extract(self, e: exp.Expression) -> exp.Expression:
        def fn(node: exp.Expression) -> exp.Expression:
            if isinstance(node, exp.Window):
                for wid, seen in self.windows:
                    if seen == node:
                        return _ref(wid)
                wid = self.new_id(node.this.sql_name().lower() if isinstance(node.this, exp.Func) else "window")
                self.windows.append((wid, node))
                return _ref(wid)
            return node

        return e.copy().transform(fn, copy=False)

    def aggregates(self) -> list[exp.AggFunc]:
        return [a for _, w in self.windows for a in window_aggregates(w)]

    def bind_calls(self, bind: Callable[[exp.Expression], exp.Expression]) -> tuple[WindowCall, ...]:
        """The calls, their parts bound by `bind` (the SELECT's binder after GROUP BY)."""
        return tuple(self._call(wid, w, bind) for wid, w in self.windows)

    def _call(self, wid: str, w: exp.Window, bind: Callable[[exp.Expression], exp.Expression]) -> WindowCall:
        func_node = w.this
        if isinstance(func_node, exp.IgnoreNulls | exp.RespectNulls):
            raise analysis_error(f"{func_node.key.upper()} in a window function is not supported", 1235, "42000")
        func, args = _function(func_node)
        partition = tuple(bind(p) for p in w.args.get("partition_by") or [])
        order_node = w.args.get("order")
        order = tuple((bind(o.this), not o.args.get("desc"), bool(o.args.get("nulls_first")))
                      for o in (order_node.expressions if order_node is not None else []))
        frame = _frame(w.args.get("spec"), bool(order))
        return WindowCall(wid, func, tuple(bind(a) for a in args), partition, order, frame)

    @staticmethod
    def resolve(e: exp.Expression) -> exp.Expression:
        """Window references as reads of the LogicalWindow's output columns."""
        return e.transform(lambda n: bound_column(n.this) if isinstance(n, WindowRef) else n, copy=False)


def _function(node: exp.Expression) -> tuple[str, list[exp.Expression]]:
    t = type(node)
    if t in RANKING:
        if t is exp.Ntile:
            n = node.this
            if not (isinstance(n, exp.Literal) and not n.is_string and int(n.this) > 0):
                raise analysis_error("The bucket number of NTILE must be a constant positive integer")
            return "ntile", [n]
        return RANKING[t], []
    if t in VALUE:
        args = [node.this] + [node.args[k] for k in ("offset", "default") if node.args.get(k) is not None]
        if t in (exp.Lag, exp.Lead) and len(args) > 1:
            offset = args[1]
            if not (isinstance(offset, exp.Literal) and not offset.is_string and int(offset.this) >= 0):
                raise analysis_error(f"The offset parameter of {t.__name__.upper()} must be a constant positive "
                                     "integer")
        return VALUE[t], args
    if t in AGGREGATE:
        arg = node.this
        if isinstance(arg, exp.Distinct):
            raise analysis_error(f"DISTINCT in the window function {node.sql('mysql')} is not supported", 1235,
                                 "42000")
        if t is exp.Count and (arg is None or isinstance(arg, exp.Star)):
            return "count_star", []
        return AGGREGATE[t], [arg]
    name = node.sql_name().lower() if isinstance(node, exp.Func) else node.key
    raise analysis_error(f"{name} is not a window function", 1235, "42000")


def _bound(value: exp.Expression | str | None, side: str | None) -> str:
    if isinstance(value, str) and value.upper() in ("UNBOUNDED", "CURRENT ROW"):
        return "CURRENT ROW" if value.upper() == "CURRENT ROW" else f"UNBOUNDED {(side or 'PRECEDING').upper()}"
    if isinstance(value, exp.Literal) and not value.is_string and int(value.this) >= 0:
        return f"{int(value.this)} {(side or 'PRECEDING').upper()}"
    shown = value.sql("mysql") if isinstance(value, exp.Expression) else str(value)
    raise analysis_error(f"Window frame bound {shown} must be UNBOUNDED, CURRENT ROW or a non-negative integer")


def _frame(spec: exp.WindowSpec | None, ordered: bool) -> str | None:
    if spec is None or not spec.args.get("kind"):
        return None
    if not ordered:
        raise analysis_error("WindowFrame clause requires OrderBy clause")
    kind = str(spec.args["kind"]).upper()
    start = _bound(spec.args.get("start"), spec.args.get("start_side"))
    end_value = spec.args.get("end")
    end = _bound(end_value, spec.args.get("end_side")) if end_value is not None else "CURRENT ROW"
    if kind == "RANGE" and any(b[0].isdigit() for b in (start, end)):
        raise analysis_error("RANGE window frames only support UNBOUNDED and CURRENT ROW bounds")
    if start.startswith("UNBOUNDED FOLLOWING") or end.startswith("UNBOUNDED PRECEDING"):
        raise analysis_error(f"Invalid window frame: {kind} BETWEEN {start} AND {end}")
    return f"{kind} BETWEEN {start} AND {end}"


def window_type(func: str, args: list[pa.DataType]) -> pa.DataType:
    """The result type of a window call (the same as the GROUP BY aggregate of that name)."""
    if func in ("row_number", "rank", "dense_rank", "ntile", "count", "count_star"):
        return pa.int64()
    if func in ("percent_rank", "cume_dist") or func.startswith(("stddev", "variance")):
        return pa.float64()
    t = args[0] if args else pa.null()
    if func in ("lag", "lead", "first_value", "last_value", "nth_value", "min", "max"):
        return t
    if func == "sum":
        if pa.types.is_decimal(t):
            return pa.decimal128(38, t.scale)
        return pa.float64() if pa.types.is_floating(t) else pa.int64()
    if func == "avg":
        if pa.types.is_decimal(t):
            return pa.decimal128(38, avg_decimal_scale(t.scale))
        return pa.float64()
    raise analysis_error(f"{func} is not a window function", 1235, "42000")
