"""The logical plan: what to compute, not how. Scan, Filter, Project, Aggregate, Join, Sort, Limit,
Union, Values (DESIGN.md, Flows: SELECT).

Columns are identified by binder-assigned ids unique within a query (`k1#3`); expressions are bound
sqlglot expressions whose `exp.Column` names are such ids. Nodes are frozen and check in __post_init__
that every id they reference is produced by their input, so a bad plan fails where it is built.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import TypeVar

import pyarrow as pa
from sqlglot import exp

from planner.context import TableSource
from storage.predicate import ColumnPredicate

_T = TypeVar("_T")


def referenced_ids(e: exp.Expression) -> set[str]:
    return {c.name for c in e.find_all(exp.Column)}


def _check(ids: set[str], available: tuple[str, ...], where: str) -> None:
    missing = ids - set(available)
    if missing:
        raise ValueError(f"{where} references {sorted(missing)} not produced by its input {list(available)}")


class LogicalPlan:
    output: tuple[str, ...]

    def children(self) -> tuple[LogicalPlan, ...]:
        return ()

    def walk(self) -> Iterator[LogicalPlan]:
        yield self
        for c in self.children():
            yield from c.walk()

    def expressions(self) -> list[exp.Expression]:
        return []


@dataclass(frozen=True, eq=False)
class LogicalScan(LogicalPlan):
    source: TableSource
    columns: tuple[tuple[str, str], ...]  # (source column name, output id)
    predicates: tuple[ColumnPredicate, ...] = ()
    # the WHERE conjuncts above this scan as written, kept for EXPLAIN when the scan evaluates them
    # exactly and the Filter above was dropped (rules: drop_exact_filters)
    where: exp.Expression | None = None

    @property
    def output(self) -> tuple[str, ...]:  # type: ignore[override]
        return tuple(i for _, i in self.columns)


@dataclass(frozen=True, eq=False)
class LogicalValues(LogicalPlan):
    """A literal relation: `SELECT` without FROM and `FROM DUAL` read one row with no columns."""

    table: pa.Table

    @property
    def output(self) -> tuple[str, ...]:  # type: ignore[override]
        return tuple(self.table.column_names)


@dataclass(frozen=True, eq=False)
class LogicalFilter(LogicalPlan):
    input: LogicalPlan
    condition: exp.Expression

    def __post_init__(self) -> None:
        _check(referenced_ids(self.condition), self.input.output, "Filter")

    @property
    def output(self) -> tuple[str, ...]:  # type: ignore[override]
        return self.input.output

    def children(self) -> tuple[LogicalPlan, ...]:
        return (self.input,)

    def expressions(self) -> list[exp.Expression]:
        return [self.condition]


@dataclass(frozen=True, eq=False)
class LogicalProject(LogicalPlan):
    input: LogicalPlan
    exprs: tuple[tuple[str, exp.Expression], ...]  # (output id, bound expression)

    def __post_init__(self) -> None:
        for _, e in self.exprs:
            _check(referenced_ids(e), self.input.output, "Project")
        # the input columns it passes through as they are, or None when it computes something (a point query's
        # projection is executed on every run: asking each expression its name cost ~2 us a column)
        plain = tuple(e.name for _, e in self.exprs if type(e) is exp.Column)
        object.__setattr__(self, "plain_columns", plain if len(plain) == len(self.exprs) else None)

    @property
    def output(self) -> tuple[str, ...]:  # type: ignore[override]
        return tuple(i for i, _ in self.exprs)

    def children(self) -> tuple[LogicalPlan, ...]:
        return (self.input,)

    def expressions(self) -> list[exp.Expression]:
        return [e for _, e in self.exprs]


@dataclass(frozen=True)
class AggregateCall:
    func: str  # count_star, count, sum, min, max, avg, group_concat, stddev ...
    args: tuple[str, ...]  # input column ids
    distinct: bool
    out: str
    separator: str | None = ","  # group_concat's; None: a NULL separator, which makes the result NULL
    # ORDER BY inside the call (group_concat): (input column id, ascending, nulls first)
    order: tuple[tuple[str, bool, bool], ...] = ()

    @property
    def inputs(self) -> tuple[str, ...]:
        """Every input column the call reads: its arguments and its ORDER BY keys."""
        return self.args + tuple(k for k, _, _ in self.order)


@dataclass(frozen=True, eq=False)
class LogicalAggregate(LogicalPlan):
    """GROUP BY `keys` (input ids, passed through under the same id) computing `aggregates`.
    No keys: exactly one output row, even over empty input."""

    input: LogicalPlan
    keys: tuple[str, ...]
    aggregates: tuple[AggregateCall, ...] = ()
    # GROUP BY ROLLUP / CUBE / GROUPING SETS: the key subsets grouped by (keys outside a set are NULL in
    # its rows); `grouping` calls (GROUPING / GROUPING_ID) give each row's bit vector of rolled-up keys
    grouping_sets: tuple[tuple[str, ...], ...] | None = None

    def __post_init__(self) -> None:
        used = set(self.keys) | {a for call in self.aggregates for a in call.inputs}
        _check(used, self.input.output, "Aggregate")
        for s in self.grouping_sets or ():
            _check(set(s), self.keys, "Grouping set")

    @property
    def output(self) -> tuple[str, ...]:  # type: ignore[override]
        return self.keys + tuple(a.out for a in self.aggregates)

    def children(self) -> tuple[LogicalPlan, ...]:
        return (self.input,)


JOIN_KINDS = ("inner", "left", "right", "full", "cross", "semi", "anti", "right_semi", "right_anti")
# LEFT SEMI / ANTI JOIN give the left side's rows (those with a match / without one), RIGHT ... the right's
LEFT_ONLY = ("semi", "anti")
RIGHT_ONLY = ("right_semi", "right_anti")


@dataclass(frozen=True, eq=False)
class LogicalJoin(LogicalPlan):
    left: LogicalPlan
    right: LogicalPlan
    kind: str
    # equi-join keys: bound expressions over the left / right input
    left_keys: tuple[exp.Expression, ...] = ()
    right_keys: tuple[exp.Expression, ...] = ()
    residual: exp.Expression | None = None  # the rest of ON, over both inputs

    def __post_init__(self) -> None:
        assert self.kind in JOIN_KINDS, self.kind
        for k in self.left_keys:
            _check(referenced_ids(k), self.left.output, "Join left key")
        for k in self.right_keys:
            _check(referenced_ids(k), self.right.output, "Join right key")
        if self.residual is not None:
            _check(referenced_ids(self.residual), self.left.output + self.right.output, "Join condition")

    @property
    def output(self) -> tuple[str, ...]:  # type: ignore[override]
        if self.kind in LEFT_ONLY:
            return self.left.output
        if self.kind in RIGHT_ONLY:
            return self.right.output
        return self.left.output + self.right.output

    def children(self) -> tuple[LogicalPlan, ...]:
        return (self.left, self.right)

    def expressions(self) -> list[exp.Expression]:
        out = [*self.left_keys, *self.right_keys]
        return out + ([self.residual] if self.residual is not None else [])


@dataclass(frozen=True)
class SortKey:
    column: str
    ascending: bool = True
    nulls_first: bool | None = None  # None: MySQL default (NULLs first ascending, last descending)


@dataclass(frozen=True, eq=False)
class LogicalSort(LogicalPlan):
    input: LogicalPlan
    keys: tuple[SortKey, ...]

    def __post_init__(self) -> None:
        _check({k.column for k in self.keys}, self.input.output, "Sort")

    @property
    def output(self) -> tuple[str, ...]:  # type: ignore[override]
        return self.input.output

    def children(self) -> tuple[LogicalPlan, ...]:
        return (self.input,)


@dataclass(frozen=True, eq=False)
class LogicalLimit(LogicalPlan):
    input: LogicalPlan
    limit: int | None
    offset: int = 0

    @property
    def output(self) -> tuple[str, ...]:  # type: ignore[override]
        return self.input.output

    def children(self) -> tuple[LogicalPlan, ...]:
        return (self.input,)


@dataclass(frozen=True, eq=False)
class LogicalUnion(LogicalPlan):
    """UNION ALL of inputs with the same column count, positionally; outputs get new ids.
    UNION DISTINCT is this plus an Aggregate on every column."""

    inputs: tuple[LogicalPlan, ...]
    output_ids: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        for i in self.inputs:
            if len(i.output) != len(self.output_ids):
                raise ValueError("Union inputs must have the same number of columns")

    @property
    def output(self) -> tuple[str, ...]:  # type: ignore[override]
        return self.output_ids

    def children(self) -> tuple[LogicalPlan, ...]:
        return self.inputs


@dataclass(frozen=True, eq=False)
class LogicalSetOperation(LogicalPlan):
    """INTERSECT / EXCEPT [ALL | DISTINCT] of two inputs with the same column count, positionally; the
    outputs get new ids. NULLs compare equal, as in every set operation."""

    left: LogicalPlan
    right: LogicalPlan
    kind: str  # intersect / except
    distinct: bool
    output_ids: tuple[str, ...]

    def __post_init__(self) -> None:
        if not len(self.left.output) == len(self.right.output) == len(self.output_ids):
            raise ValueError("set operation inputs must have the same number of columns")

    @property
    def output(self) -> tuple[str, ...]:  # type: ignore[override]
        return self.output_ids

    def children(self) -> tuple[LogicalPlan, ...]:
        return (self.left, self.right)


@dataclass(frozen=True)
class WindowCall:
    """One `func(args) OVER (PARTITION BY ... ORDER BY ... frame)`; expressions are bound over the input."""

    out: str
    func: str  # row_number, rank, dense_rank, percent_rank, cume_dist, ntile, lag, lead, first_value,
    #            last_value, nth_value, or an aggregate: count_star, count, sum, avg, min, max, stddev ...
    args: tuple[exp.Expression, ...]
    partition: tuple[exp.Expression, ...] = ()
    order: tuple[tuple[exp.Expression, bool, bool], ...] = ()  # (key, ascending, nulls first)
    frame: str | None = None  # "ROWS BETWEEN 2 PRECEDING AND CURRENT ROW", checked by the binder

    def expressions(self) -> list[exp.Expression]:
        return [*self.args, *self.partition, *(k for k, _, _ in self.order)]


@dataclass(frozen=True, eq=False)
class LogicalWindow(LogicalPlan):
    """The input's rows with one more column per window call."""

    input: LogicalPlan
    calls: tuple[WindowCall, ...]

    def __post_init__(self) -> None:
        for call in self.calls:
            for e in call.expressions():
                _check(referenced_ids(e), self.input.output, "Window")

    @property
    def output(self) -> tuple[str, ...]:  # type: ignore[override]
        return self.input.output + tuple(c.out for c in self.calls)

    def children(self) -> tuple[LogicalPlan, ...]:
        return (self.input,)

    def expressions(self) -> list[exp.Expression]:
        return [e for c in self.calls for e in c.expressions()]


def explain_tree(plan: LogicalPlan, indent: int = 0) -> str:
    """A compact text form of the plan, for tests and debugging."""
    pad = "  " * indent
    name = type(plan).__name__
    detail = ""
    if isinstance(plan, LogicalScan):
        detail = f" {plan.source.name} cols={[c for c, _ in plan.columns]} preds={[(p.column, p.op.value, p.values) for p in plan.predicates]}"
        index = getattr(plan.source, "index", None)  # an OLAP scan: the rules' decisions
        if index is not None:
            detail += (f" index={index.name} preaggregation={plan.source.preaggregation_on}"
                       f" partitions={len(plan.source.selected_partition_ids)}")
    elif isinstance(plan, LogicalFilter):
        detail = f" {plan.condition.sql()}"
    elif isinstance(plan, LogicalJoin):
        detail = f" {plan.kind} keys={[k.sql() for k in plan.left_keys]}={[k.sql() for k in plan.right_keys]}"
    lines = [f"{pad}{name}{detail}"]
    for c in plan.children():
        lines.append(explain_tree(c, indent + 1))
    return "\n".join(lines)


def used_ids(plan: LogicalPlan) -> set[str]:
    """Every column id some node of `plan` consumes, plus the plan's own output."""
    used: set[str] = set(plan.output)
    for node in plan.walk():
        for e in node.expressions():
            used |= referenced_ids(e)
        if isinstance(node, LogicalAggregate):
            used |= set(node.keys)
            used |= {a for call in node.aggregates for a in call.inputs}
        elif isinstance(node, LogicalSort):
            used |= {k.column for k in node.keys}
        elif isinstance(node, LogicalUnion | LogicalSetOperation):
            for child in node.children():  # a set operation reads every column of its inputs
                used |= set(child.output)
    return used


def evolve(node: _T, **changes: object) -> _T:
    """`dataclasses.replace` without running __init__ and __post_init__ again, for changes that leave what they
    derived or checked valid: a rule's decision on a scan's source, a scan's new source or predicate values. A
    point query's plan is re-decided on every run, and replace() was a tenth of it."""
    new = object.__new__(type(node))
    new.__dict__.update(node.__dict__)
    new.__dict__.update(changes)
    return new


def with_children(plan: LogicalPlan, children: list[LogicalPlan]) -> LogicalPlan:
    """`plan` over new children. When every child produces the same ids as the one it replaces (a rule
    changed something below, such as a scan's source), the node's references stay valid and it is copied
    without re-checking them: the checks walk every expression, and each rule rebuilds every ancestor of
    every scan it touches."""
    old = plan.children()
    if len(old) == len(children) and all(n.output == o.output for n, o in zip(children, old, strict=True)):
        node = evolve(plan)  # copy.copy costs several times more (a point query's plan is rebuilt each run)
        if isinstance(plan, LogicalJoin | LogicalSetOperation):
            object.__setattr__(node, "left", children[0])
            object.__setattr__(node, "right", children[1])
        elif isinstance(plan, LogicalUnion):
            object.__setattr__(node, "inputs", tuple(children))
        elif old:
            object.__setattr__(node, "input", children[0])
        return node
    if isinstance(plan, LogicalJoin | LogicalSetOperation):
        return replace(plan, left=children[0], right=children[1])
    if isinstance(plan, LogicalUnion):
        return replace(plan, inputs=tuple(children))
    if hasattr(plan, "input"):
        return replace(plan, input=children[0])  # type: ignore[call-arg]
    return plan
