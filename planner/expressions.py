"""Vectorised evaluation of bound sqlglot expressions over an Arrow table.

The binder rewrites column references to `exp.Column(<internal id>)`, aggregate calls to references to
the aggregate's output column, and uncorrelated subqueries to `ArrowConst` nodes, so evaluation only sees
scalar expressions. Handlers are looked up in tables keyed by sqlglot node class (or by name for
`exp.Anonymous`), the way sqlglot's own generator dispatches: no isinstance ladder.
"""

from __future__ import annotations

import datetime as dt
import decimal
from collections.abc import Callable
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from planner.context import QueryContext
from planner.functions.casts import arrow_type_of_cast, convert, to_string
from planner.values import (
    Value,
    broadcast,
    fill_false,
    is_numeric,
    is_string,
    is_temporal,
    result_supertype,
    supertype,
)
from sql.errors import analysis_error
from sql.types import LARGEINT_ARROW, LARGEINT_MAX
from storage.int128 import int128_array

Handler = Callable[["Evaluator", Any], Value]
_BY_CLASS: dict[type[exp.Expression], Handler] = {}
_BY_NAME: dict[str, Handler] = {}


def register(*classes: type[exp.Expression]) -> Callable[[Handler], Handler]:
    def deco(fn: Handler) -> Handler:
        for c in classes:
            _BY_CLASS[c] = fn
        return fn

    return deco


def register_name(*names: str) -> Callable[[Handler], Handler]:
    """For functions sqlglot leaves as exp.Anonymous (now(), unix_timestamp() ...)."""

    def deco(fn: Handler) -> Handler:
        for n in names:
            _BY_NAME[n.lower()] = fn
        return fn

    return deco


def known_function(name: str) -> bool:
    return name.lower() in _BY_NAME


class ArrowConst(exp.Expression):
    """A value computed while binding: a scalar subquery's result, an IN-subquery's value set."""

    arg_types = {"this": True}

    @property
    def value(self) -> pa.Scalar | pa.Array:
        return self.args["this"]

    # an Arrow array is unhashable: the same value object is the same constant. sqlglot hashes a tree
    # itself, reading each node's `_hash` (None: compute it from the args), so that is where it is given
    @property
    def _hash(self) -> int:
        return hash((ArrowConst, id(self.args["this"])))

    @_hash.setter
    def _hash(self, value: int | None) -> None:
        pass

    def __hash__(self) -> int:
        return self._hash


def const_node(v: pa.Scalar | pa.Array) -> ArrowConst:
    node = ArrowConst()
    node.args["this"] = v  # set directly: sqlglot would try to parent a non-expression
    return node


class Evaluator:
    """Evaluates expressions against one batch (a pa.Table whose columns are internal ids)."""

    def __init__(self, batch: pa.Table, ctx: QueryContext) -> None:
        self.batch = batch
        self.ctx = ctx
        self.num_rows = batch.num_rows
        self._columns: dict[str, pa.Array] = {}

    def column(self, name: str) -> pa.Array:
        """A column of the batch as one array (combined once, however often the expressions read it)."""
        col = self._columns.get(name)
        if col is None:
            chunked = self.batch.column(name)
            col = chunked.combine_chunks() if isinstance(chunked, pa.ChunkedArray) else chunked
            self._columns[name] = col
        return col

    def eval(self, e: exp.Expression) -> Value:
        handler = _BY_CLASS.get(type(e))
        if handler is None:
            if isinstance(e, exp.Anonymous):
                handler = _BY_NAME.get(str(e.this).lower())
                if handler is None:
                    raise analysis_error(f"Can not found function '{e.this}'")
            else:
                name = e.sql_name() if isinstance(e, exp.Func) else e.key
                raise analysis_error(f"Can not found function '{name.lower()}'")
        return handler(self, e)

    def eval_array(self, e: exp.Expression) -> pa.Array:
        return broadcast(self.eval(e), self.num_rows)

    def args(self, e: exp.Expression) -> list[Value]:
        """Positional arguments of a function node (sqlglot stores them under several names)."""
        out = []
        for key in e.arg_types:
            v = e.args.get(key)
            if isinstance(v, list):
                out.extend(self.eval(x) for x in v)
            elif isinstance(v, exp.Expression):
                out.append(self.eval(v))
        return out


def evaluate(e: exp.Expression, batch: pa.Table, ctx: QueryContext) -> Value:
    return Evaluator(batch, ctx).eval(e)


def evaluate_array(e: exp.Expression, batch: pa.Table, ctx: QueryContext) -> pa.Array:
    return Evaluator(batch, ctx).eval_array(e)


# -- python values <-> arrow --------------------------------------------------------------------------


def python_scalar(v: Any) -> pa.Scalar:
    """A host value (variable, session function result) as a typed Arrow scalar."""
    if v is None:
        return pa.scalar(None, pa.null())
    if isinstance(v, bool):
        return pa.scalar(int(v), pa.int64())
    if isinstance(v, int):
        return literal_number(str(v))
    if isinstance(v, float):
        return pa.scalar(v, pa.float64())
    if isinstance(v, decimal.Decimal):
        return literal_number(str(v))
    if isinstance(v, dt.datetime):
        return pa.scalar(v, pa.timestamp("us"))
    if isinstance(v, dt.date):
        return pa.scalar(v, pa.date32())
    return pa.scalar(str(v), pa.string())


def literal_number(text: str) -> pa.Scalar:
    """Doris literal typing: 1 -> BIGINT, beyond BIGINT -> LARGEINT, beyond that DOUBLE; 1.50 -> DECIMAL(3,2),
    1e3 -> DOUBLE."""
    if "e" in text.lower():
        return pa.scalar(float(text), pa.float64())
    if "." not in text:
        v = int(text)
        if -(2**63) <= v < 2**63:
            return pa.scalar(v, pa.int64())
        if abs(v) <= LARGEINT_MAX:
            return int128_array([v], LARGEINT_ARROW)[0]
        return pa.scalar(float(v), pa.float64())
    d = decimal.Decimal(text)
    whole, _, frac = text.lstrip("+-").partition(".")
    scale = len(frac)
    precision = max(len(whole.lstrip("0")) + scale, 1, scale)
    return pa.scalar(d, pa.decimal128(min(precision, 38), scale))


# -- leaves --------------------------------------------------------------------------------------------


@register(exp.Column)
def _column(ev: Evaluator, e: exp.Column) -> Value:
    return ev.column(e.name)


@register(exp.Literal)
def _literal(ev: Evaluator, e: exp.Literal) -> Value:
    if e.is_string:
        return pa.scalar(e.this, pa.string())
    return literal_number(str(e.this))


@register(exp.Null)
def _null(ev: Evaluator, e: exp.Null) -> Value:
    return pa.scalar(None, pa.null())


@register(exp.Boolean)
def _boolean(ev: Evaluator, e: exp.Boolean) -> Value:
    return pa.scalar(bool(e.this), pa.bool_())


@register(exp.HexString)
def _hex(ev: Evaluator, e: exp.HexString) -> Value:
    return pa.scalar(bytes.fromhex(e.this).decode("utf-8", "replace"), pa.string())


@register(ArrowConst)
def _const(ev: Evaluator, e: ArrowConst) -> Value:
    return e.value


@register(exp.Paren)
def _paren(ev: Evaluator, e: exp.Paren) -> Value:
    return ev.eval(e.this)


@register(exp.Alias)
def _alias(ev: Evaluator, e: exp.Alias) -> Value:
    return ev.eval(e.this)


@register(exp.SessionParameter)
def _session_var(ev: Evaluator, e: exp.SessionParameter) -> Value:
    kind = (e.args.get("kind") or "session").lower()
    return python_scalar(ev.ctx.variables(kind, e.this.name))


@register(exp.Parameter)
def _user_var(ev: Evaluator, e: exp.Parameter) -> Value:
    return python_scalar(ev.ctx.variables("user", e.this.name))


def _session_function(name: str, default: Callable[[QueryContext], Any]) -> Handler:
    def handler(ev: Evaluator, e: exp.Expression) -> Value:
        fn = ev.ctx.functions.get(name)
        v = fn() if fn is not None else default(ev.ctx)
        s = python_scalar(v)
        return pc.cast(s, pa.string()) if pa.types.is_null(s.type) else s

    return handler


_BY_CLASS[exp.CurrentSchema] = _session_function("database", lambda c: c.current_db)
_BY_CLASS[exp.CurrentUser] = _session_function("current_user", lambda c: "'root'@'%'")
_BY_CLASS[exp.CurrentVersion] = _session_function("version", lambda c: "5.7.99")
_BY_NAME["database"] = _BY_NAME["schema"] = _BY_CLASS[exp.CurrentSchema]
_BY_NAME["user"] = _BY_NAME["session_user"] = _session_function("user", lambda c: "root@%")
_BY_NAME["current_user"] = _BY_CLASS[exp.CurrentUser]
_BY_NAME["connection_id"] = _session_function("connection_id", lambda c: 0)
_BY_NAME["version"] = _BY_CLASS[exp.CurrentVersion]


# -- type coercion helpers used by the operator handlers ------------------------------------------------


def unify(*values: Value) -> list[Value]:
    """Convert values to their common result type (NULL literals take the other side's type)."""
    t = values[0].type
    for v in values[1:]:
        t = result_supertype(t, v.type)
    if pa.types.is_null(t):
        return list(values)
    return [v if v.type == t else convert(v, t) for v in values]


def to_bool(v: Value) -> Value:
    t = v.type
    if pa.types.is_boolean(t):
        return v
    if pa.types.is_null(t):
        return pc.cast(v, pa.bool_())
    return convert(v, pa.bool_())


def comparable(a: Value, b: Value) -> tuple[Value, Value]:
    """Operands for a comparison: only cross-category pairs are converted, arrow handles the rest."""
    ta, tb = a.type, b.type
    if pa.types.is_null(ta) or pa.types.is_null(tb):
        t = tb if pa.types.is_null(ta) else ta
        if pa.types.is_null(t):
            t = pa.int64()
        return pc.cast(a, t), pc.cast(b, t)
    if is_numeric(ta) and is_numeric(tb):
        if pa.types.is_boolean(ta) != pa.types.is_boolean(tb):
            return convert(a, pa.int64()), convert(b, pa.int64())
        if pa.types.is_decimal(ta) and pa.types.is_decimal(tb) and ta != tb:
            # exact: both in one type wide enough for either's digits (beyond 38 digits, DECIMAL256)
            scale = max(ta.scale, tb.scale)
            precision = max(ta.precision - ta.scale, tb.precision - tb.scale) + scale
            t = pa.decimal128(precision, scale) if precision <= 38 else pa.decimal256(precision, scale)
            return pc.cast(a, t), pc.cast(b, t)
        return a, b
    if ta == tb:
        return a, b
    if is_temporal(ta) and is_string(tb):
        t = temporal_text_type(ta, b)
        return (a if t == ta else pc.cast(a, t)), convert(b, t)
    if is_string(ta) and is_temporal(tb):
        t = temporal_text_type(tb, a)
        return convert(a, t), (b if t == tb else pc.cast(b, t))
    t = supertype(ta, tb)
    return convert(a, t), convert(b, t)


def temporal_text_type(t: pa.DataType, text: Value) -> pa.DataType:
    """The type a DATE / DATETIME is compared with text as: its own, except that a DATE meets a text with a
    time of day as DATETIME (Doris: `d >= '2024-01-31 12:00:00'` is false for 2024-01-31), and a DATETIME(p)
    meets a text with more fractional digits at the text's precision (`DATETIME(0) = '... 00:00:00.5'` is false)."""
    if pa.types.is_timestamp(t):
        step = {"s": 1_000_000, "ms": 1_000}.get(t.unit)
        if step is None:
            return t
        if isinstance(text, pa.Scalar):
            stamp = convert(text, pa.timestamp("us"))
            if not stamp.is_valid or stamp.value % step == 0:
                return t
        return pa.timestamp("us")
    if not pa.types.is_date(t):
        return t
    if isinstance(text, pa.Scalar):
        stamp = convert(text, pa.timestamp("us"))
        if not stamp.is_valid or stamp.value % 86_400_000_000 == 0:
            return t
    return pa.timestamp("us")


# -- boolean logic and comparisons ---------------------------------------------------------------------


@register(exp.And)
def _and(ev: Evaluator, e: exp.And) -> Value:
    return pc.and_kleene(to_bool(ev.eval(e.this)), to_bool(ev.eval(e.expression)))


@register(exp.Or)
def _or(ev: Evaluator, e: exp.Or) -> Value:
    return pc.or_kleene(to_bool(ev.eval(e.this)), to_bool(ev.eval(e.expression)))


@register(exp.Xor)
def _xor(ev: Evaluator, e: exp.Xor) -> Value:
    return pc.xor(to_bool(ev.eval(e.this)), to_bool(ev.eval(e.expression)))


@register(exp.Not)
def _not(ev: Evaluator, e: exp.Not) -> Value:
    return pc.invert(to_bool(ev.eval(e.this)))


_COMPARE = {
    exp.EQ: pc.equal,
    exp.NEQ: pc.not_equal,
    exp.GT: pc.greater,
    exp.GTE: pc.greater_equal,
    exp.LT: pc.less,
    exp.LTE: pc.less_equal,
}


def _make_compare(fn: Callable[..., Value]) -> Handler:
    def handler(ev: Evaluator, e: exp.Binary) -> Value:
        a, b = comparable(ev.eval(e.this), ev.eval(e.expression))
        return fn(a, b)

    return handler


for _cls, _fn in _COMPARE.items():
    _BY_CLASS[_cls] = _make_compare(_fn)


@register(exp.NullSafeEQ)
def _null_safe_eq(ev: Evaluator, e: exp.NullSafeEQ) -> Value:
    a, b = comparable(ev.eval(e.this), ev.eval(e.expression))
    both_null = pc.and_(pc.is_null(a), pc.is_null(b))
    return pc.or_(both_null, pc.fill_null(pc.equal(a, b), False))


@register(exp.Is)
def _is(ev: Evaluator, e: exp.Is) -> Value:
    v = ev.eval(e.this)
    target = e.expression
    if isinstance(target, exp.Null):
        return pc.is_null(v)
    if isinstance(target, exp.Boolean):
        # Doris parses `x IS TRUE` as CAST(x AS BOOLEAN) and `x IS FALSE` as its NOT: NULL stays NULL
        # ('ab' IS TRUE is NULL, not 0)
        b = to_bool(v)
        return b if target.this else pc.invert(b)
    raise analysis_error(f"Unsupported IS operand: {target.sql()}")


@register(exp.Between)
def _between(ev: Evaluator, e: exp.Between) -> Value:
    v = ev.eval(e.this)
    lo_a, lo_b = comparable(v, ev.eval(e.args["low"]))
    hi_a, hi_b = comparable(v, ev.eval(e.args["high"]))
    return pc.and_kleene(pc.greater_equal(lo_a, lo_b), pc.less_equal(hi_a, hi_b))


@register(exp.In)
def _in(ev: Evaluator, e: exp.In) -> Value:
    v = ev.eval(e.this)
    items = [ev.eval(x) for x in e.expressions]
    if e.args.get("query") is not None:
        raise analysis_error("IN subquery was not bound")  # the binder replaces it with an ArrowConst
    if len(items) == 1 and isinstance(items[0], pa.Array):
        value_set = items[0]
    elif all(isinstance(x, pa.Scalar) for x in items):
        t = v.type
        for x in items:
            t = supertype(t, x.type)
        if pa.types.is_null(t):
            return pa.scalar(None, pa.bool_())
        value_set = pa.array([convert(x, t) for x in items], type=t)  # list literal, not table data
    else:
        result: Value = pa.scalar(False)
        for x in items:
            a, b = comparable(v, x)
            result = pc.or_kleene(result, pc.equal(a, b))
        return result
    a, value_set = comparable(v, value_set)
    found = pc.is_in(a, value_set=value_set, skip_nulls=True)
    # SQL three-valued logic: NULL IN (...) is NULL; x IN (.., NULL) is NULL when x is not found
    found = pc.if_else(pc.is_null(a), pa.scalar(None, pa.bool_()), found)
    if value_set.null_count:
        found = pc.if_else(found, True, pa.scalar(None, pa.bool_()))
    return found


def _like_pattern(ev: Evaluator, e: exp.Expression) -> str | None:
    p = ev.eval(e)
    if not isinstance(p, pa.Scalar):
        raise analysis_error("LIKE / REGEXP with a non-constant pattern is not supported")
    p = to_string(p)
    return p.as_py()


@register(exp.Like)
def _like(ev: Evaluator, e: exp.Like) -> Value:
    v = to_string(ev.eval(e.this))
    pattern = _like_pattern(ev, e.expression)
    if pattern is None or pa.types.is_null(v.type):
        return pa.scalar(None, pa.bool_())
    out = pc.match_like(v, pattern)
    return pc.invert(out) if e.args.get("negate") else out


@register(exp.ILike)
def _ilike(ev: Evaluator, e: exp.ILike) -> Value:
    v = to_string(ev.eval(e.this))
    pattern = _like_pattern(ev, e.expression)
    if pattern is None:
        return pa.scalar(None, pa.bool_())
    out = pc.match_like(v, pattern, ignore_case=True)
    return pc.invert(out) if e.args.get("negate") else out


@register(exp.RegexpLike)
def _regexp(ev: Evaluator, e: exp.RegexpLike) -> Value:
    v = to_string(ev.eval(e.this))
    pattern = _like_pattern(ev, e.expression)
    if pattern is None or pa.types.is_null(v.type):
        return pa.scalar(None, pa.bool_())
    return pc.match_substring_regex(v, pattern)


# -- conditionals --------------------------------------------------------------------------------------


@register(exp.If)
def _if(ev: Evaluator, e: exp.If) -> Value:
    cond = fill_false(to_bool(ev.eval(e.this)))
    false_node = e.args.get("false")
    a = ev.eval(e.args["true"])
    b = ev.eval(false_node) if false_node is not None else pa.scalar(None, pa.null())
    a, b = unify(a, b)
    if pa.types.is_null(a.type):
        return a
    return pc.if_else(cond, a, b)


@register(exp.Case)
def _case(ev: Evaluator, e: exp.Case) -> Value:
    subject = ev.eval(e.this) if e.this is not None else None
    conds: list[Value] = []
    vals: list[Value] = []
    for branch in e.args.get("ifs") or []:
        c = ev.eval(branch.this)
        if subject is not None:
            a, b = comparable(subject, c)
            c = pc.equal(a, b)
        conds.append(fill_false(to_bool(c)))
        vals.append(ev.eval(branch.args["true"]))
    default = e.args.get("default")
    vals.append(ev.eval(default) if default is not None else pa.scalar(None, pa.null()))
    vals = unify(*vals)
    if pa.types.is_null(vals[0].type):
        vals = [pc.cast(v, pa.string()) for v in vals]
    n = ev.num_rows
    if all(isinstance(c, pa.Scalar) for c in conds):  # constant conditions: pick the branch directly
        for c, v in zip(conds, vals, strict=False):
            if c.as_py():
                return v
        return vals[-1]
    struct = pc.make_struct(*[broadcast(c, n) for c in conds], field_names=[f"c{i}" for i in range(len(conds))])
    return pc.case_when(struct, *[broadcast(v, n) for v in vals])


@register(exp.Coalesce)
def _coalesce(ev: Evaluator, e: exp.Coalesce) -> Value:
    vals = unify(*ev.args(e))
    if pa.types.is_null(vals[0].type):
        return vals[0]
    return pc.coalesce(*vals)


@register(exp.Nullif)
def _nullif(ev: Evaluator, e: exp.Nullif) -> Value:
    a = ev.eval(e.this)
    x, y = comparable(a, ev.eval(e.expression))
    same = fill_false(pc.equal(x, y))
    return pc.if_else(same, pa.scalar(None, a.type), a)


# -- casts ---------------------------------------------------------------------------------------------


@register(exp.Cast, exp.TryCast)
def _cast(ev: Evaluator, e: exp.Cast) -> Value:
    if e.args["to"].this == exp.DataType.Type.TIME:  # no TIME column type: Doris's text form of one
        from planner.functions.time_units import cast_to_time

        return cast_to_time(ev.eval(e.this))
    target, dtype = arrow_type_of_cast(e.args["to"])
    out = convert(ev.eval(e.this), target)
    if dtype is not None and dtype.name in ("CHAR", "VARCHAR") and dtype.length and pa.types.is_string(out.type):
        out = pc.utf8_slice_codeunits(out, 0, dtype.length)  # Doris cuts to the length: CAST('2019' AS CHAR(2))
    return out


# importing the function families registers their handlers
from planner.functions import arithmetic as _arithmetic  # noqa: E402,F401
from planner.functions import hashes as _hashes  # noqa: E402,F401
from planner.functions import match as _match  # noqa: E402,F401
from planner.functions import math as _math  # noqa: E402,F401
from planner.functions import numbers as _numbers  # noqa: E402,F401
from planner.functions import session as _session  # noqa: E402,F401
from planner.functions import strings as _strings  # noqa: E402,F401
from planner.functions import temporal as _temporal  # noqa: E402,F401
from planner.functions import text as _text  # noqa: E402,F401
from planner.functions import time_units as _time_units  # noqa: E402,F401
