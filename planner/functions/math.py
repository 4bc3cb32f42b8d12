"""Math functions: abs, ceil, floor, round, truncate, power, sqrt, ln/log, exp, sign, pi, greatest/least."""

from __future__ import annotations

import math

import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from planner.expressions import Evaluator, register, register_name, unify
from planner.functions.arithmetic import mod, numeric_operand
from planner.values import Value


def _float(v: Value) -> Value:
    return pc.cast(numeric_operand(v), pa.float64())


def _nan_to_null(v: Value) -> Value:
    return pc.if_else(pc.is_nan(v), pa.scalar(None, pa.float64()), v)


def _digits(ev: Evaluator, e: exp.Expression | None) -> int:
    if e is None:
        return 0
    d = ev.eval(e)
    if not isinstance(d, pa.Scalar):
        from sql.errors import analysis_error

        raise analysis_error("round/truncate digits must be a constant")
    return int(d.as_py() or 0)


@register(exp.Abs)
def _abs(ev: Evaluator, e: exp.Abs) -> Value:
    return pc.abs(numeric_operand(ev.eval(e.this)))


def _ceil_floor(fn):  # noqa: ANN001, ANN202
    def handler(ev: Evaluator, e: exp.Expression) -> Value:
        v = numeric_operand(ev.eval(e.this))
        if pa.types.is_integer(v.type):
            return v
        return pc.cast(fn(v), pa.int64(), safe=False)  # Doris returns BIGINT

    return handler


register(exp.Ceil)(_ceil_floor(pc.ceil))
register(exp.Floor)(_ceil_floor(pc.floor))


@register(exp.Round)
def _round(ev: Evaluator, e: exp.Round) -> Value:
    v = numeric_operand(ev.eval(e.this))
    d = _digits(ev, e.args.get("decimals"))
    if pa.types.is_integer(v.type) and d >= 0:
        return v
    out = pc.round(v, d, round_mode="half_towards_infinity")  # MySQL rounds half away from zero
    return _decimal_digits(v, out, d)


def _decimal_digits(v: Value, out: Value, d: int) -> Value:
    """round/truncate of a DECIMAL keep max(d, 0) digits after the point (Doris: truncate(123.123, -1) is 120)."""
    scale = max(d, 0)
    if pa.types.is_decimal(v.type) and scale < v.type.scale:
        out = pc.cast(out, pa.decimal128(max(v.type.precision - v.type.scale + scale, 1), scale), safe=False)
    return out


@register(exp.Trunc)
def _truncate(ev: Evaluator, e: exp.Trunc) -> Value:
    v = numeric_operand(ev.eval(e.this))
    d = _digits(ev, e.args.get("decimals"))
    if pa.types.is_integer(v.type) and d >= 0:
        return v
    out = pc.round(v, d, round_mode="towards_zero")
    return _decimal_digits(v, out, d)


@register(exp.Pow)
def _pow(ev: Evaluator, e: exp.Pow) -> Value:
    return pc.power(_float(ev.eval(e.this)), _float(ev.eval(e.expression)))


@register(exp.Sqrt)
def _sqrt(ev: Evaluator, e: exp.Sqrt) -> Value:
    v = _float(ev.eval(e.this))
    return pc.sqrt(pc.if_else(pc.less(v, 0), pa.scalar(None, pa.float64()), v))


def _positive(v: Value) -> Value:
    return pc.if_else(pc.less_equal(v, 0), pa.scalar(None, pa.float64()), v)


@register(exp.Ln)
def _ln(ev: Evaluator, e: exp.Ln) -> Value:
    return pc.ln(_positive(_float(ev.eval(e.this))))


@register(exp.Log)
def _log(ev: Evaluator, e: exp.Log) -> Value:
    if e.expression is None:
        return pc.ln(_positive(_float(ev.eval(e.this))))
    base = _positive(_float(ev.eval(e.this)))
    x = _positive(_float(ev.eval(e.expression)))
    return _nan_to_null(pc.divide(pc.ln(x), pc.ln(base)))


@register(exp.Exp)
def _exp(ev: Evaluator, e: exp.Exp) -> Value:
    return pc.exp(_float(ev.eval(e.this)))


@register(exp.Sign)
def _sign(ev: Evaluator, e: exp.Sign) -> Value:
    return pc.cast(pc.sign(numeric_operand(ev.eval(e.this))), pa.int8(), safe=False)


@register(exp.Pi)
def _pi(ev: Evaluator, e: exp.Pi) -> Value:
    return pa.scalar(math.pi, pa.float64())


@register_name("mod")
def _mod_fn(ev: Evaluator, e: exp.Anonymous) -> Value:
    a, b = ev.args(e)
    return mod(a, b)


def _extreme(fn):  # noqa: ANN001, ANN202
    def handler(ev: Evaluator, e: exp.Expression) -> Value:
        vals = unify(*ev.args(e))
        if pa.types.is_null(vals[0].type):
            return vals[0]
        out = fn(*vals, skip_nulls=False)  # MySQL: any NULL argument gives NULL
        return out

    return handler


register(exp.Greatest)(_extreme(pc.max_element_wise))
register(exp.Least)(_extreme(pc.min_element_wise))
