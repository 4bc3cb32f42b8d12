"""GROUP BY binding: group keys and aggregate calls become a LogicalAggregate over a pre-projection;
select / HAVING / ORDER BY expressions are rewritten to read the aggregate's output."""

from __future__ import annotations

import decimal
from collections.abc import Callable
from dataclasses import dataclass, field

from sqlglot import exp

from planner.bind.bind_expr import bound_column
from planner.bind.naming import output_name
from planner.functions.sequences import MAX_EVENTS, parse_pattern
from planner.logical import AggregateCall, LogicalAggregate, LogicalPlan, LogicalProject
from sql import expressions as dx
from sql.errors import analysis_error

_SIMPLE = {
    exp.Sum: "sum", exp.Min: "min", exp.Max: "max", exp.Avg: "avg",
    exp.Stddev: "stddev", exp.StddevSamp: "stddev_samp", exp.StddevPop: "stddev",
    exp.Variance: "variance_samp", exp.VariancePop: "variance", exp.AnyValue: "min",
    exp.ApproxDistinct: "count_distinct_approx",
    exp.BitwiseAndAgg: "group_bit_and", exp.BitwiseOrAgg: "group_bit_or", exp.BitwiseXorAgg: "group_bit_xor",
}
# aggregates of two arguments: (value, other); percentile's other is its (constant) fraction
_TWO_ARGUMENTS = {
    exp.Corr: "corr", exp.CovarPop: "covar", exp.CovarSamp: "covar_samp", exp.ArgMax: "max_by",
    exp.ArgMin: "min_by", exp.Quantile: "percentile", exp.ApproxQuantile: "percentile",
}


@dataclass
class _Call:
    """An aggregate call as the binder reads it: bound argument and ORDER BY expressions."""

    func: str
    args: list[exp.Expression]
    distinct: bool
    separator: str | None = ","
    order: list[tuple[exp.Expression, bool, bool]] = field(default_factory=list)  # (key, ascending, nulls first)


def _order_keys(order: exp.Order) -> list[tuple[exp.Expression, bool, bool]]:
    keys = []
    for o in order.expressions:
        ascending = not o.args.get("desc")
        first = o.args.get("nulls_first")
        keys.append((o.this, ascending, ascending if first is None else bool(first)))  # Doris: NULLs first ASC
    return keys


def _group_concat(node: exp.GroupConcat) -> _Call:
    """group_concat([DISTINCT] x[, sep] [ORDER BY k [ASC|DESC], ...]): sqlglot puts the ORDER BY around the
    value or around the separator, and the separator of a DISTINCT call inside the DISTINCT."""
    arg, sep_node = node.this, node.args.get("separator")
    order: list[tuple[exp.Expression, bool, bool]] = []
    if isinstance(arg, exp.Order):
        order, arg = _order_keys(arg), arg.this
    if isinstance(sep_node, exp.Order):
        order, sep_node = _order_keys(sep_node), sep_node.this
    if node.args.get("on_overflow") is not None:
        raise analysis_error("Can not found function 'group_concat' which has 3 arity")
    distinct = isinstance(arg, exp.Distinct)
    if distinct:
        values = list(arg.expressions)
        if len(values) == 2 and sep_node is None:
            values, sep_node = values[:1], values[1]
        if len(values) != 1:
            raise analysis_error(f"Can not found function 'group_concat' which has {len(values) + 1} arity")
        arg = values[0]
    separator: str | None = ","
    if isinstance(sep_node, exp.Null):
        separator = None
    elif isinstance(sep_node, exp.Literal):
        separator = sep_node.this if sep_node.is_string else str(sep_node.this)
    elif sep_node is not None:
        raise analysis_error(f"The separator of group_concat must be a constant: {sep_node.sql('mysql')}")
    return _Call("group_concat", [arg], distinct, separator, order)


_ARRAYS = {exp.ArrayAgg: "array_agg", dx.CollectList: "collect_list", exp.ArrayUniqueAgg: "collect_set",
           dx.CollectSet: "collect_set"}


def _array_aggregate(node: exp.AggFunc) -> _Call:
    """array_agg / collect_list / collect_set(x [ORDER BY ...][, max_size]): the group's values as an ARRAY,
    at most max_size of them (collect_list / collect_set; Doris's array_agg has no max_size)."""
    func = _ARRAYS[type(node)]
    arg, order = node.this, []
    if isinstance(arg, exp.Order):
        order, arg = _order_keys(arg), arg.this
    max_size = node.args.get("expression")
    if isinstance(max_size, exp.Order):  # collect_list(x, 2 ORDER BY k): sqlglot puts the ORDER BY there
        order, max_size = _order_keys(max_size), max_size.this
    if isinstance(arg, exp.Distinct) or arg is None or (max_size is not None and func == "array_agg"):
        count = 0 if arg is None else len(arg.expressions) if isinstance(arg, exp.Distinct) else 2
        raise analysis_error(f"Can not found function '{func}' which has {count} arity")
    if max_size is None:
        return _Call(func, [arg], False, order=order)
    limit = _max_size(func, max_size)
    args = [arg] if limit is None else [arg, exp.Literal.number(limit)]
    return _Call(func, args, False, order=order)


def _max_size(func: str, node: exp.Expression) -> int | None:
    """collect_list / collect_set's max_size as Doris applies it: cast to INT, a negative one is no limit
    (Doris compares it unsigned), NULL skips every row (an empty ARRAY)."""
    if isinstance(node, exp.Null):
        return 0
    negative = isinstance(node, exp.Neg)
    literal = node.this if negative else node
    try:
        if not isinstance(literal, exp.Literal):
            raise ValueError
        value = int(decimal.Decimal(str(literal.this).strip()))
    except (ValueError, ArithmeticError):
        raise analysis_error(f"The max_size argument of {func} must be a constant integer: "
                             f"{node.sql('mysql')}") from None
    value = -value if negative else value
    return None if value < 0 else value


_VARIADIC = (dx.SequenceMatch, dx.SequenceCount, dx.CountByEnum)  # aggregates of any number of arguments


def _literal_kind(node: exp.Expression) -> str:
    """Nereids's class name of an argument, for the pattern error (as Doris prints it)."""
    if isinstance(node, exp.Column):
        return "SlotReference"
    if isinstance(node, exp.Literal):
        return "StringLiteral" if node.is_string else "IntegerLiteral" if node.is_int else "DecimalV3Literal"
    if isinstance(node, exp.Null):
        return "NullLiteral"
    return type(node).__name__


_SETS = (dx.BitmapUnion, dx.BitmapUnionCount, dx.BitmapUnionInt, dx.HllUnion, dx.HllUnionAgg, dx.Ndv)
# the functions making a BITMAP / HLL of one row's value -> the internal function giving that value
_MEMBERS = {"to_bitmap": "__bitmap_member", "bitmap_hash": "__bitmap_hash_member", "hll_hash": "__hll_member"}


def _fused_count(node: exp.Expression) -> exp.AggFunc | None:
    """bitmap_count(bitmap_union(b)) / hll_cardinality(hll_union(h)) as the one aggregate counting the union."""
    if isinstance(node, exp.BitmapCount) and isinstance(node.this, dx.BitmapUnion):
        return dx.BitmapUnionCount(this=node.this.this.copy())
    if (isinstance(node, exp.Anonymous) and str(node.this).lower() == "hll_cardinality"
            and len(node.expressions) == 1 and isinstance(node.expressions[0], dx.HllUnion)):
        return dx.HllUnionAgg(this=node.expressions[0].this.copy())
    return None


def _set_member(node: exp.AggFunc, maker: str) -> exp.Expression:
    """The value the BITMAP / HLL argument of `node` was made of (to_bitmap(x), bitmap_hash(x), hll_hash(x)),
    as the member it adds to the set: the aggregate counts or collects members, never building a set a row."""
    name = node.sql_name().lower()
    arg = node.this
    if isinstance(arg, exp.Distinct) or arg is None:
        raise analysis_error(f"Can not found function '{name}' which has {0 if arg is None else 2} arity")
    if isinstance(node, dx.BitmapUnionInt):
        return exp.Anonymous(this="__bitmap_member", expressions=[arg])
    fn = str(arg.this).lower() if isinstance(arg, exp.Anonymous) else None
    if fn not in _MEMBERS or (maker == "bitmap") == (fn == "hll_hash") or len(arg.expressions) != 1:
        kind = "BITMAP" if maker == "bitmap" else "HLL"
        makers = "to_bitmap(x) or bitmap_hash(x)" if maker == "bitmap" else "hll_hash(x)"
        raise analysis_error(f"{name} takes a {kind} value: {makers} (dorislite has no {kind} columns)")
    return exp.Anonymous(this=_MEMBERS[fn], expressions=[arg.expressions[0]])


def _set_aggregate(node: exp.AggFunc) -> _Call:
    if isinstance(node, dx.Ndv):
        return _Call("count_distinct_approx", [node.this], False)
    if isinstance(node, dx.BitmapUnionCount | dx.BitmapUnionInt):
        return _Call("count", [_set_member(node, "bitmap")], True)  # exact, as Doris's bitmaps
    if isinstance(node, dx.BitmapUnion):
        return _Call("bitmap_union", [_set_member(node, "bitmap")], False)
    member = _set_member(node, "hll")
    if isinstance(node, dx.HllUnionAgg):  # Doris estimates: the distinct count of the values is its answer
        return _Call("count_distinct_approx", [member.expressions[0]], False)
    return _Call("hll_union", [member], False)


@dataclass
class AggregateBuilder:
    """Collects group keys and aggregate calls for one SELECT, deduplicating equal expressions."""

    new_id: Callable[[str], str]
    id_names: dict[str, str]  # plan id -> the user's column spelling, for error messages
    pre: list[tuple[str, exp.Expression]] = field(default_factory=list)
    keys: list[tuple[exp.Expression, str]] = field(default_factory=list)
    calls: list[tuple[exp.Expression, AggregateCall]] = field(default_factory=list)
    full_group_by: bool = True  # False: a bare non-grouped column reads as ANY_VALUE (MySQL without the mode)
    # ROLLUP / CUBE / GROUPING SETS: each set as the very key expressions `keys` holds
    grouping_sets: list[list[exp.Expression]] | None = None

    def _pre_column(self, bound: exp.Expression, hint: str) -> str:
        for cid, e in self.pre:
            if e == bound:
                return cid
        cid = bound.name if isinstance(bound, exp.Column) else self.new_id(hint)
        self.pre.append((cid, bound))
        return cid

    def add_key(self, bound: exp.Expression) -> exp.Expression:
        """Add a GROUP BY key; returns the expression `keys` holds for it (an equal one added before)."""
        for k, _ in self.keys:
            if k == bound:
                return k
        self.keys.append((bound, self._pre_column(bound, "group")))
        return bound

    def _add_call(self, node: exp.AggFunc) -> str:
        for e, call in self.calls:
            if e == node:
                return call.out
        d = self._describe(node)
        ids = tuple(self._pre_column(a, "agg_arg") for a in d.args)
        order = tuple((self._pre_column(k, "agg_order"), asc, first) for k, asc, first in d.order)
        call = AggregateCall(d.func, ids, d.distinct, self.new_id(d.func), d.separator, order)
        self.calls.append((node, call))
        return call.out

    def _describe(self, node: exp.AggFunc) -> _Call:
        if isinstance(node, exp.GroupConcat):
            return _group_concat(node)
        if isinstance(node, _VARIADIC):
            return self._variadic(node)
        if isinstance(node, _SETS):
            return _set_aggregate(node)
        if isinstance(node, tuple(_ARRAYS)):
            return _array_aggregate(node)
        arg = node.this
        distinct = False
        if isinstance(arg, exp.Order):
            raise analysis_error(f"ORDER BY is not supported in {node.sql_name().lower()}")
        if isinstance(arg, exp.Distinct):
            distinct = True
            args = list(arg.expressions)
        elif arg is None or isinstance(arg, exp.Star):
            args = []
        else:
            args = [arg] + list(node.expressions or []) if isinstance(node, exp.Count) else [arg]
        if isinstance(node, exp.Count):
            if not args:
                return _Call("count_star", [], False)
            if len(args) > 1 and not distinct:  # Doris's Count.java: several arguments only with DISTINCT
                shown = ", ".join(self._user_sql(a) for a in args)  # Nereids's Count.java, its text as is
                raise analysis_error(f"COUNT must have DISTINCT for multiple argumentscount({shown})")
            return _Call("count", args, distinct)
        two = _TWO_ARGUMENTS.get(type(node))
        if two is not None:
            other = node.args.get("quantile") if two == "percentile" else node.expression
            if other is None or distinct:
                raise analysis_error(f"{two} requires two arguments and no DISTINCT")
            if two == "percentile" and not isinstance(other, exp.Literal):
                raise analysis_error(f"the second argument of {node.sql_name().lower()} must be a constant")
            return _Call(two, [arg, other], False)
        func = _SIMPLE.get(type(node))
        if func is None:
            raise analysis_error(f"Can not found function '{node.sql_name().lower()}'")
        if distinct and func not in ("min", "max", "count_distinct_approx", "sum", "avg"):
            raise analysis_error(f"{func}(DISTINCT ...) is not supported", 1235, "42000")
        return _Call(func, args, distinct and func in ("sum", "avg"))

    def _variadic(self, node: exp.AggFunc) -> _Call:
        """sequence_match / sequence_count(pattern, timestamp, cond1, ...) and count_by_enum(x1, ...): arity and
        the pattern checked as Doris's FE checks them (the argument types by the aggregate, which knows them)."""
        name = node.sql_name().lower()
        args = list(node.expressions)
        if any(isinstance(a, exp.Distinct) for a in args):
            raise analysis_error(f"{name}(DISTINCT ...) is not supported", 1235, "42000")
        if name == "count_by_enum":
            if not args:
                raise analysis_error("Can not found function 'count_by_enum' which has 0 arity")
            return _Call(name, args, False)
        if len(args) < 3:
            raise analysis_error(f"Can not found function '{name}' which has {len(args)} arity")
        if len(args) - 2 > MAX_EVENTS:
            raise analysis_error(f"Aggregate function {name} supports up to {MAX_EVENTS} event arguments.")
        pattern = args[0]
        if not (isinstance(pattern, exp.Literal) and pattern.is_string):
            raise analysis_error(f"The pattern param `{self._user_sql(pattern)}` of {name} function must be string "
                                 f"literal, but it is {_literal_kind(pattern)}")
        parse_pattern(pattern.this, len(args) - 2, output_name(self._user_expr(node)))  # Doris's toSql
        return _Call(name, args, False)

    def _user_expr(self, bound: exp.Expression) -> exp.Expression:
        """A bound expression with the user's column spellings, for error messages."""
        def fn(n: exp.Expression) -> exp.Expression:
            return exp.column(self.id_names.get(n.name, n.name)) if isinstance(n, exp.Column) else n

        return bound.copy().transform(fn, copy=False)

    def _user_sql(self, bound: exp.Expression) -> str:
        return self._user_expr(bound).sql("mysql")

    def _grouping(self, node: exp.Expression) -> str:
        """GROUPING(k) / GROUPING_ID(k, ...): a call over key columns (1 bits for rolled-up keys)."""
        if self.grouping_sets is None:
            raise analysis_error(f"{node.sql('mysql')} can only be used with GROUP BY GROUPING SETS, ROLLUP "
                                 "or CUBE")
        ids = []
        for arg in node.expressions:
            kid = next((kid for k, kid in self.keys if k == arg), None)
            if kid is None:
                raise analysis_error(f"the argument {arg.sql('mysql')} of {node.sql('mysql')} must be in the "
                                     "GROUP BY clause")
            ids.append(kid)
        for e, call in self.calls:
            if e == node:
                return call.out
        call = AggregateCall("grouping", tuple(ids), False, self.new_id("grouping"))
        self.calls.append((node, call))
        return call.out

    def rewrite(self, bound: exp.Expression) -> exp.Expression:
        """An expression over the aggregate's output: keys and aggregate calls become column reads."""

        def fn(node: exp.Expression) -> exp.Expression:
            if isinstance(node, exp.Grouping | exp.GroupingId):
                return bound_column(self._grouping(node))
            for k, kid in self.keys:
                if node == k:
                    return bound_column(kid)
            fused = _fused_count(node)
            if fused is not None:  # bitmap_count(bitmap_union(b)): bitmap_union_count(b), no set built
                return bound_column(self._add_call(fused))
            if isinstance(node, exp.AggFunc):
                return bound_column(self._add_call(node))
            if isinstance(node, exp.Column) and not self.full_group_by:
                return bound_column(self._add_call(exp.AnyValue(this=node.copy())))
            if isinstance(node, exp.Column):
                name = self.id_names.get(node.name, node.name)
                raise analysis_error(
                    f"'{name}' must appear in the GROUP BY clause or be used in an aggregate function",
                    1055, "42000")
            return node

        return bound.copy().transform(fn, copy=False)

    def build(self, input_plan: LogicalPlan) -> LogicalAggregate:
        pre = self.pre or [(input_plan.output[0], bound_column(input_plan.output[0]))]
        project = LogicalProject(input_plan, tuple(pre))
        sets = None
        if self.grouping_sets is not None:
            kid = {id(k): i for k, i in self.keys}
            sets = tuple(tuple(kid[id(k)] for k in s) for s in self.grouping_sets)
        return LogicalAggregate(project, tuple(kid for _, kid in self.keys), tuple(c for _, c in self.calls), sets)
