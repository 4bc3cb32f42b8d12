"""Correlated subqueries: a subquery that names a column of an enclosing query stays in the plan as a
SubqueryExpr (EXISTS, IN, or a scalar) over its own bound plan, whose reads of the enclosing query's columns
are OuterColumn nodes. DuckDB runs them where they stand (it decorrelates them itself); the planner's
column ids are unique in a statement, so an outer column's id names it in the generated SQL as well.

An uncorrelated subquery is still computed once while binding (its value becomes a constant the scans can
use), as before.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
from sqlglot import exp

from planner.expressions import Evaluator, register
from planner.logical import LogicalPlan
from sql.errors import analysis_error


class OuterColumn(exp.Expression):
    """A read of an enclosing query's column (its plan id) from inside a correlated subquery."""

    arg_types = {"this": True}

    @property
    def id(self) -> str:
        return self.args["this"]


def outer_column(column_id: str) -> OuterColumn:
    node = OuterColumn()
    node.args["this"] = column_id  # a plain string, not a child the binders would visit
    return node


class SubqueryExpr(exp.Expression):
    """`EXISTS (q)`, `x IN (q)` (this = x) or a scalar `(q)` whose plan reads columns of this query.
    `refs` are those columns as ordinary reads, so every rule sees that the expression needs them. The
    plan and kind are plain values in args: a copy of the expression shares the (immutable) plan."""

    arg_types = {"this": False, "refs": False, "kind": True, "plan": True}

    @property
    def kind(self) -> str:
        return self.args["kind"]

    @property
    def plan(self) -> LogicalPlan:
        return self.args["plan"]

    # the plan is compared by identity: sqlglot hashes a tree itself, reading each node's `_hash`
    @property
    def _hash(self) -> int:
        args = self.args  # read while sqlglot builds the node too, before kind and plan are set
        return hash((SubqueryExpr, args.get("kind"), id(args.get("plan")), args.get("this"),
                     tuple(args.get("refs") or ())))

    @_hash.setter
    def _hash(self, value: int | None) -> None:
        pass

    def __hash__(self) -> int:
        return self._hash


def subquery_expr(kind: str, plan: LogicalPlan, refs: list[str], this: exp.Expression | None = None
                  ) -> SubqueryExpr:
    node = SubqueryExpr(this=this, refs=[exp.Column(this=exp.Identifier(this=r, quoted=True)) for r in refs])
    node.args["kind"] = kind  # plain values: set directly, sqlglot would try to parent them
    node.args["plan"] = plan
    return node


@register(OuterColumn)
def _outer(ev: Evaluator, e: OuterColumn) -> Any:
    types = ev.ctx.outer_types
    if types is None or e.id not in types:
        raise analysis_error("A correlated subquery can only run in DuckDB")
    return pa.scalar(None, types[e.id])  # type probes only: real rows are DuckDB's


@register(SubqueryExpr)
def _subquery(ev: Evaluator, e: SubqueryExpr) -> Any:
    raise analysis_error("A correlated subquery can only run in DuckDB")
