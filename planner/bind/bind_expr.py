"""Binding scalar expressions: column names -> plan ids, bare CURRENT_DATE-style keywords -> functions,
uncorrelated subqueries -> their computed values (ArrowConst)."""

from __future__ import annotations

from collections.abc import Callable

import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from planner.bind.scope import Scope, unknown_column
from planner.bind.subquery import outer_column, subquery_expr
from planner.expressions import const_node, literal_number
from planner.logical import LogicalPlan
from planner.values import common_array
from sql import expressions as dx
from sql.errors import analysis_error

# run a subquery to completion: (query expression) -> Arrow table
SubqueryRunner = Callable[[exp.Expression], pa.Table]

_KEYWORD_FUNCTIONS: dict[str, Callable[[], exp.Expression]] = {
    "current_date": exp.CurrentDate,
    "current_timestamp": exp.CurrentTimestamp,
    "current_time": exp.CurrentTime,
    "localtime": exp.CurrentTimestamp,
    "localtimestamp": exp.CurrentTimestamp,
    "current_user": exp.CurrentUser,
}


def bound_column(column_id: str) -> exp.Column:
    return exp.Column(this=exp.Identifier(this=column_id, quoted=True))


def contains_aggregate(e: exp.Expression) -> bool:
    return any(True for _ in _aggregates(e))


def _aggregates(e: exp.Expression):  # noqa: ANN202
    """Aggregate calls in e, not looking inside subqueries (they aggregate on their own)."""
    for node in e.dfs(prune=lambda n: isinstance(n, (exp.Subquery, exp.Select))):
        if isinstance(node, exp.AggFunc):
            yield node


def find_aggregates(e: exp.Expression) -> list[exp.AggFunc]:
    return list(_aggregates(e))


# bind a subquery with this scope visible to it: (its plan, the ids of this scope it reads, whether it reads
# any enclosing query's column at all), or None when it reads none (it is then run once, while binding)
CorrelatedBinder = Callable[[exp.Expression], "tuple[LogicalPlan, list[str]] | None"]


LONG_IN_LIST = 64


def literal_list(items: list[exp.Expression]) -> pa.Array | None:
    """An IN list of literals of one kind (numbers, or strings) as an Arrow array of their common type
    (NULLs kept); None when it holds anything else."""
    if not all(isinstance(i, exp.Literal | exp.Null) or (isinstance(i, exp.Neg) and isinstance(i.this, exp.Literal)
                                                          and not i.this.is_string) for i in items):
        return None
    texts = [None if isinstance(i, exp.Null) else f"-{i.this.this}" if isinstance(i, exp.Neg) else i for i in items]
    strings = {isinstance(t, exp.Literal) and t.is_string for t in texts if t is not None}
    if strings == {True}:
        return pa.array([None if t is None else t.this for t in texts], pa.string())
    if strings - {False}:
        return None
    numbers = [pa.scalar(None) if t is None else literal_number(t if isinstance(t, str) else str(t.this))
               for t in texts]
    return common_array(numbers)


def _exists_query(query: exp.Expression) -> exp.Expression:
    """EXISTS reads no column of its query: `SELECT * ...` becomes `SELECT 1 ...` (TPC-H Q21 would read every
    column of lineitem twice), unless aggregates without GROUP BY decide its one row."""
    inner = query.this if isinstance(query, exp.Subquery) else query
    if not isinstance(inner, exp.Select) or any(inner.args.get(k) for k in ("group", "having", "order", "qualify")) \
            or any(e.find(exp.AggFunc, exp.Window) for e in inner.expressions):
        return query
    return inner.copy().select(exp.Literal.number(1), append=False)


class ExpressionBinder:
    def __init__(self, scope: Scope, run_subquery: SubqueryRunner, *, clause: str = "field list",
                 allow_aggregates: bool = True, outer: list[Scope] | None = None,
                 record_outer: Callable[[str], None] | None = None,
                 bind_correlated: CorrelatedBinder | None = None) -> None:
        self.scope = scope
        self.run_subquery = run_subquery
        self.clause = clause
        self.allow_aggregates = allow_aggregates
        self.outer = outer or []  # enclosing queries' scopes, nearest first (inside a subquery)
        self.record_outer = record_outer
        self.bind_correlated = bind_correlated

    def _correlated(self, query: exp.Expression) -> tuple[LogicalPlan, list[str]] | None:
        return self.bind_correlated(query) if self.bind_correlated is not None else None

    def bind(self, e: exp.Expression) -> exp.Expression:
        return e.copy().transform(self._bind_node, copy=False)

    def _bind_node(self, node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Column):
            return self._column(node)
        if isinstance(node, exp.AggFunc) and not self.allow_aggregates:
            raise analysis_error(f"{self._clause_name()} clause can not contain aggregate functions: "
                                 f"{node.sql('mysql')}", 1111, "HY000")
        if isinstance(node, exp.In) and len(node.expressions) == 1 and isinstance(node.expressions[0], dx.ValueList):
            listed = node.expressions[0]
            values = pa.array(list(listed.values), pa.string()) if listed.args["strings"] else \
                common_array([literal_number(t) for t in listed.values])
            return exp.In(this=self.bind(node.this), expressions=[const_node(values)])
        if isinstance(node, exp.In) and len(node.expressions) > LONG_IN_LIST:
            values = literal_list(node.expressions)
            if values is not None:  # bound once as a value set: the rest of planning sees one node, not 10,000
                return exp.In(this=self.bind(node.this), expressions=[const_node(values)])
        if isinstance(node, exp.In) and node.args.get("query") is not None:
            query = node.args["query"]
            correlated = self._correlated(query.this if isinstance(query, exp.Subquery) else query)
            if correlated is not None:
                return subquery_expr("in", self._one_column(correlated[0]), correlated[1], self.bind(node.this))
            values = self._subquery_column(query)
            if len(values) > 1:  # a subquery's column repeats values; the set each once
                values = pc.unique(values)
            return exp.In(this=self.bind(node.this), expressions=[const_node(values)])
        if isinstance(node, exp.Exists):
            query = _exists_query(node.this)
            correlated = self._correlated(query)
            if correlated is not None:
                return subquery_expr("exists", *correlated)
            table = self.run_subquery(query)
            return exp.Boolean(this=table.num_rows > 0)
        if isinstance(node, (exp.Subquery, exp.Select)):
            correlated = self._correlated(node.this if isinstance(node, exp.Subquery) else node)
            if correlated is not None:
                return subquery_expr("scalar", self._one_column(correlated[0]), correlated[1])
            return const_node(self._scalar_subquery(node))
        if isinstance(node, exp.Match):  # the analyzer of the column's INVERTED index cuts both sides into terms
            column = node.this
            found = self.scope.resolve(column.name, column.table or None, column.db or None) \
                if isinstance(column, exp.Column) else None
            analyzer = found.analyzer if found is not None and found.analyzer else "none"
            return exp.Match(this=self.bind(node.this), expression=self.bind(node.expression),
                             kind=node.args.get("kind"), analyzer=exp.Literal.string(analyzer))
        if isinstance(node, exp.Window):  # the select list, ORDER BY and QUALIFY take them out before
            raise analysis_error(f"{self._clause_name()} clause can not contain window functions: "
                                 f"{node.sql('mysql')}", 3593, "HY000")
        return node

    def _clause_name(self) -> str:
        return self.clause.upper().removesuffix(" CLAUSE")

    def _column(self, node: exp.Column) -> exp.Expression:
        if isinstance(node.this, exp.Star):
            raise analysis_error(f"'{node.sql('mysql')}' is not allowed here")
        name = node.name
        table = node.table or None
        db = node.db or None
        col = self.scope.resolve(name, table, db)
        if col is not None:
            return bound_column(col.id)
        for outer in self.outer:  # inside a subquery: a column of an enclosing query (correlation)
            col = outer.resolve(name, table, db)
            if col is not None and self.record_outer is not None:
                self.record_outer(col.id)
                return outer_column(col.id)
        if table is None and name.lower() in _KEYWORD_FUNCTIONS and not node.this.quoted:
            return _KEYWORD_FUNCTIONS[name.lower()]()
        shown = f"{table}.{name}" if table else name
        raise unknown_column(shown)  # Doris names 'table list' whatever the clause

    @staticmethod
    def _one_column(plan: LogicalPlan) -> LogicalPlan:
        if len(plan.output) != 1:
            raise analysis_error("Operand should contain 1 column(s)", 1241, "21000")
        return plan

    def _subquery_column(self, query: exp.Expression) -> pa.Array:
        table = self.run_subquery(query.this if isinstance(query, exp.Subquery) else query)
        if table.num_columns != 1:
            raise analysis_error("Operand should contain 1 column(s)", 1241, "21000")
        return table.column(0).combine_chunks()

    def _scalar_subquery(self, query: exp.Expression) -> pa.Scalar:
        values = self._subquery_column(query)
        if len(values) > 1:
            raise analysis_error("Expected EQ 1 to be returned by expression "
                                 f"{query.sql('mysql')}", 1242, "21000")
        if len(values) == 0:
            return pa.scalar(None, values.type)
        return values[0]
