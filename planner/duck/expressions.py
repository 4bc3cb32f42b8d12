"""Bound expressions as DuckDB SQL, with the very semantics the Arrow evaluator gives them.

The type of every sub-expression is the one planner.expressions.Evaluator computes: it is asked on an
empty batch of the input's schema (a type probe, no rows), so DuckDB's result is cast to exactly the type
the rest of the plan and the wire format expect. Constant sub-expressions (no column) are evaluated by the
Evaluator itself and become typed literals, so literal typing, date strings, intervals, now() and the
session functions keep one implementation. A node this module cannot express with the same semantics
raises Untranslatable; the caller runs that part of the plan on the Arrow operators instead.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import pyarrow as pa
from sqlglot import exp

from planner.bind.subquery import OuterColumn, SubqueryExpr
from planner.context import QueryContext
from planner.expressions import ArrowConst, Evaluator, const_node, temporal_text_type
from planner.functions.casts import convert
from planner.logical import LogicalPlan, referenced_ids
from planner.values import common_array, is_numeric, is_string, is_temporal


class Untranslatable(Exception):
    """This expression (or plan node) runs on the Arrow operators."""


def quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def duck_type(t: pa.DataType) -> str:
    """DuckDB's name for an Arrow type the executor handles."""
    if pa.types.is_boolean(t):
        return "BOOLEAN"
    if pa.types.is_integer(t):
        return {(8, True): "TINYINT", (16, True): "SMALLINT", (32, True): "INTEGER", (64, True): "BIGINT",
                (8, False): "UTINYINT", (16, False): "USMALLINT", (32, False): "UINTEGER",
                (64, False): "UBIGINT"}[(t.bit_width, pa.types.is_signed_integer(t))]
    if pa.types.is_float32(t):
        return "FLOAT"
    if pa.types.is_float64(t):
        return "DOUBLE"
    if pa.types.is_decimal128(t):
        return f"DECIMAL({t.precision}, {t.scale})"
    if is_string(t):
        return "VARCHAR"
    if pa.types.is_date32(t):
        return "DATE"
    if pa.types.is_timestamp(t) and t.tz is None:
        return "TIMESTAMP"
    raise Untranslatable(f"type {t}")


def literal(v: pa.Scalar) -> str:
    """A typed DuckDB literal for an Arrow scalar."""
    t = v.type
    if pa.types.is_null(t):
        return "NULL"
    if not v.is_valid:
        return f"CAST(NULL AS {duck_type(t)})"
    py = v.as_py()
    if pa.types.is_boolean(t):
        return "TRUE" if py else "FALSE"
    if pa.types.is_integer(t):
        return f"CAST({int(py)} AS {duck_type(t)})"
    if pa.types.is_floating(t):
        text = repr(float(py)) if math.isfinite(py) else ("'nan'" if math.isnan(py) else f"'{'-' if py < 0 else ''}inf'")
        return f"CAST({text} AS {duck_type(t)})"
    if pa.types.is_decimal128(t):
        if abs(py) >= 10**38:  # a 39-digit LARGEINT: DuckDB cannot spell it as a DECIMAL(38, 0) literal
            raise Untranslatable("39-digit LARGEINT literal")
        return f"CAST('{decimal.Decimal(py)}' AS {duck_type(t)})"
    if is_string(t):
        return "'" + str(py).replace("'", "''") + "'"
    if pa.types.is_date32(t):
        return f"DATE '{py.isoformat()}'"
    if pa.types.is_timestamp(t) and t.tz is None and isinstance(py, dt.datetime):
        return f"TIMESTAMP '{py.isoformat(sep=' ')}'"
    raise Untranslatable(f"literal of type {t}")


def _family(t: pa.DataType) -> str:
    if pa.types.is_boolean(t):
        return "bool"
    if is_numeric(t):
        return "number"
    if is_string(t):
        return "string"
    if is_temporal(t):
        return "time"
    if pa.types.is_null(t):
        return "null"
    return str(t)


def same_family(a: pa.DataType, b: pa.DataType) -> bool:
    """Comparable in DuckDB exactly as the evaluator compares them (no string<->number conversions)."""
    fa, fb = _family(a), _family(b)
    return fa == fb or "null" in (fa, fb)


_COMPARISONS: dict[type[exp.Expression], str] = {
    exp.EQ: "=", exp.NEQ: "<>", exp.GT: ">", exp.GTE: ">=", exp.LT: "<", exp.LTE: "<=",
    exp.NullSafeEQ: "IS NOT DISTINCT FROM",
}
_ARITHMETIC: dict[type[exp.Expression], str] = {exp.Add: "+", exp.Sub: "-", exp.Mul: "*"}


class Subqueries(Protocol):
    """What the plan translator does for the expressions it translates (planner/duck/plan.py)."""

    def register_set(self, values: pa.Array) -> str:
        """An IN-subquery's value set as an input table; its SQL name."""
        ...

    def subquery_sql(self, plan: LogicalPlan, visible: dict[str, pa.DataType]) -> str:
        """A correlated subquery's SQL, `visible` being the enclosing columns it may read."""
        ...

    def subquery_type(self, plan: LogicalPlan, visible: dict[str, pa.DataType]) -> pa.DataType:
        """The type of a scalar subquery's one column."""
        ...

    def register_function(self, function: ArrowFunction) -> str:
        """An expression the evaluator computes, as a DuckDB function; its SQL name."""
        ...


@dataclass
class ArrowFunction:
    """An expression DuckDB cannot compute with the evaluator's semantics, computed by the evaluator itself
    inside the DuckDB query (a vectorized Python function over Arrow arrays): the columns it reads are its
    arguments."""

    expression: exp.Expression  # over `columns` as plain column reads
    columns: list[str]
    types: list[pa.DataType]
    result: pa.DataType
    ctx: QueryContext
    errors: list[BaseException]  # what the evaluator raised, for the statement's own error

    def __call__(self, *arrays: pa.Array) -> pa.Array:
        try:
            batch = pa.table({c: a.cast(t) if a.type != t else a for c, a, t in zip(self.columns, arrays, self.types,
                                                                                   strict=True)})
            if not self.columns:
                raise Untranslatable("no argument")
            out = Evaluator(batch, self.ctx).eval_array(self.expression)
            return out.cast(self.result) if out.type != self.result else out
        except Exception as e:
            self.errors.append(e)
            raise


class ExpressionTranslator:
    """Translates expressions over one input whose columns are plan ids with known Arrow types."""

    def __init__(self, schema: pa.Schema, ctx: QueryContext, subqueries: Subqueries) -> None:
        self.empty = schema.empty_table()
        self.ctx = ctx
        self.subqueries = subqueries
        self._types: dict[int, pa.DataType] = {}

    def visible(self) -> dict[str, pa.DataType]:
        """Columns an expression here may read: the input's and the enclosing queries'."""
        return {**(self.ctx.outer_types or {}), **{f.name: f.type for f in self.empty.schema}}

    def type_of(self, e: exp.Expression) -> pa.DataType:
        key = id(e)
        if key not in self._types:
            probe = e
            if any(isinstance(n, SubqueryExpr) for n in e.walk()):
                probe = e.copy().transform(self._typed_null, copy=False)
            try:
                self._types[key] = Evaluator(self.empty, self.ctx).eval(probe).type
            except Exception as err:  # noqa: BLE001 - whatever the evaluator refuses, it runs itself
                raise Untranslatable(str(err)) from err
        return self._types[key]

    def _typed_null(self, node: exp.Expression) -> exp.Expression:
        """A subquery as a NULL of its type, for the evaluator's type probe."""
        if not isinstance(node, SubqueryExpr):
            return node
        t = pa.bool_() if node.kind in ("exists", "in") else self.subqueries.subquery_type(node.plan, self.visible())
        return const_node(pa.scalar(None, t))

    def sql(self, e: exp.Expression) -> str:
        if is_constant(e):
            return self._constant(e)
        handler = _HANDLERS.get(type(e))
        try:
            if handler is None:
                raise Untranslatable(type(e).__name__)
            return handler(self, e)
        except Untranslatable:
            return self._function(e)

    def _function(self, e: exp.Expression) -> str:
        """`e` computed by the evaluator inside DuckDB (ArrowFunction). Not for a correlated subquery (only
        DuckDB runs those), nor a type DuckDB cannot carry."""
        if any(isinstance(n, SubqueryExpr) or (isinstance(n, ArrowConst) and isinstance(n.value, pa.Array))
               for n in e.walk()):
            raise Untranslatable("a subquery inside an expression only the evaluator computes")
        visible = self.visible()
        columns: list[str] = []
        for n in e.walk():
            name = n.name if isinstance(n, exp.Column) else n.id if isinstance(n, OuterColumn) else None
            if name is not None and name not in columns:
                columns.append(name)
        if not columns or any(c not in visible for c in columns):
            raise Untranslatable("expression without columns")
        result = self.type_of(e)
        types = [visible[c] for c in columns]
        for t in [result, *types]:
            duck_type(t)  # raises Untranslatable for a type DuckDB cannot carry
        expression = e.copy().transform(self._folded, copy=False)
        name = self.subqueries.register_function(ArrowFunction(expression, columns, types, result, self.ctx, []))
        return f"{name}({', '.join(quote(c) for c in columns)})"

    def _folded(self, n: exp.Expression) -> exp.Expression:
        """An ArrowFunction's expression: outer columns as plain reads, constant parts (`cast('1999-03-20' as
        date)`) computed once here rather than for every batch DuckDB hands it."""
        if isinstance(n, OuterColumn):
            return exp.column(n.id, quoted=True)
        if isinstance(n, exp.Literal | ArrowConst | exp.Null | exp.Boolean) or not is_constant(n):
            return n
        if isinstance(n.parent, exp.Case) or not isinstance(n, exp.Func | exp.Binary | exp.Unary):
            return n  # a CASE's WHEN branches (If nodes) and other parts are structure, not values
        try:
            value = Evaluator(self.empty, self.ctx).eval(n)
        except Exception:  # noqa: BLE001 - left for the evaluator to raise per batch, as before
            return n
        return const_node(value) if isinstance(value, pa.Scalar) else n

    def condition(self, e: exp.Expression) -> str:
        """A WHERE / ON / HAVING condition: boolean (or NULL) typed, NULL meaning false as in the Filter."""
        if _family(self.type_of(e)) not in ("bool", "null"):
            raise Untranslatable("non-boolean condition")
        return self.sql(e)

    def _constant(self, e: exp.Expression) -> str:
        try:
            value = Evaluator(self.empty, self.ctx).eval(e)
        except Exception as err:  # noqa: BLE001
            raise Untranslatable(str(err)) from err
        if not isinstance(value, pa.Scalar):
            raise Untranslatable("constant array")
        return literal(value)


Handler = Callable[[ExpressionTranslator, exp.Expression], str]
_HANDLERS: dict[type[exp.Expression], Handler] = {}


def _handles(*classes: type[exp.Expression]) -> Callable[[Handler], Handler]:
    def deco(fn: Handler) -> Handler:
        for c in classes:
            _HANDLERS[c] = fn
        return fn

    return deco


def is_constant(e: exp.Expression) -> bool:
    """No column of this query or an enclosing one, no subquery, no value set: the evaluator folds it."""
    return not any(isinstance(n, exp.Column | OuterColumn | SubqueryExpr)
                   or (isinstance(n, ArrowConst) and isinstance(n.value, pa.Array)) for n in e.walk())


@_handles(exp.Column)
def _column(tr: ExpressionTranslator, e: exp.Column) -> str:
    return quote(e.name)


@_handles(OuterColumn)
def _outer_column(tr: ExpressionTranslator, e: OuterColumn) -> str:
    return quote(e.id)  # ids are unique in the statement: DuckDB binds it to the enclosing query's column


@_handles(SubqueryExpr)
def _subquery(tr: ExpressionTranslator, e: SubqueryExpr) -> str:
    sub = tr.subqueries.subquery_sql(e.plan, tr.visible())
    if e.kind == "exists":
        return f"(EXISTS ({sub}))"
    column = quote(e.plan.output[0])
    if e.kind == "in":
        lhs, t = tr.sql(e.this), tr.type_of(e.this)
        if not same_family(t, tr.subqueries.subquery_type(e.plan, tr.visible())):
            raise Untranslatable("IN subquery of another type")
        return f"({lhs} IN (SELECT {column} FROM ({sub})))"
    return f"(SELECT {column} FROM ({sub}))"


@_handles(exp.Paren)
def _paren(tr: ExpressionTranslator, e: exp.Paren) -> str:
    return f"({tr.sql(e.this)})"


def _boolean_operand(tr: ExpressionTranslator, e: exp.Expression) -> str:
    if _family(tr.type_of(e)) not in ("bool", "null"):
        raise Untranslatable("non-boolean operand")
    return f"({tr.sql(e)})"


@_handles(exp.And)
def _and(tr: ExpressionTranslator, e: exp.And) -> str:
    return f"({_boolean_operand(tr, e.this)} AND {_boolean_operand(tr, e.expression)})"


@_handles(exp.Or)
def _or(tr: ExpressionTranslator, e: exp.Or) -> str:
    return f"({_boolean_operand(tr, e.this)} OR {_boolean_operand(tr, e.expression)})"


@_handles(exp.Not)
def _not(tr: ExpressionTranslator, e: exp.Not) -> str:
    return f"(NOT {_boolean_operand(tr, e.this)})"


def _comparable(tr: ExpressionTranslator, a: exp.Expression, b: exp.Expression) -> tuple[str, str]:
    ta, tb = tr.type_of(a), tr.type_of(b)
    if is_temporal(ta) and is_string(tb) and is_constant(b):
        return _temporal_text(tr, a, ta, b)
    if is_string(ta) and is_temporal(tb) and is_constant(a):
        right, left = _temporal_text(tr, b, tb, a)
        return left, right
    if not same_family(ta, tb) or _family(ta) == "bool" != _family(tb):
        raise Untranslatable(f"comparison of {ta} and {tb}")
    return tr.sql(a), tr.sql(b)


def _temporal_text(tr: ExpressionTranslator, column: exp.Expression, t: pa.DataType, text: exp.Expression
                   ) -> tuple[str, str]:
    """A date or datetime compared with constant text: the text converted as the evaluator converts it."""
    value = Evaluator(tr.empty, tr.ctx).eval(text)
    if not isinstance(value, pa.Scalar):
        raise Untranslatable("constant array")
    target = temporal_text_type(t, value)
    converted = literal(convert(value, target))
    return (tr.sql(column) if target == t else f"CAST({tr.sql(column)} AS {duck_type(target)})"), converted


def _comparison(tr: ExpressionTranslator, e: exp.Binary) -> str:
    a, b = _comparable(tr, e.this, e.expression)
    return f"({a} {_COMPARISONS[type(e)]} {b})"


for _cls in _COMPARISONS:
    _HANDLERS[_cls] = _comparison


@_handles(exp.Is)
def _is(tr: ExpressionTranslator, e: exp.Is) -> str:
    if isinstance(e.expression, exp.Null):
        return f"({tr.sql(e.this)} IS NULL)"
    if isinstance(e.expression, exp.Boolean) and _family(tr.type_of(e.this)) == "bool":
        return f"({tr.sql(e.this)})" if e.expression.this else f"(NOT ({tr.sql(e.this)}))"
    raise Untranslatable("IS operand")


@_handles(exp.Between)
def _between(tr: ExpressionTranslator, e: exp.Between) -> str:
    v, lo = _comparable(tr, e.this, e.args["low"])
    _, hi = _comparable(tr, e.this, e.args["high"])
    return f"({v} >= {lo} AND {v} <= {hi})"


@_handles(exp.In)
def _in(tr: ExpressionTranslator, e: exp.In) -> str:
    if e.args.get("query") is not None:
        raise Untranslatable("unbound IN subquery")
    v, vt = tr.sql(e.this), tr.type_of(e.this)
    items = e.expressions
    if len(items) == 1 and isinstance(items[0], ArrowConst) and isinstance(items[0].value, pa.Array):
        values = items[0].value
        if not same_family(vt, values.type) or _family(values.type) == "null":
            raise Untranslatable("IN value set type")
        return f"({v} IN (SELECT v FROM {tr.subqueries.register_set(values)}))"
    if len(items) > INLINE_IN_ITEMS and all(is_constant(item) for item in items):
        return f"({v} IN (SELECT v FROM {tr.subqueries.register_set(_constant_set(tr, items, vt))}))"
    parts = []
    for item in items:
        if not same_family(vt, tr.type_of(item)):
            raise Untranslatable("IN item type")
        parts.append(tr.sql(item))
    return f"({v} IN ({', '.join(parts)}))"


INLINE_IN_ITEMS = 64  # a longer list of constants is handed to DuckDB as a table, not as SQL text


def _constant_set(tr: ExpressionTranslator, items: list[exp.Expression], vt: pa.DataType) -> pa.Array:
    """A long IN list's constants, folded by the evaluator, as one array of their common type."""
    evaluator = Evaluator(tr.empty, tr.ctx)
    values = [evaluator.eval(item) for item in items]
    if any(not isinstance(x, pa.Scalar) or not same_family(vt, x.type) for x in values):
        raise Untranslatable("IN item type")
    array = common_array(values)
    if array is None:
        raise Untranslatable("IN list without a common type")
    return array


@_handles(exp.Like)
def _like(tr: ExpressionTranslator, e: exp.Like) -> str:
    if not is_string(tr.type_of(e.this)) or referenced_ids(e.expression) or not is_string(tr.type_of(e.expression)):
        raise Untranslatable("LIKE operands")
    op = "NOT LIKE" if e.args.get("negate") else "LIKE"
    return f"({tr.sql(e.this)} {op} {tr.sql(e.expression)} ESCAPE '\\')"


def _numeric_cast(tr: ExpressionTranslator, e: exp.Expression, target: pa.DataType) -> str:
    if not is_numeric(tr.type_of(e)) or pa.types.is_boolean(tr.type_of(e)):
        raise Untranslatable("arithmetic on a non-number")
    return f"CAST({tr.sql(e)} AS {duck_type(target)})"


def _arithmetic(tr: ExpressionTranslator, e: exp.Binary) -> str:
    if isinstance(e.this, exp.Interval) or isinstance(e.expression, exp.Interval):
        raise Untranslatable("interval arithmetic")
    out = tr.type_of(e)
    op = _ARITHMETIC[type(e)]
    if out == pa.int64() and any(tr.type_of(x).bit_width == 64 for x in (e.this, e.expression)
                                 if pa.types.is_integer(tr.type_of(x))):
        # BIGINT op BIGINT wraps in Doris (DuckDB would raise): exact in HUGEINT, then two's complement
        a, b = _numeric_cast(tr, e.this, out), _numeric_cast(tr, e.expression, out)
        return (f"CAST(((((CAST({a} AS HUGEINT) {op} {b}) % {1 << 64}) + {1 << 64} + {1 << 63}) % {1 << 64}) "
                f"- {1 << 63} AS BIGINT)")
    if pa.types.is_floating(out) or pa.types.is_integer(out):
        # the evaluator's result type (DOUBLE, or the promoted integer, which cannot overflow) from the start
        return f"({_numeric_cast(tr, e.this, out)} {op} {_numeric_cast(tr, e.expression, out)})"
    if pa.types.is_decimal128(out):
        a, b = tr.type_of(e.this), tr.type_of(e.expression)
        if not all(pa.types.is_decimal(t) or pa.types.is_integer(t) for t in (a, b)):
            raise Untranslatable("decimal arithmetic operands")
        # exact in DuckDB, then the evaluator's precision and scale
        return f"CAST(({tr.sql(e.this)} {op} {tr.sql(e.expression)}) AS {duck_type(out)})"
    raise Untranslatable(f"arithmetic giving {out}")


for _cls in _ARITHMETIC:
    _HANDLERS[_cls] = _arithmetic


def _as_decimal(t: pa.DataType) -> tuple[int, int] | None:
    if pa.types.is_decimal128(t):
        return t.precision, t.scale
    if pa.types.is_integer(t):
        return {8: 3, 16: 5, 32: 10}.get(t.bit_width, 19), 0
    return None


def decimal_division(a: str, b: str, ta: pa.DataType, tb: pa.DataType) -> tuple[str, pa.DataType] | None:
    """`a / b` of decimals (or a decimal and an integer) as Doris computes it: DECIMAL(p1 + s2 + 4, s1 + 4)
    (div_precision_increment = 4, precision capped at 38), the quotient truncated toward zero, NULL for a
    zero divisor; exact, on the unscaled values as HUGEINTs. None when either side is no decimal."""
    da, db = _as_decimal(ta), _as_decimal(tb)
    if da is None or db is None or not (pa.types.is_decimal(ta) or pa.types.is_decimal(tb)):
        return None
    (p1, s1), (_, s2) = da, db
    scale = min(s1 + 4, 38)
    out = pa.decimal128(min(max(p1 + s2 + 4, scale + 1), 38), scale)
    num = f"(CAST({a} * {10 ** s1} AS HUGEINT) * {10 ** (scale - s1 + s2)})"
    den = f"NULLIF(CAST({b} * {10 ** s2} AS HUGEINT), 0)"
    step = f"CAST('{decimal.Decimal(1).scaleb(-scale)}' AS DECIMAL({scale + 1}, {scale}))"
    return f"CAST(CAST({num} // {den} AS DECIMAL(38, 0)) * {step} AS {duck_type(out)})", out


@_handles(exp.Div)
def _div(tr: ExpressionTranslator, e: exp.Div) -> str:
    exact = decimal_division(tr.sql(e.this), tr.sql(e.expression), tr.type_of(e.this), tr.type_of(e.expression))
    if exact is not None:
        return exact[0]
    if not pa.types.is_float64(tr.type_of(e)):
        raise Untranslatable("division")
    a = _numeric_cast(tr, e.this, pa.float64())
    b = _numeric_cast(tr, e.expression, pa.float64())
    return f"({a} / NULLIF({b}, 0))"


@_handles(exp.Neg)
def _neg(tr: ExpressionTranslator, e: exp.Neg) -> str:
    out = tr.type_of(e)
    if not (pa.types.is_integer(out) or pa.types.is_floating(out) or pa.types.is_decimal128(out)):
        raise Untranslatable("negation")
    return f"(-{_numeric_cast(tr, e.this, out)})"


def _same_typed(tr: ExpressionTranslator, e: exp.Expression, parts: list[exp.Expression]) -> list[str]:
    """Branches of IF / CASE / COALESCE: translated only when no branch needs the evaluator's conversions."""
    out = tr.type_of(e)
    texts = []
    for p in parts:
        t = tr.type_of(p)
        if t == out:
            texts.append(tr.sql(p))
        elif pa.types.is_null(t):
            texts.append(f"CAST(NULL AS {duck_type(out)})")
        elif exact_conversion(t, out) and not (pa.types.is_timestamp(t) and pa.types.is_date32(out)):
            texts.append(f"CAST({tr.sql(p)} AS {duck_type(out)})")  # `THEN int_col ELSE 0`: widened
        else:
            raise Untranslatable("branches of different types")
    return texts


@_handles(exp.Case)
def _case(tr: ExpressionTranslator, e: exp.Case) -> str:
    if e.this is not None:
        raise Untranslatable("simple CASE")
    ifs = e.args.get("ifs") or []
    default = e.args.get("default")
    values = _same_typed(tr, e, [b.args["true"] for b in ifs] + ([default] if default is not None else []))
    whens = " ".join(f"WHEN {tr.condition(b.this)} THEN {v}" for b, v in zip(ifs, values, strict=False))
    tail = f" ELSE {values[-1]}" if default is not None else ""
    return f"(CASE {whens}{tail} END)"


@_handles(exp.If)
def _if(tr: ExpressionTranslator, e: exp.If) -> str:
    false = e.args.get("false")
    values = _same_typed(tr, e, [e.args["true"]] + ([false] if false is not None else []))
    otherwise = values[1] if false is not None else "NULL"
    return f"(CASE WHEN {tr.condition(e.this)} THEN {values[0]} ELSE {otherwise} END)"


@_handles(exp.Coalesce)
def _coalesce(tr: ExpressionTranslator, e: exp.Coalesce) -> str:
    return f"coalesce({', '.join(_same_typed(tr, e, [e.this, *e.expressions]))})"


# -- functions DuckDB computes exactly as the evaluator does -------------------------------------------

_DATE_PARTS = {"YEAR": "year", "MONTH": "month", "DAY": "day", "HOUR": "hour", "MINUTE": "minute",
               "SECOND": "second", "QUARTER": "quarter", "WEEK": "week", "DOY": "doy"}
_PART_FUNCTIONS: dict[type[exp.Expression], str] = {
    exp.Year: "year", exp.Month: "month", exp.Day: "day", exp.DayOfMonth: "day", exp.Quarter: "quarter",
    exp.DayOfYear: "doy", exp.Hour: "hour", exp.Minute: "minute", exp.Second: "second", exp.WeekOfYear: "week"}


def _date_part(tr: ExpressionTranslator, part: str, operand: exp.Expression, e: exp.Expression) -> str:
    if not is_temporal(tr.type_of(operand)):  # text is parsed by the evaluator's rules
        raise Untranslatable("date part of a non-temporal value")
    return f"CAST(date_part('{part}', {tr.sql(operand)}) AS {duck_type(tr.type_of(e))})"


@_handles(exp.Extract)
def _extract(tr: ExpressionTranslator, e: exp.Extract) -> str:
    part = _DATE_PARTS.get(e.this.name.upper())
    if part is None:
        raise Untranslatable("EXTRACT unit")
    return _date_part(tr, part, e.expression, e)


def _part_function(tr: ExpressionTranslator, e: exp.Expression) -> str:
    return _date_part(tr, _PART_FUNCTIONS[type(e)], e.this, e)


for _cls in _PART_FUNCTIONS:
    _HANDLERS[_cls] = _part_function


@_handles(exp.Cast)
def _cast(tr: ExpressionTranslator, e: exp.Cast) -> str:
    """The casts whose result cannot differ: numbers to DOUBLE or to a wider integer / decimal, DATE <->
    DATETIME; anything else (text, narrowing, rounding) runs in the evaluator."""
    source, target = tr.type_of(e.this), tr.type_of(e)
    if source == target and not is_string(target):  # CAST(s AS CHAR(2)) truncates: the evaluator's
        return tr.sql(e.this)
    if not exact_conversion(source, target):
        raise Untranslatable(f"cast from {source} to {target}")
    return f"CAST({tr.sql(e.this)} AS {duck_type(target)})"


def exact_conversion(source: pa.DataType, target: pa.DataType) -> bool:
    """Whether DuckDB's CAST from `source` to `target` gives the evaluator's value for every input: numbers to
    DOUBLE, signed integers to a wider one or a wide enough decimal, decimals to a wider decimal, DATE <->
    DATETIME."""
    return (
        (pa.types.is_floating(target) and target.bit_width == 64 and is_numeric(source)
         and not pa.types.is_boolean(source))
        or (pa.types.is_integer(source) and pa.types.is_integer(target) and target.bit_width >= source.bit_width
            and pa.types.is_signed_integer(source) and pa.types.is_signed_integer(target))
        or (pa.types.is_decimal128(target) and pa.types.is_decimal128(source) and target.scale >= source.scale
            and target.precision - target.scale >= source.precision - source.scale)
        or (pa.types.is_decimal128(target) and pa.types.is_integer(source) and pa.types.is_signed_integer(source)
            and target.precision - target.scale >= {8: 3, 16: 5, 32: 10}.get(source.bit_width, 19))
        or (pa.types.is_date32(source) and pa.types.is_timestamp(target))
        or (pa.types.is_timestamp(source) and pa.types.is_date32(target))
    )


@_handles(exp.Substring)
def _substring(tr: ExpressionTranslator, e: exp.Substring) -> str:
    """substr(s, start[, length]) with a constant start >= 1 and length >= 0: DuckDB counts characters as Doris
    does there (a start of 0 or below, or a negative length, runs in the evaluator)."""
    if not is_string(tr.type_of(e.this)):
        raise Untranslatable("substring of a non-string")
    bounds = []
    for key, low in (("start", 1), ("length", 0)):
        node = e.args.get(key)
        if node is None:
            continue
        if not is_constant(node):
            raise Untranslatable("substring bounds from columns")
        value = Evaluator(tr.empty, tr.ctx).eval(node)
        if not isinstance(value, pa.Scalar) or not pa.types.is_integer(value.type) or not value.is_valid \
                or value.as_py() < low:
            raise Untranslatable("substring bounds")
        bounds.append(str(value.as_py()))
    if e.args.get("start") is None:
        raise Untranslatable("substring without a start")
    return f"substring({tr.sql(e.this)}, {', '.join(bounds)})"


@_handles(exp.Upper, exp.Lower)
def _case_mapping(tr: ExpressionTranslator, e: exp.Expression) -> str:
    if not is_string(tr.type_of(e.this)):
        raise Untranslatable("case mapping of a non-string")
    return f"{'upper' if isinstance(e, exp.Upper) else 'lower'}({tr.sql(e.this)})"
