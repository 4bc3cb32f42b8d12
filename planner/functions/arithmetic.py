"""+ - * / DIV % and unary minus with MySQL/Doris typing.

int op int -> BIGINT; anything with DOUBLE -> DOUBLE; DECIMAL stays DECIMAL while Arrow's precision rules
allow it (else DOUBLE); `/` on integers gives DOUBLE; division or modulo by zero gives NULL.
"""

from __future__ import annotations

import decimal

import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from planner.expressions import Evaluator, register
from planner.functions.casts import convert
from planner.values import Value, broadcast, decimal_arithmetic_type, is_string, is_temporal, promoted_integer
from sql.types import LARGEINT_ARROW


def numeric_operand(v: Value) -> Value:
    t = v.type
    if pa.types.is_null(t):
        return pc.cast(v, pa.int64())
    if pa.types.is_integer(t):
        return v if t == pa.int64() else pc.cast(v, pa.int64())
    if pa.types.is_boolean(t):
        return pc.cast(v, pa.int64())
    if pa.types.is_floating(t):
        return v if t == pa.float64() else pc.cast(v, pa.float64())
    if pa.types.is_decimal(t):
        return v
    if is_string(t):
        return convert(v, pa.float64())
    if is_temporal(t):
        return convert(v, pa.int64())
    return convert(v, pa.float64())


_OPERATORS = {pc.add: "+", pc.subtract: "-", pc.multiply: "*"}


def _apply(fn, a: Value, b: Value) -> Value:  # noqa: ANN001
    """`a fn b` (+ - *) with Doris's result type: DOUBLE with a float, DECIMALV3's derived type with a decimal
    (decimal_arithmetic_type), else the wider integer widened one step (promoted_integer; BIGINT wraps)."""
    raw_a, raw_b = a.type, b.type
    a, b = numeric_operand(a), numeric_operand(b)
    ta, tb = a.type, b.type
    if pa.types.is_floating(ta) or pa.types.is_floating(tb):
        return fn(pc.cast(a, pa.float64()), pc.cast(b, pa.float64()))
    if pa.types.is_decimal(ta) or pa.types.is_decimal(tb):
        op = _OPERATORS[fn]
        out = decimal_arithmetic_type(op, raw_a if pa.types.is_integer(raw_a) else ta,
                                      raw_b if pa.types.is_integer(raw_b) else tb)
        a, b = _decimal(a), _decimal(b)
        if _arrow_precision(op, a.type, b.type) > 38:  # Arrow's exact result needs DECIMAL256
            # one more digit: a LARGEINT's decimal128(38, 0) may hold 39 (storage/int128.py)
            wide_a, wide_b = pc.cast(a, pa.decimal256(a.type.precision + 1, a.type.scale)), \
                pc.cast(b, pa.decimal256(b.type.precision + 1, b.type.scale))
            if _arrow_precision(op, wide_a.type, wide_b.type) > 76:
                return _in_duckdb(f'CAST("a" {op} "b" AS DECIMAL({out.precision}, {out.scale}))', a, b, out)
            a, b = wide_a, wide_b
        result = fn(a, b)
        if result.type.scale > out.scale:
            result = pc.round(result, out.scale, round_mode="half_towards_infinity")
        if out == LARGEINT_ARROW and result.type != out:
            return convert(result, out)  # the whole int128 range; beyond it NULL
        return result if result.type == out else pc.cast(result, out)
    return pc.cast(fn(a, b), promoted_integer(raw_a, raw_b), safe=False)


def _decimal(v: Value) -> Value:
    """An integer operand of decimal arithmetic as the DECIMAL(digits, 0) Doris takes it for."""
    if pa.types.is_decimal(v.type):
        return v
    return pc.cast(v, pa.decimal128(19 if v.type.bit_width == 64 else 10, 0))


def _arrow_precision(op: str, a: pa.DataType, b: pa.DataType) -> int:
    """The precision of Arrow's exact result of `a op b` (decimals)."""
    if op == "*":
        return a.precision + b.precision + 1
    return max(a.precision - a.scale, b.precision - b.scale) + max(a.scale, b.scale) + 1


def _zero_to_null(b: Value) -> Value:
    zero = pa.scalar(decimal.Decimal(0), b.type) if pa.types.is_decimal(b.type) else pc.cast(pa.scalar(0), b.type)
    return pc.if_else(pc.equal(b, zero), pa.scalar(None, b.type), b)


def _interval_side(e: exp.Binary) -> tuple[exp.Expression, exp.Interval] | None:
    if isinstance(e.expression, exp.Interval):
        return e.this, e.expression
    if isinstance(e.this, exp.Interval):
        return e.expression, e.this
    return None


@register(exp.Add)
def _add(ev: Evaluator, e: exp.Add) -> Value:
    iv = _interval_side(e)
    if iv is not None:
        from planner.functions.temporal import add_interval

        return add_interval(ev, ev.eval(iv[0]), iv[1], sign=1)
    return _apply(pc.add, ev.eval(e.this), ev.eval(e.expression))


@register(exp.Sub)
def _sub(ev: Evaluator, e: exp.Sub) -> Value:
    if isinstance(e.expression, exp.Interval):
        from planner.functions.temporal import add_interval

        return add_interval(ev, ev.eval(e.this), e.expression, sign=-1)
    return _apply(pc.subtract, ev.eval(e.this), ev.eval(e.expression))


@register(exp.Mul)
def _mul(ev: Evaluator, e: exp.Mul) -> Value:
    return _apply(pc.multiply, ev.eval(e.this), ev.eval(e.expression))


@register(exp.Div)
def _div(ev: Evaluator, e: exp.Div) -> Value:
    a, b = numeric_operand(ev.eval(e.this)), numeric_operand(ev.eval(e.expression))
    if pa.types.is_decimal(a.type) or pa.types.is_decimal(b.type):
        if not (pa.types.is_floating(a.type) or pa.types.is_floating(b.type)):
            return _decimal_divide(ev, a, b)
    return pc.divide(pc.cast(a, pa.float64()), _zero_to_null(pc.cast(b, pa.float64())))


def _decimal_divide(ev: Evaluator, a: Value, b: Value) -> Value:
    """Doris's exact decimal quotient, computed by the one SQL text planner/duck uses for it."""
    from planner.duck.expressions import decimal_division

    sql, out = decimal_division('"a"', '"b"', a.type, b.type)
    return _in_duckdb(sql, a, b, out)


def _in_duckdb(sql: str, a: Value, b: Value, out: pa.DataType) -> Value:
    """`sql` over columns "a" and "b" computed by DuckDB: exact decimal arithmetic beyond Arrow's reach."""
    from planner.duck.database import cursor

    if isinstance(a, pa.Scalar) and isinstance(b, pa.Scalar):
        n = 1
    else:
        n = len(a) if not isinstance(a, pa.Scalar) else len(b)
    table = pa.table({"a": broadcast(a, n), "b": broadcast(b, n)})
    with cursor() as cur:
        cur.register("operands", table)
        result = cur.sql(f"SELECT {sql} AS q FROM operands").to_arrow_table().column(0).combine_chunks()
    result = result.cast(out) if result.type != out else result
    return result[0] if isinstance(a, pa.Scalar) and isinstance(b, pa.Scalar) else result


@register(exp.IntDiv)
def _int_div(ev: Evaluator, e: exp.IntDiv) -> Value:
    a, b = numeric_operand(ev.eval(e.this)), numeric_operand(ev.eval(e.expression))
    b = _zero_to_null(b)
    if pa.types.is_integer(a.type) and pa.types.is_integer(b.type):
        return pc.divide(a, b)  # arrow integer division truncates toward zero, like DIV
    if LARGEINT_ARROW in (a.type, b.type) and all(t == LARGEINT_ARROW or pa.types.is_integer(t)
                                                  for t in (a.type, b.type)):
        return _in_duckdb('CAST("a" AS HUGEINT) // CAST("b" AS HUGEINT)', a, b, LARGEINT_ARROW)
    q = pc.trunc(pc.divide(pc.cast(a, pa.float64()), pc.cast(b, pa.float64())))
    return pc.cast(q, pa.int64(), safe=False)


def mod(a: Value, b: Value) -> Value:
    """MySQL %: the sign follows the dividend (a - trunc(a/b)*b)."""
    a, b = numeric_operand(a), numeric_operand(b)
    b = _zero_to_null(b)
    if pa.types.is_integer(a.type) and pa.types.is_integer(b.type):
        return pc.subtract(a, pc.multiply(pc.divide(a, b), b))
    if pa.types.is_decimal(a.type) or pa.types.is_decimal(b.type):
        if not (pa.types.is_floating(a.type) or pa.types.is_floating(b.type)):
            try:
                da = pc.cast(a, pa.decimal128(19, 0)) if pa.types.is_integer(a.type) else a
                db = pc.cast(b, pa.decimal128(19, 0)) if pa.types.is_integer(b.type) else b
                q = pc.trunc(pc.divide(da, db))
                r = pc.subtract(da, pc.multiply(q, db))
                scale = max(da.type.scale, db.type.scale)
                return pc.cast(r, pa.decimal128(min(38, max(da.type.precision, db.type.precision)), scale), safe=False)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                pass
    fa, fb = pc.cast(a, pa.float64()), pc.cast(b, pa.float64())
    return pc.subtract(fa, pc.multiply(pc.trunc(pc.divide(fa, fb)), fb))


@register(exp.Mod)
def _mod(ev: Evaluator, e: exp.Mod) -> Value:
    return mod(ev.eval(e.this), ev.eval(e.expression))


@register(exp.Neg)
def _neg(ev: Evaluator, e: exp.Neg) -> Value:
    return pc.negate(numeric_operand(ev.eval(e.this)))


@register(exp.BitwiseAnd)
def _bit_and(ev: Evaluator, e: exp.BitwiseAnd) -> Value:
    return pc.bit_wise_and(numeric_operand(ev.eval(e.this)), numeric_operand(ev.eval(e.expression)))


@register(exp.BitwiseOr)
def _bit_or(ev: Evaluator, e: exp.BitwiseOr) -> Value:
    return pc.bit_wise_or(numeric_operand(ev.eval(e.this)), numeric_operand(ev.eval(e.expression)))


@register(exp.BitwiseXor)
def _bit_xor(ev: Evaluator, e: exp.BitwiseXor) -> Value:
    return pc.bit_wise_xor(numeric_operand(ev.eval(e.this)), numeric_operand(ev.eval(e.expression)))
