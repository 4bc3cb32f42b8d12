"""Math functions Doris has beyond MySQL's core set: bin, conv, e, degrees, radians, pmod, positive, negative,
cbrt, log2 / log10 (sqlglot's Log with a literal base)."""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from planner.expressions import Evaluator, register, register_name
from planner.functions.arithmetic import mod, numeric_operand
from planner.functions.casts import convert, to_string
from planner.functions.columnwise import per_distinct
from planner.functions.time_units import arguments
from planner.values import Value
from sql.errors import analysis_error


def _float(v: Value) -> Value:
    return pc.cast(numeric_operand(v), pa.float64())


@register_name("e")
def _e(ev: Evaluator, e: exp.Expression) -> Value:
    arguments(e, "e", 0, 0)
    return pa.scalar(math.e, pa.float64())


@register(exp.Degrees)
def _degrees(ev: Evaluator, e: exp.Degrees) -> Value:
    return pc.multiply(_float(ev.eval(e.this)), 180.0 / math.pi)


@register(exp.Radians)
def _radians(ev: Evaluator, e: exp.Radians) -> Value:
    return pc.multiply(_float(ev.eval(e.this)), math.pi / 180.0)


def _exact_cbrt(x: np.ndarray) -> np.ndarray:
    """np.cbrt, snapped to the integer root when there is one (std::cbrt gives cbrt(27) = 3 exactly)."""
    root = np.cbrt(x)
    whole = np.rint(root)
    return np.where(whole ** 3 == x, whole, root)


@register(exp.Cbrt)
def _cbrt(ev: Evaluator, e: exp.Cbrt) -> Value:
    v = _float(ev.eval(e.this))
    if isinstance(v, pa.Scalar):
        return pa.scalar(float(_exact_cbrt(np.array([v.as_py()]))[0]) if v.is_valid else None, pa.float64())
    valid = pc.is_valid(v).to_numpy(zero_copy_only=False)
    return pa.array(_exact_cbrt(pc.fill_null(v, 0.0).to_numpy(zero_copy_only=False)), pa.float64(), mask=~valid)


@register_name("positive")
def _positive(ev: Evaluator, e: exp.Expression) -> Value:
    (node,) = arguments(e, "positive", 1, 1)
    return numeric_operand(ev.eval(node))


@register(exp.Negative)
@register_name("negative")
def _negative(ev: Evaluator, e: exp.Expression) -> Value:
    (node,) = arguments(e, "negative", 1, 1) if isinstance(e, exp.Anonymous) else (e.this,)
    return pc.negate(numeric_operand(ev.eval(node)))


@register_name("pmod")
def _pmod(ev: Evaluator, e: exp.Expression) -> Value:
    """The non-negative remainder for a positive divisor: pmod(-13, 5) = 2 (BIGINT or DOUBLE)."""
    a, b = (numeric_operand(ev.eval(n)) for n in arguments(e, "pmod", 2, 2))
    if not (pa.types.is_integer(a.type) and pa.types.is_integer(b.type)):
        a, b = _float(a), _float(b)
    return mod(pc.add(mod(a, b), b), b)


@register_name("bin")
def _bin(ev: Evaluator, e: exp.Expression) -> Value:
    (node,) = arguments(e, "bin", 1, 1)
    v = convert(ev.eval(node), pa.int64())
    return per_distinct(v, lambda x: format(x & 0xFFFFFFFFFFFFFFFF, "b"), pa.string())


_DIGITS = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _conv_one(text: str, source: int, target: int) -> str | None:
    """MySQL CONV: the longest valid prefix read in base |source|, written in base |target| (negative target:
    signed; otherwise the 64-bit two's complement of a negative value)."""
    s = text.strip().upper()
    negative = s.startswith("-")
    s = s.lstrip("+-")
    value = 0
    for ch in s:
        d = _DIGITS.find(ch)
        if d < 0 or d >= abs(source):
            break
        value = value * abs(source) + d
    value = min(value, 0xFFFFFFFFFFFFFFFF)
    if negative:
        value = -value
    if target > 0 and value < 0:
        value &= 0xFFFFFFFFFFFFFFFF
    sign = "-" if value < 0 else ""
    value = abs(value)
    base = abs(target)
    out = ""
    while True:
        out = _DIGITS[value % base] + out
        value //= base
        if value == 0:
            break
    return sign + out


@register_name("conv")
def _conv(ev: Evaluator, e: exp.Expression) -> Value:
    v_node, from_node, to_node = arguments(e, "conv", 3, 3)
    bases = [ev.eval(n) for n in (from_node, to_node)]
    if not all(isinstance(b, pa.Scalar) for b in bases):
        raise analysis_error("conv: the bases must be constants")
    source, target = (convert(b, pa.int64()).as_py() for b in bases)
    v = to_string(ev.eval(v_node))
    if source is None or target is None or not (2 <= abs(source) <= 36 and 2 <= abs(target) <= 36):
        return pa.scalar(None, pa.string()) if isinstance(v, pa.Scalar) else pa.nulls(len(v), pa.string())
    return per_distinct(v, lambda s: _conv_one(s, source, target), pa.string())
