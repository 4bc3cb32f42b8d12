"""The operators above the OLAP scans as one DuckDB query (DESIGN.md, Flows: SELECT).

`duck_region(plan)` turns the largest part of a logical plan that DuckDB can run with the Arrow
operators' exact semantics into a DuckRegion: one SQL text over Arrow inputs (the scans, literal relations,
and any subplan it could not translate, run by the Arrow operators), whose result is cast to the types the
Arrow operators would have produced (known by running them over empty inputs: a type probe). A region is
formed only around the operators that are worth a round trip to DuckDB (joins, aggregations, sorts, unions);
a point lookup's scan, filter and projection stay on the Arrow path.
"""

from __future__ import annotations

import decimal
import itertools
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import TypeVar

import duckdb
import pyarrow as pa
from sqlglot import exp

from planner.bind.bind_window import window_type
from planner.bind.subquery import OuterColumn, SubqueryExpr
from planner.context import QueryContext, TableSource
from planner.duck.database import cursor, memory_in_use
from planner.duck.expressions import (
    INLINE_IN_ITEMS,
    ArrowFunction,
    ExpressionTranslator,
    Untranslatable,
    duck_type,
    literal,
    quote,
    same_family,
)
from planner.expressions import Evaluator
from planner.guard import MEMORY, QueryGuard
from planner.logical import (
    AggregateCall,
    LogicalAggregate,
    LogicalFilter,
    LogicalJoin,
    LogicalLimit,
    LogicalPlan,
    LogicalProject,
    LogicalScan,
    LogicalSetOperation,
    LogicalSort,
    LogicalUnion,
    LogicalValues,
    LogicalWindow,
)
from planner.olap_source import OlapTableSource
from planner.physical.operators import ArrowTableScan, ArrowValues, PhysicalOperator
from planner.values import avg_decimal_scale, is_string, result_supertype
from storage.predicate import ColumnPredicate, Op

HEAVY = (LogicalJoin, LogicalAggregate, LogicalSort, LogicalUnion, LogicalWindow, LogicalSetOperation)
ROWS = "_rows"  # the one column of an input that has none
RESULT_BATCH_ROWS = 1 << 16
_FUNCTION_IDS = itertools.count()
T = TypeVar("T")

ArrowBuilder = Callable[[LogicalPlan, list[PhysicalOperator]], PhysicalOperator]


@dataclass
class DuckRegion(PhysicalOperator):
    sql: str
    schema: pa.Schema  # the Arrow operators' output types, names = plan ids
    inputs: list[tuple[str, PhysicalOperator]]
    value_sets: list[tuple[str, pa.Array]] = field(default_factory=list)
    guard: QueryGuard | None = None
    functions: list[tuple[str, ArrowFunction]] = field(default_factory=list)

    def execute(self) -> pa.Table:
        guard = self.guard or QueryGuard()
        with cursor() as cur, _functions(cur, self.functions):
            for name, op in self.inputs:
                table = op.execute()
                if not table.num_columns:
                    table = pa.table({name + ROWS: pa.nulls(table.num_rows, pa.bool_())})
                cur.register(name, table)
            for name, values in self.value_sets:
                cur.register(name, pa.table({"v": values}))
            batches: list[pa.RecordBatch] = []
            try:
                with guard.interruptible(cur.interrupt, memory_in_use):
                    reader = cur.sql(self.sql).to_arrow_reader(RESULT_BATCH_ROWS)
                    used = 0
                    for batch in reader:  # the result is bounded as it arrives, not once it is whole
                        used += batch.nbytes
                        guard.charge(used)
                        batches.append(batch)
                    schema = reader.schema
            except duckdb.InterruptException:
                raise guard.error() from None
            except duckdb.OutOfMemoryException as e:
                guard.cancel(MEMORY)
                raise guard.error() from e
            except duckdb.Error:
                raised = [e for _, f in self.functions for e in f.errors]
                if raised:  # the evaluator's own error (Doris's message), not DuckDB's wrapper of it
                    raise raised[0] from None
                raise
        return conform(pa.Table.from_batches(batches, schema=schema), self.schema)


@contextmanager
def _functions(cur: duckdb.DuckDBPyConnection, functions: list[tuple[str, ArrowFunction]]) -> Iterator[None]:
    """The region's evaluator-computed expressions as DuckDB functions while its query runs."""
    made = []
    try:
        for name, f in functions:
            f.errors.clear()
            cur.create_function(name, _with_arity(f, len(f.types)), [cur.type(duck_type(t)) for t in f.types],
                                cur.type(duck_type(f.result)), type="arrow", null_handling="special")
            made.append(name)
        yield
    finally:
        for name in made:
            cur.remove_function(name)


def _with_arity(function: ArrowFunction, n: int) -> Callable[..., pa.Array]:
    """DuckDB reads a function's arity from its signature: one named parameter per argument."""
    names = ", ".join(f"a{i}" for i in range(n))
    return eval(f"lambda {names}: function({names})", {"function": function})  # noqa: S307 - names made here


def conform(table: pa.Table, schema: pa.Schema) -> pa.Table:
    columns = []
    for column, f in zip(table.columns, schema, strict=True):
        columns.append(column if column.type == f.type else column.cast(f.type))
    return pa.Table.from_arrays(columns, schema=schema)


class RegionBuilder:
    """Builds one region. `arrow` makes the Arrow operator of a node over given child operators (the type
    probe and the fallback), `physical` the whole physical plan of a subtree (a region's inputs)."""

    def __init__(self, ctx: QueryContext, arrow: ArrowBuilder, physical: Callable[[LogicalPlan], PhysicalOperator],
                 probes: dict[int, pa.Schema]) -> None:
        self.ctx = ctx  # with outer_types set while a correlated subquery is translated
        self.arrow = arrow
        self.physical = physical
        self.probes = probes
        self.inputs: list[tuple[str, PhysicalOperator]] = []
        # the inputs' plans, and whether DuckDB filters the scan (a reused region's inputs)
        self.input_plans: list[tuple[str, LogicalPlan, bool]] = []
        self.value_sets: list[tuple[str, pa.Array]] = []
        self.functions: list[tuple[str, ArrowFunction]] = []
        self.heavy = 0
        self.native_only = False  # translating a subtree that does not need DuckDB: no evaluator functions

    # -- types ----------------------------------------------------------------------------------------
    def schema(self, plan: LogicalPlan) -> pa.Schema:
        """The Arrow operators' output schema of `plan`, from running them over empty inputs."""
        key = id(plan)
        if key not in self.probes:
            self.probes[key] = self._empty(plan).schema
        return self.probes[key]

    def _empty(self, plan: LogicalPlan) -> pa.Table:
        if isinstance(plan, LogicalScan):
            fields = [pa.field(i, plan.source.schema.field(c).type) for c, i in plan.columns]
            return pa.schema(fields).empty_table()
        if isinstance(plan, LogicalValues):
            return plan.table.slice(0, 0)
        # the operators that only pass their input's columns, and projections, are typed without running
        # them: their expressions may hold correlated subqueries, which only DuckDB evaluates
        if isinstance(plan, LogicalFilter | LogicalSort | LogicalLimit):
            return self.schema(plan.input).empty_table()
        if isinstance(plan, LogicalProject):
            tr = self.translator(plan.input)
            return pa.schema([pa.field(i, tr.type_of(e)) for i, e in plan.exprs]).empty_table()
        if isinstance(plan, LogicalJoin):
            sides = {"semi": [plan.left], "anti": [plan.left], "right_semi": [plan.right],
                     "right_anti": [plan.right]}.get(plan.kind, [plan.left, plan.right])
            return pa.schema([f for side in sides for f in self.schema(side)]).empty_table()
        if isinstance(plan, LogicalAggregate) and (plan.grouping_sets is not None
                                                   or any(c.distinct and c.func in ("sum", "avg") for c in plan.aggregates)):
            # the Arrow aggregate has no grouping sets nor sum / avg (DISTINCT): its types for the plain calls,
            # BIGINT for GROUPING
            plain = LogicalAggregate(plan.input, plan.keys, tuple(
                replace(c, distinct=False) if c.func in ("sum", "avg") else c
                for c in plan.aggregates if c.func != "grouping"))
            types = self.schema(plain)
            fields = [types.field(n) if n in types.names else pa.field(n, pa.int64()) for n in plan.output]
            return pa.schema(fields).empty_table()
        if isinstance(plan, LogicalSetOperation):  # no Arrow operator: the types UNION would give
            left, right = self.schema(plan.left), self.schema(plan.right)
            return pa.schema([pa.field(i, result_supertype(a.type, c.type))
                              for i, a, c in zip(plan.output_ids, left, right, strict=True)]).empty_table()
        if isinstance(plan, LogicalWindow):  # no Arrow operator: the types follow the aggregates' rules
            schema = self.schema(plan.input)
            tr = self.translator(plan.input)
            fields = [pa.field(c.out, window_type(c.func, [tr.type_of(a) for a in c.args])) for c in plan.calls]
            return pa.schema([*schema, *fields]).empty_table()
        children = [ArrowValues(self.schema(c).empty_table()) for c in plan.children()]
        return self.arrow(plan, children).execute().slice(0, 0)

    # -- what expressions need (ExpressionTranslator's Subqueries) ----------------------------------------
    def register_set(self, values: pa.Array) -> str:
        name = f"__set{len(self.value_sets)}"
        self.value_sets.append((name, values))
        return quote(name)

    def register_function(self, function: ArrowFunction) -> str:
        if self.native_only:
            raise Untranslatable("an evaluator function in a subtree the Arrow operators run as well")
        # DuckDB's functions are visible to every connection: a name no other statement uses
        name = f"__dl_fn{next(_FUNCTION_IDS)}"
        self.functions.append((name, function))
        return name

    def _inside(self, visible: dict[str, pa.DataType], fn: Callable[[], T]) -> T:
        """Run `fn` with the enclosing columns of a correlated subquery visible to its expressions."""
        saved = self.ctx
        self.ctx = replace(saved, outer_types=visible)
        try:
            return fn()
        finally:
            self.ctx = saved

    def subquery_sql(self, plan: LogicalPlan, visible: dict[str, pa.DataType]) -> str:
        return self._inside(visible, lambda: self.relation(plan))

    def subquery_type(self, plan: LogicalPlan, visible: dict[str, pa.DataType]) -> pa.DataType:
        return self._inside(visible, lambda: self.schema(plan).field(0).type)

    def translator(self, *plans: LogicalPlan) -> ExpressionTranslator:
        fields = [f for p in plans for f in self.schema(p)]
        return ExpressionTranslator(pa.schema(fields), self.ctx, self)

    # -- relations --------------------------------------------------------------------------------------
    def relation(self, plan: LogicalPlan) -> str:
        """SQL producing `plan`'s output ids; a subtree it cannot translate becomes an input, and so does one
        that does not need DuckDB (needs_duckdb): the Arrow operators evaluate a scan's filter, projection and
        aggregation over whole arrays, faster than DuckDB calling back into the evaluator vector by vector."""
        if isinstance(plan, LogicalScan | LogicalValues):
            return self._input(plan)
        # a subtree that does not need DuckDB is still run there when DuckDB computes all of it natively
        # (decimal arithmetic, CASE ...: faster than the evaluator); with an expression only the evaluator
        # computes, the Arrow operators run it over whole arrays instead of DuckDB calling back per vector
        native = not needs_duckdb(plan)
        mark = (len(self.inputs), len(self.value_sets), len(self.functions), self.heavy, self.native_only)
        try:
            self.native_only = self.native_only or native
            return self.translate(plan)
        except Untranslatable:
            if reads_outer(plan):  # the Arrow operators cannot read an enclosing query's columns
                raise
            # forget what the failed attempt registered: the subtree runs as one input instead
            del self.inputs[mark[0]:], self.value_sets[mark[1]:], self.functions[mark[2]:]
            del self.input_plans[mark[0]:]
            self.heavy = mark[3]
            return self._input(plan)
        finally:
            self.native_only = mark[4]

    def _input(self, plan: LogicalPlan) -> str:
        name = f"__in{len(self.inputs)}"
        op = self.physical(plan)
        where = filter_in_duckdb(plan, op, self.register_set)
        self.inputs.append((name, op))
        self.input_plans.append((name, plan, where is not None))
        self.schema(plan)
        if not plan.output:  # count(*) reads no column: DuckDB needs one to count the rows of
            if where is None:
                return f"SELECT {quote(name + ROWS)} FROM {quote(name)}"
            return f"SELECT NULL AS {quote(name + ROWS)} FROM {quote(name)} WHERE {where}"
        if where is None:
            return f"SELECT * FROM {quote(name)}"
        return f"SELECT {', '.join(quote(i) for i in plan.output)} FROM {quote(name)} WHERE {where}"

    def translate(self, plan: LogicalPlan) -> str:
        handler = _NODES.get(type(plan))
        if handler is None:
            raise Untranslatable(type(plan).__name__)
        # check this node's own expressions before its children turn into inputs
        sql = handler(self, plan)
        if isinstance(plan, HEAVY) or has_subquery(plan):
            self.heavy += 1
        return sql

    def region(self, plan: LogicalPlan) -> DuckRegion | None:
        sql = self.translate(plan)
        if not self.heavy:
            return None
        names = ", ".join(quote(i) for i in plan.output)
        return DuckRegion(f"SELECT {names} FROM ({sql})", self.schema(plan), self.inputs, self.value_sets,
                          self.ctx.guard, self.functions)


def filter_in_duckdb(plan: LogicalPlan, op: PhysicalOperator,
                     register_set: Callable[[pa.Array], str] | None = None) -> str | None:
    """An OLAP scan whose pushed predicates are its whole WHERE (the Filter above was dropped) hands them to
    DuckDB instead: the scan then only narrows by its indexes and zone maps and serves whole (cached) columns
    without copying them through a filter; a predicate's column the query does not read is scanned under a
    hidden name. The condition's SQL (the scan operator is changed to match), or None."""
    if not (isinstance(plan, LogicalScan) and plan.where is not None and plan.predicates
            and isinstance(op, ArrowTableScan) and isinstance(op.source, OlapTableSource)):
        return None
    ids = {c.lower(): i for c, i in op.columns}
    extra: list[tuple[str, str]] = []
    conditions = []
    for p in plan.predicates:
        column = ids.get(p.column.lower())
        if column is None:
            column = ids[p.column.lower()] = f"__pred_{len(extra)}"
            extra.append((p.column, column))
        try:
            t = op.source.schema.field(p.column).type
            conditions.append(_predicate_sql(quote(column), p, t, register_set))
        except (KeyError, Untranslatable, pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
            return None
    op.columns = (*op.columns, *extra)
    op.exact = False
    return " AND ".join(conditions)


def _predicate_sql(column: str, p: ColumnPredicate, t: pa.DataType,
                   register_set: Callable[[pa.Array], str] | None) -> str:
    if p.op == Op.IS_NULL:
        return f"{column} IS NULL"
    if p.op == Op.IS_NOT_NULL:
        return f"{column} IS NOT NULL"
    if p.op in (Op.IN, Op.NOT_IN):
        if not p.values:
            raise Untranslatable("empty IN")
        word = "IN" if p.op == Op.IN else "NOT IN"
        if len(p.values) > INLINE_IN_ITEMS:  # a long list is an input table, not SQL text to parse
            if register_set is None:
                return ""  # a reused region: its SQL is made already, only the scan is set up
            return f"{column} {word} (SELECT v FROM {register_set(pa.array(p.values, t))})"
        return f"{column} {word} ({', '.join(literal(pa.scalar(v, t)) for v in p.values)})"
    values = [literal(pa.scalar(v, t)) for v in p.values]
    return f"{column} {'<>' if p.op == Op.NE else p.op.value} {values[0]}"


def has_subquery(plan: LogicalPlan) -> bool:
    """A node of `plan` (itself, not its children) holds a correlated subquery: DuckDB must run it."""
    return any(isinstance(n, SubqueryExpr) for e in plan.expressions() for n in e.walk())


_NEEDS_DUCKDB: weakref.WeakKeyDictionary[LogicalPlan, bool] = weakref.WeakKeyDictionary()


def needs_duckdb(plan: LogicalPlan) -> bool:
    """`plan` holds an operator DuckDB runs better (a join: the Arrow join materializes index pairs) or only
    DuckDB runs (windows, INTERSECT / EXCEPT, grouping sets, sum / avg (DISTINCT), a correlated subquery or a
    read of an enclosing query's column). A scan's own aggregation, sort or union is as fast on the Arrow
    operators (measured on SSB flat: DuckDB's copy of the scanned strings cost 10-15%), so it stays there.
    Remembered per plan node: a cached plan (a point lookup's) is asked again on every run."""
    known = _NEEDS_DUCKDB.get(plan)
    if known is None:
        known = any(_duckdb_node(n) for n in plan.walk()) or reads_outer(plan)
        _NEEDS_DUCKDB[plan] = known
    return known


def needs_duckdb_as(plan: LogicalPlan, like: LogicalPlan) -> None:
    """Remember for each node of `plan` what the same node of `like` needs: a plan template's instance
    differs from its template's plan only in a scan's values and pruning (walking it again cost a tenth of a
    point query)."""
    for new, old in zip(plan.walk(), like.walk(), strict=True):
        _NEEDS_DUCKDB[new] = needs_duckdb(old)


def _duckdb_node(n: LogicalPlan) -> bool:
    if isinstance(n, LogicalJoin | LogicalWindow | LogicalSetOperation) or has_subquery(n):
        return True
    return isinstance(n, LogicalAggregate) and (
        n.grouping_sets is not None or any(c.distinct and c.func in ("sum", "avg") for c in n.aggregates)
        or _decimal_arithmetic_below(n) or _groups_by_a_leading_key(n))


def _groups_by_a_leading_key(aggregate: LogicalAggregate) -> bool:
    """GROUP BY the leading key or the hash column of the table scanned below (TPC-H Q18's subquery: lineitem
    by l_orderkey, a million groups and more): DuckDB's aggregate handles that many groups several times
    faster than Acero's; few groups (by dimensions, SSB's queries) stay on the Arrow aggregate."""
    names: dict[str, str] = {k: k for k in aggregate.keys}  # key id -> the id it is read from below
    node = aggregate.input
    while isinstance(node, LogicalProject | LogicalFilter):
        if isinstance(node, LogicalProject):
            exprs = dict(node.exprs)
            names = {k: exprs[v].name for k, v in names.items() if isinstance(exprs.get(v), exp.Column)}
        node = node.input
    if not isinstance(node, LogicalScan) or not isinstance(node.source, OlapTableSource) or not names:
        return False
    table = node.source.table
    keys = [c.name for c in table.columns if c.is_key]
    leading = {n.lower() for n in (keys[:1] + list(table.distribution.columns))}
    by_id = {i: c.lower() for c, i in node.columns}
    return any(by_id.get(v) in leading for v in names.values())


_ARITHMETIC_NODES = (exp.Add, exp.Sub, exp.Mul, exp.Div)


def _decimal_arithmetic_below(aggregate: LogicalAggregate) -> bool:
    """The aggregate's arguments are computed with decimal arithmetic over its scan (TPC-H Q1's
    sum(l_extendedprice * (1 - l_discount) * (1 + l_tax))): DuckDB computes decimals in 64 / 128-bit integers,
    the evaluator in Arrow's decimal kernels, several times slower. Integer and float arithmetic (SSB's
    sum(lo_extendedprice * lo_discount)) stays on the Arrow aggregate, which is faster over a scan."""
    node = aggregate.input
    projects = []
    while isinstance(node, LogicalProject | LogicalFilter):
        if isinstance(node, LogicalProject):
            projects.append(node)
        node = node.input
    if not isinstance(node, LogicalScan) or not projects:
        return False
    types = {i: node.source.schema.field(c).type for c, i in node.columns}
    for project in reversed(projects):  # innermost first: each adds the types of its outputs
        empty = pa.schema([pa.field(i, t) for i, t in types.items()]).empty_table()
        added = {}
        for out, e in project.exprs:
            try:
                added[out] = Evaluator(empty, QueryContext(None, _no_tables)).eval(e).type
            except Exception:  # noqa: BLE001 - not typed here: no reason to move the aggregate
                continue
            if pa.types.is_decimal(added[out]) and any(isinstance(x, _ARITHMETIC_NODES) for x in e.walk()):
                return True
        types.update(added)
    return False


def _no_tables(db: str | None, name: str) -> TableSource:
    raise Untranslatable("no table inside a projection")


def reads_outer(plan: LogicalPlan) -> bool:
    return any(isinstance(n, OuterColumn) for node in plan.walk() for e in node.expressions() for n in e.walk())


def _filter(b: RegionBuilder, p: LogicalFilter) -> str:
    cond = b.translator(p.input).condition(p.condition)
    return f"SELECT * FROM ({b.relation(p.input)}) WHERE {cond}"


def _project(b: RegionBuilder, p: LogicalProject) -> str:
    tr = b.translator(p.input)
    items = [f"{tr.sql(e)} AS {quote(i)}" for i, e in p.exprs]
    return f"SELECT {', '.join(items)} FROM ({b.relation(p.input)})"


_SIMPLE_AGGREGATES = {"count_star": "count(*)", "min": "min({})", "max": "max({})", "stddev": "stddev_pop({})",
                      "stddev_samp": "stddev_samp({})", "variance": "var_pop({})", "variance_samp": "var_samp({})"}


def decimal_avg(arg: str, t: pa.DataType, over: str = "", distinct: bool = False) -> str:
    """avg(DECIMAL(p, s)) exactly as the Arrow aggregate gives it: DECIMAL(38, max(s, 4)), rounded half away from
    zero (DuckDB's own avg of a decimal is a DOUBLE). DuckDB sums the decimals exactly (and shares the sum with
    a sum() of the same argument); the quotient is computed on the unscaled integers."""
    scale, out = t.scale, avg_decimal_scale(t.scale)
    d = "DISTINCT " if distinct else ""
    total = f"CAST(sum({d}{arg}){over} * {10 ** scale} AS HUGEINT)"
    count = f"NULLIF(count({d}{arg}){over}, 0)"
    quotient = f"((abs({total}) * {2 * 10 ** (out - scale)} + {count}) // (2 * {count}))"
    step = f"CAST('{decimal.Decimal(1).scaleb(-out)}' AS DECIMAL({out + 1}, {out}))"
    return f"(CAST(sign({total}) * {quotient} AS DECIMAL(38, 0)) * {step})"


def _aggregate_call(call: AggregateCall, child: pa.Schema) -> str:
    args = [quote(a) for a in call.args]
    types = [child.field(a).type for a in call.args]
    f = call.func
    if f == "grouping":
        return f"grouping({', '.join(args)})"
    if f in ("count", "count_distinct_approx"):
        if call.distinct or f == "count_distinct_approx":
            if len(args) == 1:
                return f"count(DISTINCT {args[0]})"
            present = " AND ".join(f"{a} IS NOT NULL" for a in args)
            return f"count(DISTINCT CASE WHEN {present} THEN row({', '.join(args)}) END)"
        return f"count({args[0]})"
    if f == "count_star":
        return "count(*)"
    if f == "group_concat":
        return _group_concat(call, types[0])
    if len(args) != 1 or (call.distinct and f not in ("sum", "avg")):
        raise Untranslatable(f"{f}(DISTINCT)" if call.distinct else f"aggregate {f} of {len(args)} arguments")
    t = types[0]
    d = "DISTINCT " if call.distinct else ""
    if f == "sum" and (pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal128(t)):
        return f"sum({d}{args[0]})"
    if f == "avg" and (pa.types.is_integer(t) or pa.types.is_floating(t)):
        return f"avg({d}{args[0]})"
    if f == "avg" and pa.types.is_decimal128(t):
        return decimal_avg(args[0], t, distinct=call.distinct)
    if f in ("min", "max") and not pa.types.is_null(t):
        return _SIMPLE_AGGREGATES[f].format(args[0])
    if f.startswith(("stddev", "variance")) and (pa.types.is_integer(t) or pa.types.is_floating(t)):
        return _SIMPLE_AGGREGATES[f].format(args[0])
    if f.startswith(("stddev", "variance")) and pa.types.is_decimal128(t):  # a DOUBLE, as the Arrow aggregate's
        return _SIMPLE_AGGREGATES[f].format(f"CAST({args[0]} AS DOUBLE)")
    raise Untranslatable(f"aggregate {f} of {t}")


def _group_concat(call: AggregateCall, t: pa.DataType) -> str:
    """string_agg with the Arrow aggregate's answer: the values as the evaluator prints them (text, or integers,
    which print alike), NULLs skipped, ORDER BY with Doris's NULL placement; DuckDB's DISTINCT orders only by
    the value itself."""
    if call.separator is None:
        return "CAST(NULL AS VARCHAR)"
    value = quote(call.args[0])
    if pa.types.is_integer(t) and not call.distinct:
        value = f"CAST({value} AS VARCHAR)"
    elif not is_string(t):
        raise Untranslatable(f"group_concat of {t}")
    if call.distinct and any(k != call.args[0] for k, _, _ in call.order):
        raise Untranslatable("group_concat(DISTINCT x ORDER BY another key)")
    keys = ", ".join(f"{quote(k)} {'ASC' if asc else 'DESC'} NULLS {'FIRST' if first else 'LAST'}"
                     for k, asc, first in call.order)
    order = f" ORDER BY {keys}" if keys else ""
    separator = "'" + call.separator.replace("'", "''") + "'"
    return f"string_agg({'DISTINCT ' if call.distinct else ''}{value}, {separator}{order})"


def _aggregate(b: RegionBuilder, p: LogicalAggregate) -> str:
    child, out = b.schema(p.input), b.schema(p)
    calls = [f"CAST({_aggregate_call(c, child)} AS {duck_type(out.field(c.out).type)}) AS {quote(c.out)}"
             for c in p.aggregates]
    keys = [quote(k) for k in p.keys]
    source = b.relation(p.input)
    group = f" GROUP BY {', '.join(keys)}" if keys else ""
    if p.grouping_sets is not None:
        sets = ", ".join("(" + ", ".join(quote(k) for k in s) + ")" for s in p.grouping_sets)
        group = f" GROUP BY GROUPING SETS ({sets})"
    return f"SELECT {', '.join(keys + calls)} FROM ({source}){group}"


_JOIN_SQL = {"inner": "JOIN", "left": "LEFT JOIN", "right": "RIGHT JOIN", "full": "FULL JOIN", "semi": "SEMI JOIN",
             "anti": "ANTI JOIN", "right_semi": "SEMI JOIN", "right_anti": "ANTI JOIN"}


def _inner_tree(p: LogicalPlan, leaves: list[LogicalPlan], joins: list[LogicalJoin]) -> None:
    """The relations and joins of a tree of inner / cross joins, left to right (the joins' output order)."""
    if isinstance(p, LogicalJoin) and p.kind in ("inner", "cross"):
        joins.append(p)
        _inner_tree(p.left, leaves, joins)
        _inner_tree(p.right, leaves, joins)
    else:
        leaves.append(p)


def _join(b: RegionBuilder, p: LogicalJoin) -> str:
    if p.kind in ("inner", "cross"):
        leaves: list[LogicalPlan] = []
        joins: list[LogicalJoin] = []
        _inner_tree(p, leaves, joins)
        if len(leaves) > 2 and any(not j.left_keys and j.residual is None for j in joins):
            return _inner_joins(b, leaves, joins)
    conditions = _join_conditions(b.translator(p.left, p.right), [p])
    left, right = b.relation(p.left), b.relation(p.right)
    if p.kind in ("right_semi", "right_anti"):  # DuckDB's SEMI / ANTI JOIN keep the left side's rows
        left, right = right, left
    if not conditions:
        if p.kind in ("cross", "inner"):
            return f"SELECT * FROM ({left}) CROSS JOIN ({right})"
        conditions = ["TRUE"]
    # a "cross" join with conditions is one whose WHERE conjuncts were pushed into it: an inner join
    kind = "inner" if p.kind == "cross" else p.kind
    return f"SELECT * FROM ({left}) {_JOIN_SQL[kind]} ({right}) ON {' AND '.join(conditions)}"


def _join_conditions(tr: ExpressionTranslator, joins: list[LogicalJoin]) -> list[str]:
    """The joins' key equalities and residual conditions as SQL."""
    conditions = []
    for j in joins:
        for lk, rk in zip(j.left_keys, j.right_keys, strict=True):
            if not same_family(tr.type_of(lk), tr.type_of(rk)):
                raise Untranslatable("join keys of different kinds")
            conditions.append(f"{tr.sql(lk)} = {tr.sql(rk)}")
        if j.residual is not None:
            conditions.append(tr.condition(j.residual))
    return conditions


def _inner_joins(b: RegionBuilder, leaves: list[LogicalPlan], joins: list[LogicalJoin]) -> str:
    """A tree of inner joins holding a cartesian product as one flat `FROM r1, r2, ... WHERE <every join
    condition>`: DuckDB orders those joins itself (a comma join `FROM dates, customer, supplier, part,
    lineorder` taken left-deep crosses the dimensions before the fact table joins them: SSB Q4.1). Trees
    whose every join has its keys keep the order the rewrite gave them: on Arrow inputs, without statistics,
    DuckDB's own order was slower (TPC-H Q9 3x)."""
    conditions = _join_conditions(b.translator(*leaves), joins)
    relations = ", ".join(f"({b.relation(leaf)}) AS {quote(f'__j{n}')}" for n, leaf in enumerate(leaves))
    return f"SELECT * FROM {relations}" + (f" WHERE {' AND '.join(conditions)}" if conditions else "")


def _sort(b: RegionBuilder, p: LogicalSort) -> str:
    keys = []
    for k in p.keys:
        nulls_first = k.nulls_first if k.nulls_first is not None else k.ascending
        keys.append(f"{quote(k.column)} {'ASC' if k.ascending else 'DESC'} NULLS {'FIRST' if nulls_first else 'LAST'}")
    return f"SELECT * FROM ({b.relation(p.input)}) ORDER BY {', '.join(keys)}"


def _limit(b: RegionBuilder, p: LogicalLimit) -> str:
    limit = f" LIMIT {p.limit}" if p.limit is not None else ""
    return f"SELECT * FROM ({b.relation(p.input)}){limit} OFFSET {p.offset}"


def _set_operand(b: RegionBuilder, child: LogicalPlan, out: pa.Schema, numbers_widen: bool) -> str:
    """One input of a set operation, its columns renamed to the outputs' ids and of their types: equal
    types pass, NULL columns are typed, and (`numbers_widen`) numbers and times widen as DuckDB casts
    them exactly; anything else (string <-> number ...) raises Untranslatable."""
    schema = b.schema(child)
    items = []
    for src, target in zip(child.output, out, strict=True):
        t = schema.field(src).type
        if t == target.type:
            items.append(f"{quote(src)} AS {quote(target.name)}")
        elif pa.types.is_null(t):
            items.append(f"CAST(NULL AS {duck_type(target.type)}) AS {quote(target.name)}")
        elif numbers_widen and same_family(t, target.type) and not is_string(t):
            items.append(f"CAST({quote(src)} AS {duck_type(target.type)}) AS {quote(target.name)}")
        else:
            raise Untranslatable(f"set operation of {t} and {target.type}")
    return f"SELECT {', '.join(items)} FROM ({b.relation(child)})"


def _union(b: RegionBuilder, p: LogicalUnion) -> str:
    out = b.schema(p)
    return " UNION ALL ".join(f"({_set_operand(b, child, out, False)})" for child in p.inputs)


def _set_operation(b: RegionBuilder, p: LogicalSetOperation) -> str:
    out = b.schema(p)
    op = f"{p.kind.upper()}{'' if p.distinct else ' ALL'}"
    return f"({_set_operand(b, p.left, out, True)}) {op} ({_set_operand(b, p.right, out, True)})"


_WINDOW_SQL = {"stddev": "stddev_pop", "stddev_samp": "stddev_samp", "variance": "var_pop",
               "variance_samp": "var_samp", "count_star": "count"}


def _window(b: RegionBuilder, p: LogicalWindow) -> str:
    tr = b.translator(p.input)
    out = b.schema(p)
    items = []
    for c in p.calls:
        target = duck_type(out.field(c.out).type)
        args = [tr.sql(a) for a in c.args]
        if c.func in ("lag", "lead") and len(args) == 3:  # Doris casts the default to the column's type
            args[2] = f"CAST({args[2]} AS {target})"
        if c.func == "count_star":
            args = ["*"]
        over = []
        if c.partition:
            over.append("PARTITION BY " + ", ".join(tr.sql(e) for e in c.partition))
        if c.order:
            over.append("ORDER BY " + ", ".join(
                f"{tr.sql(e)} {'ASC' if asc else 'DESC'} NULLS {'FIRST' if first else 'LAST'}"
                for e, asc, first in c.order))
        if c.frame:
            over.append(c.frame)
        window = f" OVER ({' '.join(over)})"
        if c.func == "avg" and pa.types.is_decimal128(tr.type_of(c.args[0])):
            call = decimal_avg(args[0], tr.type_of(c.args[0]), window)
        else:
            call = f"{_WINDOW_SQL.get(c.func, c.func)}({', '.join(args)}){window}"
        items.append(f"CAST({call} AS {target}) AS {quote(c.out)}")
    return f"SELECT *, {', '.join(items)} FROM ({b.relation(p.input)})"


_NODES: dict[type[LogicalPlan], Callable] = {
    LogicalFilter: _filter, LogicalProject: _project, LogicalAggregate: _aggregate, LogicalJoin: _join,
    LogicalSort: _sort, LogicalLimit: _limit, LogicalUnion: _union, LogicalWindow: _window,
    LogicalSetOperation: _set_operation,
}
