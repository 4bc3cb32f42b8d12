"""SELECT / UNION binding: FROM items and joins, WHERE, GROUP BY / aggregates, HAVING, the select
list, DISTINCT, ORDER BY (alias, position, expression), LIMIT / OFFSET."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass

import pyarrow as pa
from sqlglot import exp

from planner.bind.bind_aggregate import AggregateBuilder
from planner.bind.bind_expr import ExpressionBinder, bound_column, find_aggregates
from planner.bind.bind_window import WindowBinder, contains_window
from planner.bind.naming import output_name
from planner.bind.scope import Scope, ScopeColumn, unknown_column
from planner.bind.views import ViewDefinition, check_view_columns, parse_view
from planner.context import QueryContext, TableSource
from planner.functions.match import analyzer_key
from planner.logical import (
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
    SortKey,
    referenced_ids,
)
from planner.olap_source import OlapTableSource
from planner.rules.scan_predicates import literal_value
from planner.time_travel import MODES, travel
from sql.errors import analysis_error


@dataclass
class BoundQuery:
    plan: LogicalPlan
    names: list[str]  # result column names, parallel to plan.output


@dataclass
class SelectItem:
    name: str
    expr: exp.Expression | None  # as written (alias removed); None for `*` expansions
    bound: exp.Expression | None = None  # pre-bound (star expansions)
    alias: str | None = None


def _arg(node: exp.Expression, name: str) -> exp.Expression | None:
    v = node.args.get(name + "_")
    return v if v is not None else node.args.get(name)


def split_conjuncts(e: exp.Expression) -> list[exp.Expression]:
    if isinstance(e, exp.And):
        return split_conjuncts(e.this) + split_conjuncts(e.expression)
    if isinstance(e, exp.Paren):
        return split_conjuncts(e.this)
    return [e]


def conjoin(parts: list[exp.Expression]) -> exp.Expression | None:
    if not parts:
        return None
    out = parts[0]
    for p in parts[1:]:
        out = exp.And(this=out, expression=p)
    return out


def _int_literal(node: exp.Expression | None, what: str) -> int | None:
    if node is None:
        return None
    e = node.expression if isinstance(node, (exp.Limit, exp.Offset)) else node
    if isinstance(e, exp.Literal) and not e.is_string:
        return int(e.this)
    raise analysis_error(f"{what} must be an integer constant")


class SelectBinder:
    def __init__(self, ctx: QueryContext, run_query: Callable[[exp.Expression, dict], pa.Table],
                 ctes: dict[str, exp.Expression] | None = None,
                 counter: itertools.count | None = None, outer: list[Scope] | None = None,
                 record_outer: Callable[[str], None] | None = None) -> None:
        self.ctx = ctx
        self.run_query = run_query  # executes a subquery (same context, visible CTEs)
        self.ctes = dict(ctes or {})
        self.counter = counter or itertools.count()
        self.id_names: dict[str, str] = {}
        # inside a correlated subquery: the enclosing queries' scopes (nearest first), and where a read of
        # one of their columns is reported
        self.outer = outer or []
        self.record_outer = record_outer
        self.view_depth = 0  # views being expanded around this query

    # -- ids ------------------------------------------------------------------------------------------
    def new_id(self, hint: str) -> str:
        cid = f"{hint}#{next(self.counter)}"
        self.id_names[cid] = hint
        return cid

    def _child(self, outer: list[Scope] | None = None, record_outer: Callable[[str], None] | None = None
               ) -> SelectBinder:
        """A binder for a nested query: a derived table sees the same enclosing scopes as this query; a
        subquery in an expression sees this query's scope too (`outer`)."""
        child = SelectBinder(self.ctx, self.run_query, self.ctes, self.counter,
                             self.outer if outer is None else outer,
                             self.record_outer if record_outer is None else record_outer)
        child.id_names = self.id_names
        child.view_depth = self.view_depth
        return child

    def bind_correlated(self, query: exp.Expression, scope: Scope) -> tuple[LogicalPlan, list[str]] | None:
        """Bind a subquery of an expression over `scope`. None when it reads no enclosing query's column
        (the caller runs it once instead); else its rewritten plan and the ids of `scope` it reads. Reads
        of scopes further out are reported to this query's own enclosing query."""
        from planner.rewrite import rewrite  # rewrite imports this module

        read: set[str] = set()
        bound = self._child([scope, *self.outer], read.add).bind_query(query)
        if not read:
            return None
        here = {c.id for c in scope.columns}
        for column_id in sorted(read - here):
            if self.record_outer is not None:
                self.record_outer(column_id)
        return rewrite(bound.plan, self.ctx), sorted(read & here)

    def run_subquery(self, q: exp.Expression) -> pa.Table:
        return self.run_query(q, self.ctes)

    def _full_group_by(self) -> bool:
        """MySQL's ONLY_FULL_GROUP_BY (Doris's default sql_mode); mysqldump clears it."""
        try:
            mode = self.ctx.variables("session", "sql_mode")
        except Exception:  # noqa: BLE001 - a context without variables keeps the strict default
            return True
        return mode is None or "ONLY_FULL_GROUP_BY" in str(mode).upper()

    def expr_binder(self, scope: Scope, clause: str = "field list", allow_aggregates: bool = True) -> ExpressionBinder:
        return ExpressionBinder(scope, self.run_subquery, clause=clause, allow_aggregates=allow_aggregates,
                                outer=self.outer, record_outer=self.record_outer,
                                bind_correlated=lambda q: self.bind_correlated(q, scope))

    # -- queries ---------------------------------------------------------------------------------------
    def bind_query(self, node: exp.Expression) -> BoundQuery:
        with_ = _arg(node, "with")
        if with_ is not None:
            for cte in with_.expressions:
                self.ctes[cte.alias] = cte.this
        if isinstance(node, exp.Subquery):
            return self.bind_query(node.this)
        if isinstance(node, exp.Select):
            return self.bind_select(node)
        if isinstance(node, exp.Union):
            return self.bind_union(node)
        if isinstance(node, exp.Except | exp.Intersect):
            return self.bind_set_operation(node)
        raise analysis_error(f"Unsupported query: {node.sql('mysql')[:80]}", 1235, "42000")

    def _set_inputs(self, node: exp.SetOperation) -> tuple[BoundQuery, BoundQuery, tuple[str, ...]]:
        left = self._child().bind_query(node.this)
        right = self._child().bind_query(node.expression)
        if len(left.names) != len(right.names):
            raise analysis_error("The used SELECT statements have a different number of columns", 1222, "21000")
        return left, right, tuple(self.new_id(n) for n in left.names)

    def bind_union(self, node: exp.Union) -> BoundQuery:
        left, right, ids = self._set_inputs(node)
        plan: LogicalPlan = LogicalUnion((left.plan, right.plan), ids)
        if node.args.get("distinct", True):
            plan = LogicalAggregate(plan, ids)
        return self._set_operation_tail(node, plan, left.names, ids)

    def bind_set_operation(self, node: exp.Intersect | exp.Except) -> BoundQuery:
        left, right, ids = self._set_inputs(node)
        kind = "intersect" if isinstance(node, exp.Intersect) else "except"
        plan = LogicalSetOperation(left.plan, right.plan, kind, node.args.get("distinct", True) is not False, ids)
        return self._set_operation_tail(node, plan, left.names, ids)

    def _set_operation_tail(self, node: exp.Expression, plan: LogicalPlan, names: list[str],
                            ids: tuple[str, ...]) -> BoundQuery:
        """ORDER BY / LIMIT written after the last SELECT of a UNION / INTERSECT / EXCEPT."""
        order = node.args.get("order")
        if order is not None:
            keys = []
            for o in order.expressions:
                keys.append(SortKey(self._union_order_column(o.this, names, ids), not o.args.get("desc"),
                                    o.args.get("nulls_first")))
            plan = LogicalSort(plan, tuple(keys))
        plan = self._limit(plan, node)
        return BoundQuery(plan, names)

    def _union_order_column(self, e: exp.Expression, names: list[str], ids: tuple[str, ...]) -> str:
        if isinstance(e, exp.Literal) and not e.is_string:
            k = int(e.this)
            if not 1 <= k <= len(ids):
                raise unknown_column(str(k), "order clause")
            return ids[k - 1]
        if isinstance(e, exp.Column):
            for n, i in zip(names, ids, strict=True):
                if n.lower() == e.name.lower():
                    return i
        raise unknown_column(e.sql("mysql"), "order clause")

    def _limit(self, plan: LogicalPlan, node: exp.Expression) -> LogicalPlan:
        limit = _int_literal(node.args.get("limit"), "LIMIT")
        offset = _int_literal(node.args.get("offset"), "OFFSET") or 0
        if limit is None and not offset:
            return plan
        return LogicalLimit(plan, limit, offset)

    # -- SELECT ----------------------------------------------------------------------------------------
    def bind_select(self, sel: exp.Select) -> BoundQuery:
        plan, scope = self.bind_from(sel)
        where = _arg(sel, "where")
        if where is not None:
            cond = self.expr_binder(scope, "where clause", allow_aggregates=False).bind(where.this)
            plan = LogicalFilter(plan, cond)

        items = self._select_items(sel, scope)
        group = _arg(sel, "group")
        having = _arg(sel, "having")
        order = _arg(sel, "order")
        qualify = _arg(sel, "qualify")
        # window calls (select list, ORDER BY, QUALIFY) are evaluated after GROUP BY / HAVING: swap them
        # for references now, bind their parts with the post-aggregation binder below
        windows = WindowBinder(self.new_id)
        for item in items:
            if item.expr is not None and contains_window(item.expr):
                item.expr = windows.extract(item.expr)
        qualify_expr = None
        if qualify is not None:
            qualify_expr = windows.extract(self._substitute_aliases(qualify.this, items, scope))
        order_exprs = [windows.extract(o.this) if contains_window(o.this) else o.this
                       for o in (order.expressions if order is not None else [])]
        written = [*(i.expr for i in items if i.expr is not None), *([having.this] if having is not None else []),
                   *order_exprs]
        aggregated = group is not None or bool(windows.aggregates()) or any(
            find_aggregates(e) or e.find(exp.Grouping, exp.GroupingId) for e in written)

        binder = self.expr_binder(scope)
        if aggregated:
            builder = AggregateBuilder(self.new_id, self.id_names, full_group_by=self._full_group_by())
            if group is not None:
                builder.grouping_sets = self._grouping_sets(
                    group, lambda g: builder.add_key(self._bind_group_key(g, items, scope, binder)))

            def bind_post(e: exp.Expression) -> exp.Expression:
                return builder.rewrite(binder.bind(e))
        else:
            builder = None

            def bind_post(e: exp.Expression) -> exp.Expression:
                return binder.bind(e)

        outputs: list[tuple[str, exp.Expression]] = []
        for item in items:
            if item.bound is not None:
                bound = builder.rewrite(item.bound) if builder is not None else item.bound
            else:
                bound = windows.resolve(bind_post(item.expr))
            outputs.append((self.new_id(item.name), bound))

        having_bound = None
        if having is not None:
            # without aggregation MySQL's HAVING is a filter that may name select-list aliases
            having_bound = bind_post(self._substitute_aliases(having.this, items, scope))

        # ORDER BY: output column by position / alias, else an expression (hidden column if new)
        sort_keys: list[SortKey] = []
        hidden: list[tuple[str, exp.Expression]] = []
        for o, written in zip(order.expressions if order is not None else [], order_exprs, strict=True):
            cid = self._order_column(written, items, outputs, bind_post)
            if cid is None:
                # a select-list alias inside an ORDER BY expression, where no FROM column has its name
                bound = windows.resolve(bind_post(self._substitute_aliases(written, items, scope, unresolved=True)))
                cid = next((i for i, b in outputs + hidden if b == bound), None)
                if cid is None:
                    if sel.args.get("distinct"):
                        raise analysis_error("ORDER BY expression is not in SELECT list, which is incompatible "
                                             "with DISTINCT", 3065, "HY000")
                    cid = self.new_id("order")
                    hidden.append((cid, bound))
            sort_keys.append(SortKey(cid, not o.args.get("desc"), o.args.get("nulls_first")))

        # window calls and QUALIFY may name aggregates: bound before the aggregate is built
        window_calls = windows.bind_calls(bind_post)
        qualify_bound = windows.resolve(bind_post(qualify_expr)) if qualify_expr is not None else None
        if builder is not None:
            plan = builder.build(plan)
        if having_bound is not None:
            plan = LogicalFilter(plan, having_bound)
        if window_calls:
            plan = LogicalWindow(plan, window_calls)
        if qualify_bound is not None:
            plan = LogicalFilter(plan, qualify_bound)
        plan = LogicalProject(plan, tuple(outputs + hidden))
        if sel.args.get("distinct"):
            plan = LogicalAggregate(plan, tuple(i for i, _ in outputs))
        if sort_keys:
            plan = LogicalSort(plan, tuple(sort_keys))
        plan = self._limit(plan, sel)
        if hidden:
            plan = LogicalProject(plan, tuple((i, bound_column(i)) for i, _ in outputs))
        return BoundQuery(plan, [i.name for i in items])

    def _grouping_sets(self, group: exp.Group, key: Callable[[exp.Expression], exp.Expression]
                       ) -> list[list[exp.Expression]] | None:
        """GROUP BY's keys through `key` (which adds each to the aggregate), and the grouping sets that
        ROLLUP / CUBE / GROUPING SETS / WITH ROLLUP make of them (None for a plain GROUP BY). Several
        items combine as SQL says: every set of one with every set of the others."""
        components: list[list[list[exp.Expression]]] = []
        expanded = False
        for g in group.expressions:
            if isinstance(g, exp.Rollup | exp.Cube):
                expanded = True
                components.append(_expand(g, [key(e) for e in g.expressions]))
            elif isinstance(g, exp.GroupingSets):
                expanded = True
                sets = []
                for s in g.expressions:
                    members = s.expressions if isinstance(s, exp.Tuple) else [s.this] if isinstance(s, exp.Paren) else [s]
                    sets.append([key(e) for e in members])
                components.append(sets)
            else:
                components.append([[key(g)]])
        for kind in ("rollup", "cube"):  # GROUP BY a, b WITH ROLLUP: over the whole list
            if group.args.get(kind):
                plain = [k for c in components for s in c for k in s]
                components = [_expand(exp.Rollup() if kind == "rollup" else exp.Cube(), plain)]
                expanded = True
        if not expanded:
            return None
        sets: list[list[exp.Expression]] = [[]]
        for component in components:
            sets = [a + b for a in sets for b in component]
            if len(sets) > MAX_GROUPING_SETS:
                raise analysis_error(f"Too many sets in GROUP BY clause, the max grouping sets size is "
                                     f"{MAX_GROUPING_SETS}")
        return [[k for i, k in enumerate(s) if all(k is not x for x in s[:i])] for s in sets]

    def _select_items(self, sel: exp.Select, scope: Scope) -> list[SelectItem]:
        items: list[SelectItem] = []
        for e in sel.expressions:
            if isinstance(e, exp.Star):
                cols = scope.star()
                if not cols:
                    raise analysis_error("SELECT * with no tables specified is not valid", 1096, "HY000")
                items.extend(self._star_items(e, cols, scope))
            elif isinstance(e, exp.Column) and isinstance(e.this, exp.Star):
                items.extend(self._star_items(e.this, scope.star(e.table), scope))
            else:
                alias = e.alias if isinstance(e, exp.Alias) else None
                if alias is None and isinstance(e, exp.Paren) and isinstance(e.unnest(), exp.Column):
                    e = e.unnest()  # `SELECT DISTINCT(x)`: the column x, named x
                items.append(SelectItem(output_name(e), e.unalias() if alias else e, None, alias))
        return items

    def _star_items(self, star: exp.Star, cols: list[ScopeColumn], scope: Scope) -> list[SelectItem]:
        """`*`, `* EXCEPT (c, ...)` (those columns left out) and `* REPLACE (expr AS c, ...)` (c computed by
        expr, in its place)."""
        names = {c.name.lower() for c in cols}
        excluded = set()
        for column in star.args.get("except_") or star.args.get("except") or []:
            name = column.name.lower()
            if name not in names:
                raise unknown_column(column.sql("mysql"), "field list")
            excluded.add(name)
        replaced: dict[str, exp.Expression] = {}
        for alias in star.args.get("replace") or []:
            name = alias.alias.lower()
            if name not in names:
                raise unknown_column(alias.alias, "field list")
            replaced[name] = alias.this
        kept = [c for c in cols if c.name.lower() not in excluded]
        if not kept:
            raise analysis_error("SELECT * EXCEPT leaves no column")
        return [SelectItem(c.name, replaced[c.name.lower()], None, c.name) if c.name.lower() in replaced
                else SelectItem(c.name, None, bound_column(c.id)) for c in kept]

    def _alias_item(self, e: exp.Expression, items: list[SelectItem]) -> SelectItem | None:
        if isinstance(e, exp.Column) and not e.table and isinstance(e.this, exp.Identifier):
            for item in items:
                if item.alias is not None and item.alias.lower() == e.name.lower():
                    return item
        return None

    def _bind_group_key(self, g: exp.Expression, items: list[SelectItem], scope: Scope,
                        binder: ExpressionBinder) -> exp.Expression:
        if isinstance(g, exp.Literal) and not g.is_string:
            k = int(g.this)
            if not 1 <= k <= len(items):
                raise unknown_column(str(k), "group statement")
            item = items[k - 1]
        elif isinstance(g, exp.Column) and not g.table and scope.resolve(g.name) is None:
            item = self._alias_item(g, items)  # GROUP BY alias, when no FROM column has that name
            if item is None:
                raise unknown_column(g.name, "group statement")
        else:
            return binder.bind(g)
        if item.bound is not None:
            return item.bound
        if find_aggregates(item.expr):
            raise analysis_error(f"GROUP BY expression must not contain aggregate functions: {item.name}")
        return binder.bind(item.expr)

    def _substitute_aliases(self, e: exp.Expression, items: list[SelectItem], scope: Scope,
                            unresolved: bool = False) -> exp.Expression:
        """HAVING may name select-list aliases (MySQL resolves them before FROM columns); with `unresolved`,
        only names no FROM column has (an ORDER BY expression)."""

        def fn(node: exp.Expression) -> exp.Expression:
            if unresolved and (not isinstance(node, exp.Column) or node.table or scope.resolve(node.name) is not None):
                return node
            item = self._alias_item(node, items)
            if item is not None and item.expr is not None:
                return item.expr.copy()
            return node

        return e.copy().transform(fn, copy=False)

    def _order_column(self, e: exp.Expression, items: list[SelectItem], outputs: list[tuple[str, exp.Expression]],
                      bind_post: Callable[[exp.Expression], exp.Expression]) -> str | None:
        if isinstance(e, exp.Literal) and not e.is_string:
            k = int(e.this)
            if not 1 <= k <= len(outputs):
                raise unknown_column(str(k), "order clause")
            return outputs[k - 1][0]
        if isinstance(e, exp.Column) and not e.table and isinstance(e.this, exp.Identifier):
            for item, (cid, _) in zip(items, outputs, strict=True):
                if item.alias is not None and item.alias.lower() == e.name.lower():
                    return cid
            # an unaliased select-list column of that name (`SELECT s.item_id ... ORDER BY item_id` with
            # item_id in several FROM tables): the select list answers first, as in MySQL
            named = [cid for item, (cid, _) in zip(items, outputs, strict=True)
                     if item.alias is None and isinstance(item.expr, exp.Column) and item.name.lower() == e.name.lower()]
            if len(named) == 1:
                return named[0]
        return None

    # -- FROM ------------------------------------------------------------------------------------------
    def bind_from(self, sel: exp.Select) -> tuple[LogicalPlan, Scope]:
        from_ = _arg(sel, "from")
        if from_ is None:
            return self._dual(), Scope()
        plan, scope = self.bind_table(from_.this)
        for join in sel.args.get("joins") or []:
            plan, scope = self.bind_join(plan, scope, join)
        return plan, scope

    def _dual(self) -> LogicalPlan:
        cid = self.new_id("dual")
        return LogicalValues(pa.table({cid: pa.array([None], pa.null())}))

    def bind_table(self, node: exp.Expression) -> tuple[LogicalPlan, Scope]:
        if isinstance(node, exp.Table):
            name = node.name
            db = node.db or None
            alias = node.alias or name
            if db is None and name.lower() == "dual" and not node.this.quoted:
                return self._dual(), Scope()
            version = node.args.get("version")
            if version is not None and (db is None and name in self.ctes or self.ctx.resolve_view is not None
                                        and self.ctx.resolve_view(db, name) is not None):
                raise analysis_error(f"FOR VERSION AS OF / FOR TIME AS OF reads tables; {name} is not one", 1105,
                                     "HY000")
            if db is None and name in self.ctes:
                return self._derived(self.ctes[name], alias)
            view = self.ctx.resolve_view(db, name) if self.ctx.resolve_view is not None else None
            if self.view_depth == 0 and self.ctx.check_access is not None:  # a view's own tables: its privilege
                self.ctx.check_access(db, name)
            if view is not None:
                return self._view(view, alias)
            source = self.ctx.resolve_table(db, name)
            partition = node.args.get("partition")
            if partition is not None:
                restrict = getattr(source, "restrict_temp_partitions" if partition.args.get("temporary")
                                   else "restrict_partitions", None)
                if restrict is None:
                    raise analysis_error(f"PARTITION clause is not allowed on {name}")
                source = restrict([p.name for p in partition.expressions])
            if version is not None:
                source = self._time_travel(source, version)
            columns = []
            scope_cols = []
            analyzers = _analyzers(source)
            for f in source.schema:
                cid = self.new_id(f.name)
                columns.append((f.name, cid))
                scope_cols.append(ScopeColumn(alias, f.name, cid, db, analyzer=analyzers.get(f.name.lower())))
            return LogicalScan(source, tuple(columns)), Scope(scope_cols)
        if isinstance(node, exp.Subquery):
            if not node.alias:
                raise analysis_error("Every derived table must have its own alias", 1248, "42000")
            return self._derived(node.this, node.alias)
        raise analysis_error(f"Unsupported FROM item: {node.sql('mysql')[:80]}", 1235, "42000")

    def _time_travel(self, source: TableSource, version: exp.Version) -> TableSource:
        """The source reading the table version `FOR VERSION AS OF n` / `FOR TIME AS OF t` names."""
        if not isinstance(source, OlapTableSource):
            raise analysis_error(f"FOR VERSION AS OF / FOR TIME AS OF reads tables; {source.name} is not one", 1105,
                                 "HY000")
        mode = str(version.this).upper()
        if mode not in MODES or version.args.get("kind") != "AS OF" or version.expression is None:
            raise analysis_error("Only FOR VERSION AS OF <n> and FOR TIME AS OF <datetime> read a table's past",
                                 1105, "HY000")
        bound = self.expr_binder(Scope(), "FOR ... AS OF", allow_aggregates=False).bind(version.expression)
        target = pa.int64() if mode == "VERSION" else pa.timestamp("us")
        ok, value = literal_value(bound, target, self.ctx)
        if not ok:
            raise analysis_error(f"FOR {'VERSION' if mode == 'VERSION' else 'TIME'} AS OF needs a constant "
                                 f"{'table version number' if mode == 'VERSION' else 'DATETIME'}", 1105, "HY000")
        return travel(source, mode, value, self.ctx.tzinfo())

    def _derived(self, query: exp.Expression, alias: str, names: tuple[str, ...] = ()) -> tuple[LogicalPlan, Scope]:
        bq = self._child().bind_query(query)
        cols = [ScopeColumn(alias, n, i) for n, i in zip(names or bq.names, bq.plan.output, strict=True)]
        return bq.plan, Scope(cols)

    def _view(self, view: ViewDefinition, alias: str) -> tuple[LogicalPlan, Scope]:
        """A view in FROM: its stored query as a derived table (its own CTEs only: the view was made
        without this statement's)."""
        self.view_depth += 1
        saved, self.ctes = self.ctes, {}
        try:
            query = parse_view(view, self.view_depth)
            plan, scope = self._derived(query, alias)
            check_view_columns(view.columns, [c.name for c in scope.columns])
            if view.columns:
                scope = Scope([ScopeColumn(alias, n, c.id) for n, c in zip(view.columns, scope.columns, strict=True)])
            return plan, scope
        finally:
            self.ctes = saved
            self.view_depth -= 1

    def bind_join(self, left: LogicalPlan, left_scope: Scope, join: exp.Join) -> tuple[LogicalPlan, Scope]:
        right, right_scope = self.bind_table(join.this)
        side = (join.side or "").upper()
        on = join.args.get("on")
        using = join.args.get("using")
        join_kind = (join.kind or "").upper()
        kind = {"LEFT": "left", "RIGHT": "right", "FULL": "full"}.get(side)
        if join_kind in ("SEMI", "ANTI"):
            if on is None and not using:
                raise analysis_error(f"{side or 'LEFT'} {join_kind} JOIN needs an ON or USING clause")
            kind = ("right_" if side == "RIGHT" else "") + join_kind.lower()
        elif kind is None:
            kind = "inner" if (on is not None or using) else "cross"

        left_keys: list[exp.Expression] = []
        right_keys: list[exp.Expression] = []
        residual: list[exp.Expression] = []
        if using:
            for ident in using:
                name = ident.name
                lc = left_scope.resolve(name)
                rc = right_scope.resolve(name)
                if lc is None or rc is None:
                    raise unknown_column(name, "from clause")
                left_keys.append(bound_column(lc.id))
                right_keys.append(bound_column(rc.id))
                hide = rc if kind != "right" else lc
                hide.hidden = True
        scope = left_scope.merged(right_scope)
        if on is not None:
            bound = self.expr_binder(scope, "on clause", allow_aggregates=False).bind(on)
            lk, rk, rest = split_equi_keys(bound, set(left.output), set(right.output))
            left_keys += lk
            right_keys += rk
            residual += rest
        plan = LogicalJoin(left, right, kind, tuple(left_keys), tuple(right_keys), conjoin(residual))
        # after a SEMI / ANTI JOIN only the kept side's columns are visible
        if kind in ("semi", "anti"):
            return plan, left_scope
        if kind in ("right_semi", "right_anti"):
            return plan, right_scope
        return plan, scope


MAX_GROUPING_SETS = 4096


def _expand(node: exp.Expression, keys: list[exp.Expression]) -> list[list[exp.Expression]]:
    """ROLLUP (a, b) -> (a, b), (a), (); CUBE (a, b) -> every subset."""
    if isinstance(node, exp.Rollup):
        return [keys[:i] for i in range(len(keys), -1, -1)]
    if len(keys) > 12:
        raise analysis_error(f"Too many sets in GROUP BY clause, the max grouping sets size is {MAX_GROUPING_SETS}")
    subsets = [[k for j, k in enumerate(keys) if mask >> j & 1] for mask in range(1 << len(keys))]
    return sorted(subsets, key=len, reverse=True)


def split_equi_keys(cond: exp.Expression, left_ids: set[str], right_ids: set[str]
                    ) -> tuple[list[exp.Expression], list[exp.Expression], list[exp.Expression]]:
    """ON conjuncts of the form <left expr> = <right expr> become hash-join keys; the rest is residual."""
    lk: list[exp.Expression] = []
    rk: list[exp.Expression] = []
    rest: list[exp.Expression] = []
    for c in split_conjuncts(cond):
        if isinstance(c, exp.EQ):
            a, b = referenced_ids(c.this), referenced_ids(c.expression)
            if a and b and a <= left_ids and b <= right_ids:
                lk.append(c.this)
                rk.append(c.expression)
                continue
            if a and b and a <= right_ids and b <= left_ids:
                lk.append(c.expression)
                rk.append(c.this)
                continue
        rest.append(c)
    return lk, rk, rest



def _analyzers(source: object) -> dict[str, str]:
    """Column (lower-case) -> analyzer of its INVERTED index, for MATCH (an OLAP table's index definitions)."""
    table = getattr(source, "table", None)
    defs = getattr(table, "index_defs", ())
    return {c.lower(): analyzer_key(dict(d.properties)) for d in defs if d.index_type.upper() == "INVERTED"
            for c in d.columns}
