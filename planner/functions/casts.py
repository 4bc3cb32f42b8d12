"""Conversions between Arrow types with Doris semantics: a value that cannot be converted becomes NULL.

Shared by CAST/CONVERT in queries and by INSERT binding, which treats "input was not NULL but the
conversion produced NULL" as a filtered row. Everything is vectorised (regex validation + arrow casts +
numpy calendar arithmetic); no per-row Python.
"""

from __future__ import annotations

import decimal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from planner.values import Value, broadcast, is_string, is_temporal
from sql.errors import analysis_error
from sql.types import LARGEINT_ARROW, LARGEINT_MAX, DorisType, parse_type

_INT_RE = r"^\s*[+-]?\d+\s*$"
_SPECIAL_FLOAT_RE = r"^\s*[+-]?(nan|inf|infinity)\s*$"
_INT_CAST_RE = r"^\s*[+-]?\d{1,38}(?:\.\d*|\s*)$"
_NUM_RE = r"^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$"
_DEC_RE = r"^\s*[+-]?(\d+\.?\d*|\.\d+)\s*$"
_DT_RE = (
    r"^\s*(?P<y>\d{4})[-/.]?(?P<mo>\d{1,2})[-/.]?(?P<d>\d{1,2})"
    r"(?:[ T](?P<h>\d{1,2})(?::(?P<mi>\d{1,2})(?::(?P<s>\d{1,2})(?:\.(?P<f>\d{1,6})\d*)?)?)?)?\s*$"
)

_INT_BOUNDS = {
    8: (-(2**7), 2**7 - 1),
    16: (-(2**15), 2**15 - 1),
    32: (-(2**31), 2**31 - 1),
    64: (-(2**63), 2**63 - 1),
}


def arrow_type_of_cast(to: exp.DataType) -> tuple[pa.DataType, DorisType | None]:
    """Target of CAST(x AS <to>) / CONVERT(x, <to>) as an Arrow type (through sql.types)."""
    t = to.this
    T = exp.DataType.Type
    if t in (T.UBIGINT, T.UINT, T.BIGINT):
        return pa.int64(), parse_type("BIGINT")
    if t in (T.TIMESTAMPTZ, T.TIMESTAMP, T.TIMESTAMPLTZ, T.DATETIME, T.DATETIME64):
        if to.expressions and to.expressions[0].name.isdigit():
            scale = int(to.expressions[0].name)
            if scale > 6:
                raise analysis_error(f"Scale of Datetime/Time must between 0 and 6. Scale was set to: {scale}")
            dtype = parse_type(f"DATETIME({scale})")
            return dtype.arrow_type(), dtype
        return pa.timestamp("us"), parse_type("DATETIME")
    if t in (T.TEXT, T.CHAR, T.NCHAR) and not to.expressions:
        return pa.string(), parse_type("STRING")
    if t == T.INT128:
        dtype = parse_type("LARGEINT")  # the mysql spelling of sqlglot's INT128 is not a Doris type name
        return dtype.arrow_type(), dtype
    text = to.sql(dialect="mysql")
    try:
        dtype = parse_type(text)
    except Exception:
        raise analysis_error(f"Unsupported cast target type: {text}") from None
    return dtype.arrow_type(), dtype


def _as_array(v: Value) -> tuple[pa.Array, bool]:
    if isinstance(v, pa.Scalar):
        return broadcast(v, 1), True
    if isinstance(v, pa.ChunkedArray):
        return v.combine_chunks(), False
    return v, False


def convert(v: Value, target: pa.DataType, *, strict: bool = False) -> Value:
    """Convert `v` to `target`; values that do not convert become NULL.

    strict=True (INSERT) accepts only integer text for integer targets; queries also take '1.5' -> 1.
    """
    if v.type == target:
        return v
    arr, was_scalar = _as_array(v)
    out = _convert_array(arr, target, strict)
    return out[0] if was_scalar else out


def _convert_array(arr: pa.Array, target: pa.DataType, strict: bool) -> pa.Array:
    src = arr.type
    if pa.types.is_null(src):
        return pa.nulls(len(arr), target)
    if pa.types.is_dictionary(src):
        return _convert_array(arr.dictionary_decode(), target, strict)
    if is_string(target):
        return to_string(arr)
    if pa.types.is_boolean(target):
        if is_string(src):
            low = pc.utf8_lower(pc.utf8_trim_whitespace(arr))
            t = pc.is_in(low, value_set=pa.array(["1", "true"]))
            f = pc.is_in(low, value_set=pa.array(["0", "false"]))
            return pc.if_else(t, True, pc.if_else(f, False, pa.scalar(None, pa.bool_())))
        return pc.not_equal(_to_number(arr, strict), 0)
    if pa.types.is_integer(target):
        return _to_int(arr, target, strict)
    if pa.types.is_floating(target):
        if is_string(src):  # Doris reads nan / inf / infinity (any case, signed) into FLOAT and DOUBLE
            special = pc.match_substring_regex(arr, _SPECIAL_FLOAT_RE, ignore_case=True)
            if pc.any(pc.fill_null(special, False)).as_py():
                text = pc.utf8_lower(pc.utf8_trim_whitespace(arr))
                text = pc.replace_substring_regex(text, r"infinity$", "inf")
                numbers = pc.cast(_to_number(pc.if_else(special, None, arr), strict), pa.float64())
                return pc.cast(pc.if_else(special, pc.cast(pc.if_else(special, text, None), pa.float64()),
                                          numbers), target)
        return pc.cast(_to_number(arr, strict), target)
    if pa.types.is_decimal(target):
        return _to_decimal(arr, target)
    if pa.types.is_date(target) or pa.types.is_timestamp(target):
        return _to_temporal(arr, target)
    try:
        return pc.cast(arr, target)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        raise analysis_error(f"can not cast from origin type {src} to target type {target}") from None


# -- numbers ----------------------------------------------------------------------------------------


def _to_number(arr: pa.Array, strict: bool) -> pa.Array:
    """Any input as int64 / float64 / decimal (strings parsed, invalid -> NULL)."""
    src = arr.type
    if is_string(src):
        ok = pc.match_substring_regex(arr, _INT_RE)
        if pc.all(pc.fill_null(ok, True)).as_py():
            return pc.cast(pc.utf8_trim_whitespace(pc.if_else(ok, arr, None)), pa.int64())
        ok = pc.match_substring_regex(arr, _NUM_RE)
        return pc.cast(pc.utf8_trim_whitespace(pc.if_else(ok, arr, None)), pa.float64())
    if pa.types.is_boolean(src):
        return pc.cast(arr, pa.int64())
    if is_temporal(src):
        fmt = "%Y%m%d" if pa.types.is_date(src) else "%Y%m%d%H%M%S"
        return pc.cast(pc.strftime(_seconds(arr), format=fmt), pa.int64())
    return arr


_FIRST_DAY = -719162  # 0001-01-01 in days since 1970-01-01


def _clean_cast(arr: pa.Array, target: pa.DataType) -> pa.Array | None:
    """Arrow's own parser when every value is in its plain form ('123', '2024-01-31'): one C++ pass, as a clean
    load file is; None when any value needs the rules below (whitespace, fractions, bad dates, out of range)."""
    try:
        return pc.cast(arr, target)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None


def _to_int(arr: pa.Array, target: pa.DataType, strict: bool) -> pa.Array:
    src = arr.type
    if is_string(src):
        clean = _clean_cast(arr, target)  # digits with an optional sign, in range: what _INT_RE accepts
        if clean is not None:
            return clean
    if is_string(src) and strict:
        ok = pc.match_substring_regex(arr, _INT_RE)
        num: pa.Array = pc.cast(pc.utf8_trim_whitespace(pc.if_else(ok, arr, None)), pa.decimal128(38, 0))
    elif is_string(src):
        # Doris reads digits and a fraction it drops ('3.9' is 3); whitespace may follow digits but not a
        # fraction ('3 ' is 3, '3.000 ' NULL); exponents and a leading '.' are not integers
        ok = pc.match_substring_regex(arr, _INT_CAST_RE)
        whole = pc.replace_substring_regex(pc.if_else(ok, arr, None), r"\.\d*$", "")
        num = pc.cast(pc.utf8_trim_whitespace(whole), pa.decimal128(38, 0))
    else:
        num = _to_number(arr, strict)
    lo, hi = _INT_BOUNDS.get(target.bit_width, _INT_BOUNDS[64])
    if pa.types.is_floating(num.type):
        num = pc.trunc(num)
        num = pc.if_else(pc.is_nan(num), None, num)
        in_range = pc.and_(pc.greater_equal(num, float(lo)), pc.less_equal(num, float(hi)))
    elif pa.types.is_decimal(num.type):
        num = pc.trunc(num) if num.type.scale else num
        num = pc.cast(num, pa.decimal128(38, num.type.scale))
        in_range = pc.and_(
            pc.greater_equal(num, pa.scalar(decimal.Decimal(lo), num.type)),
            pc.less_equal(num, pa.scalar(decimal.Decimal(hi), num.type)),
        )
    else:
        if pa.types.is_unsigned_integer(num.type) and num.type.bit_width == 64:
            num = pc.cast(num, pa.decimal128(20, 0))
            return _to_int(num, target, strict)
        in_range = pc.and_(pc.greater_equal(num, lo), pc.less_equal(num, hi))
    return pc.cast(pc.if_else(in_range, num, None), target, safe=False)


def decimal_fits(arr: pa.Array, precision: int, scale: int) -> pa.Array:
    """Boolean mask: |x| < 10^(precision-scale) for a decimal128(38, scale) array."""
    if precision >= 38:
        return pc.equal(arr, arr)  # every decimal128(38) value fits; NULL stays NULL
    bound = pa.scalar(decimal.Decimal(10) ** (precision - scale), pa.decimal128(38, scale))
    return pc.less(pc.abs(arr), bound)


def _decimal_text(arr: pa.Array, int_digits: int, scale: int) -> pa.Array:
    """Text (or booleans / dates as numbers) cleaned for a decimal cast: NULL unless a decimal number, NULL with
    `int_digits` or more integer digits (overflow, before an Arrow cast could fail), cut one digit past `scale`
    (the caller rounds half up on it, as Doris does)."""
    if not is_string(arr.type):
        arr = to_string(_to_number(arr, False))
    ok = pc.match_substring_regex(arr, _DEC_RE)
    txt = pc.utf8_trim_whitespace(pc.if_else(ok, arr, None))
    txt = pc.replace_substring_regex(txt, r"^([+-]?)\.", r"\10.")
    too_big = pc.match_substring_regex(txt, rf"^[+-]?0*[1-9]\d{{{int_digits},}}(\.|$)")
    txt = pc.if_else(too_big, None, txt)
    txt = pc.replace_substring_regex(txt, rf"^([+-]?\d*\.\d{{0,{scale + 1}}})\d*$", r"\1")
    return pc.replace_substring_regex(txt, r"\.$", "")


def _to_decimal(arr: pa.Array, target: pa.Decimal128Type) -> pa.Array:
    p, s = target.precision, target.scale
    src = arr.type
    if target == LARGEINT_ARROW:
        return _to_largeint(arr)
    if is_string(src) or pa.types.is_boolean(src) or is_temporal(src):
        txt = _decimal_text(arr, p - s, s)
        if p + 2 > 38 and s < 38:  # LARGEINT, DECIMAL(37+): the extra digits need DECIMAL256 on the way
            wide = pc.round(pc.cast(txt, pa.decimal256(p + 2, s + 1)), s, round_mode="half_towards_infinity")
            return pc.cast(wide, target, safe=False)  # too many digits were made NULL above
        wide = pc.cast(txt, pa.decimal128(min(38, p + 2), s + 1) if s < 38 else pa.decimal128(38, s))
        arr = wide
        src = arr.type
    if pa.types.is_floating(src):
        r = pc.round(arr, s, round_mode="half_towards_infinity")
        r = pc.if_else(pc.is_nan(r), None, r)
        fits = pc.less(pc.abs(r), float(10 ** (p - s)))
        return pc.cast(pc.if_else(fits, r, None), target, safe=False)
    if pa.types.is_integer(src):
        src_dec = pa.decimal128(20, 0) if src.bit_width == 64 else pa.decimal128(10, 0)
        arr = pc.cast(arr, src_dec)
        src = src_dec
    if pa.types.is_decimal(src) and src.precision - src.scale + s > 38:
        # a LARGEINT (or a wide decimal) into more scale: the value may not fit 128 bits on the way
        arr = pc.cast(arr, pa.decimal256(min(76, src.precision + 1), src.scale))
        if src.scale > s:
            arr = pc.round(arr, s, round_mode="half_towards_infinity")
        wide = pc.cast(arr, pa.decimal256(min(76, src.precision - src.scale + s + 1), s))
        fits = pc.less(pc.abs(wide), pa.scalar(decimal.Decimal(10) ** (p - s), pa.decimal256(76, s)))
        return pc.cast(pc.if_else(fits, wide, None), target, safe=False)
    if pa.types.is_decimal(src):
        if src.scale > s:
            # one more integer digit first: rounding 9.995 up must not overflow the source type
            arr = pc.cast(arr, pa.decimal128(min(38, src.precision + 1), src.scale))
            arr = pc.round(arr, s, round_mode="half_towards_infinity")
        wide = pc.cast(arr, pa.decimal128(38, s), safe=False) if src.scale > s else _widen(arr, s)
        fits = decimal_fits(wide, p, s)
        return pc.cast(pc.if_else(fits, wide, None), target, safe=False)
    raise analysis_error(f"can not cast from origin type {src} to target type DECIMAL({p}, {s})")


_LARGEINT_BOUND = pa.scalar(decimal.Decimal(LARGEINT_MAX), pa.decimal256(76, 0))


def _to_largeint(arr: pa.Array) -> pa.Array:
    """LARGEINT over its whole 128-bit range: parsed as DECIMAL256 (39 digits do not fit decimal128's 38),
    checked against +-(2^127 - 1), then narrowed to the int128 bytes. Text and numbers round half up as
    decimals do; anything else is NULL."""
    src = arr.type
    if is_string(src) or pa.types.is_boolean(src) or is_temporal(src):
        txt = _decimal_text(arr, 40, 0)
        wide = pc.round(pc.cast(txt, pa.decimal256(41, 1)), 0, round_mode="half_towards_infinity")
        wide = pc.cast(wide, pa.decimal256(76, 0))
    elif pa.types.is_floating(src):
        r = pc.round(arr, 0, round_mode="half_towards_infinity")
        r = pc.if_else(pc.or_(pc.is_nan(r), pc.greater_equal(pc.abs(r), float(1 << 127))), None, r)
        wide = pc.cast(r, pa.decimal256(76, 0), safe=False)
    elif pa.types.is_integer(src):
        return pc.cast(arr, LARGEINT_ARROW)
    elif pa.types.is_decimal(src):
        if src.scale:
            arr = pc.round(pc.cast(arr, pa.decimal256(min(76, src.precision + 1), src.scale)), 0,
                           round_mode="half_towards_infinity")
        wide = pc.cast(arr, pa.decimal256(76, 0))
    else:
        raise analysis_error(f"can not cast from origin type {src} to target type LARGEINT")
    fits = pc.less_equal(pc.abs(wide), _LARGEINT_BOUND)
    return pc.cast(pc.if_else(fits, wide, None), LARGEINT_ARROW, safe=False)


def _widen(arr: pa.Array, scale: int) -> pa.Array:
    src = arr.type
    digits = src.precision - src.scale
    if digits + scale > 38:
        return pc.cast(arr, pa.decimal128(38, scale), safe=False)
    return pc.cast(pc.cast(arr, pa.decimal128(digits + scale, scale)), pa.decimal128(38, scale))


# -- dates ------------------------------------------------------------------------------------------


def parse_datetime(arr: pa.Array) -> pa.Array:
    """Strings -> timestamp[us]; anything not a real calendar date/time ('2020-13-01', '2020-02-30')
    becomes NULL. Accepts 'YYYY-MM-DD', 'YYYYMMDD', 'YYYY-MM-DD HH:MM[:SS[.ffffff]]'."""
    m = pc.extract_regex(arr, _DT_RE)
    valid = pc.is_valid(m)
    n = len(arr)

    def field(name: str) -> np.ndarray:
        f = pc.struct_field(m, name)
        f = pc.if_else(pc.equal(pc.utf8_length(f), 0), None, f)
        return pc.fill_null(pc.cast(f, pa.int64()), 0).to_numpy(zero_copy_only=False)

    y, mo, d = field("y"), field("mo"), field("d")
    h, mi, s = field("h"), field("mi"), field("s")
    frac_txt = pc.utf8_rpad(pc.fill_null(pc.struct_field(m, "f"), ""), width=6, padding="0")
    frac = pc.fill_null(pc.cast(frac_txt, pa.int64()), 0).to_numpy(zero_copy_only=False)
    ok = np.asarray(pc.fill_null(valid, False).to_numpy(zero_copy_only=False), dtype=bool)
    ok &= (mo >= 1) & (mo <= 12) & (d >= 1) & (h < 24) & (mi < 60) & (s < 60) & (y >= 1)
    months = np.where(ok, (y - 1970) * 12 + (mo - 1), 0).astype("datetime64[M]")
    month_start = months.astype("datetime64[D]")
    month_len = ((months + 1).astype("datetime64[D]") - month_start).astype(np.int64)
    ok &= d <= month_len
    days = month_start.astype(np.int64) + np.where(ok, d - 1, 0)
    micros = ((days * 86400 + h * 3600 + mi * 60 + s) * 1_000_000 + frac).astype(np.int64)
    del n
    return pa.array(micros, pa.timestamp("us"), mask=~ok)


def _to_temporal(arr: pa.Array, target: pa.DataType) -> pa.Array:
    src = arr.type
    if is_string(src) and pa.types.is_date32(target):
        clean = _clean_cast(arr, target)  # 'YYYY-MM-DD' calendar dates only (Arrow refuses 2020-02-30)
        if clean is not None and (clean.null_count == len(clean) or
                                  pc.min(clean.cast(pa.int32())).as_py() >= _FIRST_DAY):  # year 0 is no date
            return clean
    if is_string(src):
        ts = parse_datetime(arr)
    elif pa.types.is_integer(src) or pa.types.is_decimal(src) or pa.types.is_floating(src):
        ts = parse_datetime(pc.cast(pc.cast(arr, pa.int64(), safe=False), pa.string()))
    elif pa.types.is_timestamp(src):
        ts = pc.cast(arr, pa.timestamp("us"), safe=False)
    elif pa.types.is_date(src):
        ts = pc.cast(pc.cast(arr, pa.date32()), pa.timestamp("us"))
    else:
        raise analysis_error(f"can not cast from origin type {src} to target type {target}")
    # a cast to a coarser unit truncates toward zero: before 1970 that is upward, so floor first
    if pa.types.is_date(target):
        return pc.cast(pc.floor_temporal(ts, unit="day"), pa.date32(), safe=False)
    if target.unit != ts.type.unit:
        ts = pc.floor_temporal(ts, unit={"s": "second", "ms": "millisecond", "us": "microsecond"}[target.unit])
    return pc.cast(ts, target, safe=False)


def _seconds(arr: pa.Array) -> pa.Array:
    if pa.types.is_date(arr.type):
        return pc.cast(pc.cast(arr, pa.date32()), pa.timestamp("s"))
    return pc.cast(arr, pa.timestamp("s"), safe=False)


# -- text -------------------------------------------------------------------------------------------


def to_string(v: Value) -> Value:
    """MySQL's text form: '2020-01-02', '2020-01-02 03:04:05' (fraction only when present), '1.50'."""
    t = v.type
    if is_string(t):
        return v
    if pa.types.is_null(t):
        return pc.cast(v, pa.string())
    if pa.types.is_boolean(t):
        return pc.cast(pc.cast(v, pa.int8()), pa.string())
    if pa.types.is_date(t):
        return pc.cast(pc.cast(v, pa.date32()), pa.string())
    if pa.types.is_timestamp(t):
        seconds = v if t.unit == "s" else pc.floor_temporal(v, unit="second")  # before 1970 too
        whole = pc.strftime(pc.cast(seconds, pa.timestamp("s"), safe=False), format="%Y-%m-%d %H:%M:%S")
        if t.unit == "s":
            return whole
        us = pc.cast(pc.cast(v, pa.timestamp("us")), pa.int64())
        frac = pc.subtract(us, pc.multiply(pc.divide(us, 1_000_000), 1_000_000))
        frac = pc.if_else(pc.less(frac, 0), pc.add(frac, 1_000_000), frac)
        has_frac = pc.not_equal(frac, 0)
        frac_txt = pc.utf8_lpad(pc.cast(frac, pa.string()), width=6, padding="0")
        return pc.if_else(has_frac, pc.binary_join_element_wise(whole, frac_txt, "."), whole)
    return pc.cast(v, pa.string())
