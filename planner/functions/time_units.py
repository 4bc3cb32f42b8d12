"""Doris's per-unit date functions and the MySQL time helpers it shares: years_add ... microseconds_sub,
years_diff ... microseconds_diff, year_floor ... second_ceil (period, origin), timediff, sec_to_time,
time_to_sec, convert_tz, utc_timestamp, to_monday, makedate, from_days, to_days, yearweek / week(d, mode),
CAST(... AS TIME).

Everything is computed column-wise on int64 microseconds with numpy (calendar months through
datetime64[M]); a TIME value is Doris's text form 'HH:MM:SS' (dorislite has no TIME column type).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from planner.context import ZONE_ALIASES
from planner.expressions import Evaluator, register, register_name
from planner.functions.casts import convert, to_string
from planner.functions.temporal import TS, as_timestamp, from_epoch_us, shift, to_epoch_us
from planner.values import Value, is_string, is_temporal
from sql.errors import analysis_error

US_PER_DAY = 86_400_000_000
_UNIT_US = {"week": 7 * US_PER_DAY, "day": US_PER_DAY, "hour": 3_600_000_000, "minute": 60_000_000,
            "second": 1_000_000, "millisecond": 1_000, "microsecond": 1}
_UNIT_MONTHS = {"year": 12, "quarter": 3, "month": 1}
TIME_MAX_SECONDS = 838 * 3600 + 59 * 60 + 59  # Doris's (and MySQL's) TIME range


# -- argument plumbing -------------------------------------------------------------------------------


def arguments(e: exp.Expression, name: str, low: int, high: int) -> list[exp.Expression]:
    """The argument nodes of a function sqlglot leaves anonymous, with Doris's arity error."""
    args = list(e.expressions) if isinstance(e, exp.Anonymous) else [
        v for k in e.arg_types for v in ([e.args[k]] if isinstance(e.args.get(k), exp.Expression)
                                         else e.args.get(k) or [])]
    if not low <= len(args) <= high:
        raise analysis_error(f"Can not found function '{name}' which has {len(args)} arity. "
                             f"Candidate functions are: [{name}]")
    return args


def _length(*values: Value) -> tuple[int, bool]:
    arrays = [len(v) for v in values if not isinstance(v, pa.Scalar)]
    return (arrays[0] if arrays else 1), not arrays


def _np(v: Value, n: int, dtype: str = "int64") -> tuple[np.ndarray, np.ndarray]:
    """A value as (numpy values with NULLs as 0, validity mask), broadcast to n rows."""
    if isinstance(v, pa.Scalar):
        ok = v.is_valid
        value = v.cast(pa.int64()).as_py() if ok and not pa.types.is_floating(v.type) else (v.as_py() if ok else 0)
        return np.full(n, value if ok else 0, dtype=dtype), np.full(n, ok)
    arr = v.combine_chunks() if isinstance(v, pa.ChunkedArray) else v
    valid = pc.is_valid(arr).to_numpy(zero_copy_only=False)
    src = arr.cast(pa.int64()) if not pa.types.is_floating(arr.type) else arr
    return pc.fill_null(src, 0).to_numpy(zero_copy_only=False).astype(dtype), valid


def micros(v: Value, n: int) -> tuple[np.ndarray, np.ndarray]:
    """A date / datetime / date text as int64 microseconds since 1970 (DATE at midnight)."""
    return _np(pc.cast(as_timestamp(v), pa.int64()), n)


def _int_arg(v: Value, n: int) -> tuple[np.ndarray, np.ndarray]:
    return _np(convert(v, pa.int64()) if not pa.types.is_integer(v.type) else v, n)


def _out(values: np.ndarray, valid: np.ndarray, t: pa.DataType, scalar: bool) -> Value:
    arr = pa.array(values, t, mask=~valid)
    return arr[0] if scalar else arr


def _timestamp_out(us: np.ndarray, valid: np.ndarray, scalar: bool, as_date: bool = False) -> Value:
    # the DATETIME range is 0000-01-01 .. 9999-12-31: beyond it Doris gives NULL
    valid = valid & (us >= _MIN_US) & (us < _MAX_US)
    out = pa.array(np.where(valid, us, 0), TS, mask=~valid)
    if as_date:
        out = pc.cast(out, pa.date32())
    return out[0] if scalar else out


_MIN_US = int(np.datetime64("0000-01-01", "us").astype(np.int64))
_MAX_US = int(np.datetime64("10000-01-01", "us").astype(np.int64))


def _is_date(v: Value) -> bool:
    return pa.types.is_date(v.type)


# -- years_add ... microseconds_sub --------------------------------------------------------------------


def _adder(unit: str, sign: int) -> Callable[[Evaluator, exp.Expression], Value]:
    name = f"{unit}s_{'add' if sign > 0 else 'sub'}"

    def handler(ev: Evaluator, e: exp.Expression) -> Value:
        base, amount = (ev.eval(a) for a in arguments(e, name, 2, 2))
        if unit == "millisecond":  # shift knows microseconds
            amount = pc.multiply(convert(amount, pa.int64()), 1000)
            return shift(base, amount, "MICROSECOND", sign)
        return shift(base, amount, unit.upper(), sign)

    return handler


for _unit in ("year", "quarter", "month", "week", "day", "hour", "minute", "second", "millisecond", "microsecond"):
    register_name(f"{_unit}s_add")(_adder(_unit, 1))
    register_name(f"{_unit}s_sub")(_adder(_unit, -1))
register_name("adddate", "date_add")(_adder("day", 1))
register_name("subdate", "date_sub")(_adder("day", -1))


@register(exp.AddMonths)
def _add_months(ev: Evaluator, e: exp.AddMonths) -> Value:
    return shift(ev.eval(e.this), ev.eval(e.expression), "MONTH", 1)


# -- years_diff ... microseconds_diff ----------------------------------------------------------------


def _month_index(us: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(months since 1970-01, microseconds into the month) of each timestamp."""
    days = us // US_PER_DAY
    month = days.astype("datetime64[D]").astype("datetime64[M]")
    into = us - month.astype("datetime64[D]").astype(np.int64) * US_PER_DAY
    return month.astype(np.int64), into


def unit_diff(later: Value, earlier: Value, unit: str) -> Value:
    """Whole `unit`s from earlier to later (truncated toward zero, comparing the day and time as Doris's
    datetime_diff does: months_diff('2024-02-29', '2024-01-31') is 0)."""
    n, scalar = _length(later, earlier)
    a, va = micros(later, n)
    b, vb = micros(earlier, n)
    valid = va & vb
    if unit in _UNIT_MONTHS:
        ma, ia = _month_index(a)
        mb, ib = _month_index(b)
        months = ma - mb
        months = np.where((months > 0) & (ia < ib), months - 1, months)
        months = np.where((months < 0) & (ia > ib), months + 1, months)
        out = np.trunc(months / _UNIT_MONTHS[unit]).astype(np.int64)
    else:
        step = _UNIT_US[unit]
        diff = a - b
        out = np.sign(diff) * (np.abs(diff) // step)
    return _out(out, valid, pa.int64(), scalar)


def _differ(unit: str) -> Callable[[Evaluator, exp.Expression], Value]:
    name = f"{unit}s_diff"

    def handler(ev: Evaluator, e: exp.Expression) -> Value:
        later, earlier = (ev.eval(a) for a in arguments(e, name, 2, 2))
        return unit_diff(later, earlier, unit)

    return handler


for _unit in ("year", "quarter", "month", "week", "day", "hour", "minute", "second", "millisecond", "microsecond"):
    register_name(f"{_unit}s_diff")(_differ(_unit))


@register(exp.TimestampDiff)
def _timestampdiff(ev: Evaluator, e: exp.TimestampDiff) -> Value:
    unit_node = e.args.get("unit")
    unit = (unit_node.name if unit_node is not None else "DAY").lower().removesuffix("s")
    if unit not in _UNIT_MONTHS and unit not in _UNIT_US:
        raise analysis_error(f"Unsupported time stamp diff time unit: {unit.upper()}")
    return unit_diff(ev.eval(e.this), ev.eval(e.expression), unit)


# -- year_floor ... second_ceil ----------------------------------------------------------------------

# Doris counts the periods from 1970-01-01 00:00:00 (weeks from Sunday 1970-01-04) unless an origin is given
_EPOCH_SUNDAY_US = 3 * US_PER_DAY


def _rounder(unit: str, ceil: bool) -> Callable[[Evaluator, exp.Expression], Value]:
    name = f"{unit}_{'ceil' if ceil else 'floor'}"

    def handler(ev: Evaluator, e: exp.Expression) -> Value:
        nodes = arguments(e, name, 1, 3)
        values = [ev.eval(a) for a in nodes]
        v = values[0]
        period: Value = pa.scalar(1, pa.int64())
        origin: Value | None = None
        if len(values) == 3:
            period, origin = values[1], values[2]
        elif len(values) == 2:
            second = values[1]
            if is_temporal(second.type) or is_string(second.type):
                origin = second
            else:
                period = second
        if not (pa.types.is_integer(period.type) or pa.types.is_null(period.type)):
            raise analysis_error(f"{name}: the period must be an INT, got {period.type}")
        n, scalar = _length(*[x for x in (v, period, origin) if x is not None])
        us, valid = micros(v, n)
        p, vp = _int_arg(period, n)
        valid &= vp & (p > 0)
        p = np.where(p > 0, p, 1)
        if origin is not None:
            o, vo = micros(origin, n)
            valid &= vo
        else:
            o = np.full(n, _EPOCH_SUNDAY_US if unit == "week" else 0, dtype=np.int64)
        if unit in _UNIT_MONTHS:
            out = _round_months(us, o, p * _UNIT_MONTHS[unit], ceil)
        else:
            step = p * _UNIT_US[unit]
            q = np.floor_divide(us - o, step)
            floor = o + q * step
            out = np.where(ceil & (floor != us), floor + step, floor)
        keep_date = _is_date(v) and unit in ("year", "quarter", "month", "week", "day")
        return _timestamp_out(out, valid, scalar, as_date=keep_date)

    return handler


def _round_months(us: np.ndarray, origin: np.ndarray, months: np.ndarray, ceil: bool) -> np.ndarray:
    mu, iu = _month_index(us)
    mo, io = _month_index(origin)
    diff = mu - mo - (iu < io)
    q = np.floor_divide(diff, months)
    floor = _plus_months(origin, q * months)
    if not ceil:
        return floor
    return np.where(floor == us, floor, _plus_months(origin, (q + 1) * months))


def _plus_months(us: np.ndarray, months: np.ndarray) -> np.ndarray:
    """us + months calendar months, the day clamped to the month's length."""
    days = us // US_PER_DAY
    tod = us - days * US_PER_DAY
    d64 = days.astype("datetime64[D]")
    month = d64.astype("datetime64[M]")
    dom = (d64 - month.astype("datetime64[D]")).astype(np.int64)
    target = month + months.astype("timedelta64[M]")
    month_len = ((target + 1).astype("datetime64[D]") - target.astype("datetime64[D]")).astype(np.int64)
    return (target.astype("datetime64[D]").astype(np.int64) + np.minimum(dom, month_len - 1)) * US_PER_DAY + tod


for _unit in ("year", "quarter", "month", "week", "day", "hour", "minute", "second"):
    register_name(f"{_unit}_floor")(_rounder(_unit, ceil=False))
    register_name(f"{_unit}_ceil")(_rounder(_unit, ceil=True))


# -- TIME values -------------------------------------------------------------------------------------


def time_text(seconds: np.ndarray, valid: np.ndarray, scalar: bool) -> Value:
    """Seconds as Doris's TIME text: [-]HH:MM:SS, clamped to +-838:59:59."""
    s = np.clip(seconds, -TIME_MAX_SECONDS, TIME_MAX_SECONDS)
    a = np.abs(s)
    h = pa.array(a // 3600)
    m = pa.array(a // 60 % 60)
    sec = pa.array(a % 60)

    def two(x: pa.Array) -> pa.Array:
        return pc.utf8_lpad(pc.cast(x, pa.string()), width=2, padding="0")

    sign = pc.if_else(pa.array(s < 0), "-", "")
    text = pc.binary_join_element_wise(sign, two(h), ":", two(m), ":", two(sec), "")
    out = pc.if_else(pa.array(valid), text, pa.scalar(None, pa.string()))
    return out[0] if scalar else out


_TIME_RE = r"^\s*(?P<neg>-?)(?P<h>\d+):(?P<m>\d{1,2})(?::(?P<s>\d{1,2})(?:\.\d*)?)?\s*$"


def time_seconds(v: Value, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Seconds of a TIME text ('16:32:18', '-01:00:00') or of a datetime's time of day."""
    if is_temporal(v.type):
        us, valid = micros(v, n)
        return (us % US_PER_DAY) // 1_000_000, valid
    text = to_string(v)
    arr = text if not isinstance(text, pa.Scalar) else pa.array([text.as_py()] * n, pa.string())
    m = pc.extract_regex(arr, _TIME_RE)
    ok = pc.is_valid(m)
    if not pc.all(pc.or_(ok, pc.is_null(arr))).as_py():
        # not a TIME text: a datetime text gives its time of day (Doris casts it to TIME)
        us, dt_ok = micros(arr, n)
        t_ok = ok.to_numpy(zero_copy_only=False)
        secs_dt = (us % US_PER_DAY) // 1_000_000
    else:
        dt_ok = np.zeros(n, bool)
        t_ok = ok.to_numpy(zero_copy_only=False)
        secs_dt = np.zeros(n, np.int64)

    def field(name: str) -> np.ndarray:
        f = pc.struct_field(m, name)
        f = pc.if_else(pc.equal(pc.utf8_length(f), 0), None, f)
        return pc.fill_null(pc.cast(f, pa.int64()), 0).to_numpy(zero_copy_only=False)

    h, mi, s = field("h"), field("m"), field("s")
    neg = pc.fill_null(pc.equal(pc.struct_field(m, "neg"), "-"), False).to_numpy(zero_copy_only=False)
    t_ok = t_ok & (mi < 60) & (s < 60)
    secs = np.where(neg, -1, 1) * (h * 3600 + mi * 60 + s)
    return np.where(t_ok, secs, secs_dt), t_ok | dt_ok


@register_name("timediff")
def _timediff(ev: Evaluator, e: exp.Expression) -> Value:
    a, b = (ev.eval(x) for x in arguments(e, "timediff", 2, 2))
    n, scalar = _length(a, b)
    ua, va = micros(a, n)
    ub, vb = micros(b, n)
    return time_text((ua - ub) // 1_000_000, va & vb, scalar)


@register_name("sec_to_time")
def _sec_to_time(ev: Evaluator, e: exp.Expression) -> Value:
    (v,) = (ev.eval(x) for x in arguments(e, "sec_to_time", 1, 1))
    n, scalar = _length(v)
    s, valid = _int_arg(v, n)
    return time_text(s, valid, scalar)


@register_name("time_to_sec")
def _time_to_sec(ev: Evaluator, e: exp.Expression) -> Value:
    (v,) = (ev.eval(x) for x in arguments(e, "time_to_sec", 1, 1))
    n, scalar = _length(v)
    s, valid = time_seconds(v, n)
    return _out(s, valid, pa.int32(), scalar)


def cast_to_time(v: Value) -> Value:
    """CAST(x AS TIME): TIME text, a datetime's time of day, or NULL."""
    n, scalar = _length(v)
    if pa.types.is_integer(v.type) or pa.types.is_floating(v.type) or pa.types.is_decimal(v.type):
        # MySQL reads a number as [H]HMMSS
        x, valid = _int_arg(v, n)
        a = np.abs(x)
        h, m, s = a // 10000, a // 100 % 100, a % 100
        valid = valid & (m < 60) & (s < 60)
        return time_text(np.sign(x) * (h * 3600 + m * 60 + s), valid, scalar)
    s, valid = time_seconds(v, n)
    return time_text(s, valid, scalar)


# -- time zones, the current UTC time ----------------------------------------------------------------


def _constant_text(v: Value, what: str) -> str | None:
    if not isinstance(v, pa.Scalar):
        raise analysis_error(f"{what} must be a constant")
    return to_string(v).as_py()


@register(exp.ConvertTimezone)
def _convert_tz(ev: Evaluator, e: exp.ConvertTimezone) -> Value:
    v = as_timestamp(ev.eval(e.args["timestamp"]))
    source = _constant_text(ev.eval(e.args["source_tz"]), "convert_tz time zone")
    target = _constant_text(ev.eval(e.args["target_tz"]), "convert_tz time zone")
    if source is None or target is None:
        return pa.scalar(None, TS)
    try:
        src = _zone(source)
        dst = _zone(target)
        return from_epoch_us(to_epoch_us(v, src), dst)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, ValueError):
        return pa.scalar(None, TS) if isinstance(v, pa.Scalar) else pa.nulls(len(v), TS)


def _zone(name: str) -> str:
    """Doris's time zone spellings: 'Asia/Shanghai', '+08:00', 'UTC', 'CST' (China)."""
    name = name.strip()
    zone = ZONE_ALIASES.get(name.upper(), name)
    if zone[:1] in "+-" and ":" not in zone:
        raise ValueError(name)
    pa.timestamp("us", zone)  # raises for an unknown zone
    pc.cast(pa.scalar(0, pa.timestamp("us", "UTC")), pa.timestamp("us", zone))
    return zone


@register(exp.UtcTimestamp)
@register_name("utc_timestamp")
def _utc_timestamp(ev: Evaluator, e: exp.Expression) -> Value:
    return pc.cast(to_epoch_us(pa.scalar(ev.ctx.statement_time(), TS), ev.ctx.time_zone()), TS)


# -- whole days --------------------------------------------------------------------------------------

_DAYS_0000_TO_1970 = 719528  # MySQL's day number of 1970-01-01 (TO_DAYS('1970-01-01'))


def _days(v: Value, n: int) -> tuple[np.ndarray, np.ndarray]:
    us, valid = micros(v, n)
    return us // US_PER_DAY, valid


def _date_out(days: np.ndarray, valid: np.ndarray, scalar: bool) -> Value:
    return _timestamp_out(days * US_PER_DAY, valid, scalar, as_date=True)


@register_name("to_monday")
def _to_monday(ev: Evaluator, e: exp.Expression) -> Value:
    (v,) = (ev.eval(x) for x in arguments(e, "to_monday", 1, 1))
    n, scalar = _length(v)
    days, valid = _days(v, n)
    monday = days - (days + 3) % 7  # 1970-01-01 was a Thursday
    # Doris: the days before the first Monday of 1970 map to 1970-01-01
    monday = np.where((days >= 0) & (days <= 3), 0, monday)
    return _date_out(monday, valid, scalar)


@register_name("makedate")
def _makedate(ev: Evaluator, e: exp.Expression) -> Value:
    year, doy = (ev.eval(x) for x in arguments(e, "makedate", 2, 2))
    n, scalar = _length(year, doy)
    y, vy = _int_arg(year, n)
    d, vd = _int_arg(doy, n)
    valid = vy & vd & (d > 0) & (y >= 0) & (y <= 9999)
    jan1 = (np.clip(y, 0, 9999) - 1970).astype("datetime64[Y]").astype("datetime64[D]").astype(np.int64)
    return _date_out(jan1 + d - 1, valid, scalar)


@register_name("from_days")
def _from_days(ev: Evaluator, e: exp.Expression) -> Value:
    (v,) = (ev.eval(x) for x in arguments(e, "from_days", 1, 1))
    n, scalar = _length(v)
    d, valid = _int_arg(v, n)
    # MySQL counts year 0 as 365 days: day 366 is 0001-01-01
    days = d - _DAYS_0000_TO_1970
    return _date_out(days, valid & (d >= 366), scalar)


@register_name("to_days")
def _to_days(ev: Evaluator, e: exp.Expression) -> Value:
    (v,) = (ev.eval(x) for x in arguments(e, "to_days", 1, 1))
    n, scalar = _length(v)
    days, valid = _days(v, n)
    return _out(days + _DAYS_0000_TO_1970, valid, pa.int32(), scalar)


# -- MySQL week numbering ----------------------------------------------------------------------------

_MONDAY_FIRST, _WEEK_YEAR, _FIRST_WEEKDAY = 1, 2, 4


def _days_in_year(y: np.ndarray) -> np.ndarray:
    return np.where((y % 4 == 0) & ((y % 100 != 0) | (y % 400 == 0)), 366, 365)


def calc_week(days: np.ndarray, mode: int) -> tuple[np.ndarray, np.ndarray]:
    """MySQL's calc_week on days since 1970-01-01: (year, week) for a week_format `mode`."""
    monday_first = bool(mode & _MONDAY_FIRST)
    week_year = bool(mode & _WEEK_YEAR)
    first_weekday = bool(mode & _FIRST_WEEKDAY)
    d64 = days.astype("datetime64[D]")
    year = d64.astype("datetime64[Y]").astype(np.int64) + 1970
    month = d64.astype("datetime64[M]").astype(np.int64) % 12 + 1
    day = (d64 - d64.astype("datetime64[M]").astype("datetime64[D]")).astype(np.int64) + 1
    first = (year - 1970).astype("datetime64[Y]").astype("datetime64[D]").astype(np.int64)

    def weekday(daynr: np.ndarray) -> np.ndarray:  # 0 = Monday (or Sunday when Sunday is the first day)
        return (daynr + (4 if not monday_first else 3)) % 7

    wd = weekday(first)
    out_year = year.copy()
    in_prev = (month == 1) & (day <= 7 - wd)
    zero = np.zeros(len(days), bool)
    if not week_year:
        zero = in_prev & ((first_weekday & (wd != 0)) | (~np.bool_(first_weekday) & (wd >= 4)))
    moved = in_prev & ~zero
    prev_days = _days_in_year(year - 1)
    out_year = np.where(moved, year - 1, out_year)
    first = np.where(moved, first - prev_days, first)
    wd = np.where(moved, (wd + 53 * 7 - prev_days) % 7, wd)
    late_start = (wd != 0) if first_weekday else (wd >= 4)
    since = np.where(late_start, days - (first + 7 - wd), days - (first - wd))
    week = since // 7 + 1
    # a date late in December may already be in week 1 of the next year (the row's own week_year flag:
    # MySQL sets it for the dates it moved into the previous year)
    wrap_wd = (wd + _days_in_year(out_year)) % 7
    wraps = (np.bool_(week_year) | moved) & (since >= 52 * 7) & ((wrap_wd == 0) if first_weekday else (wrap_wd < 4))
    out_year = np.where(wraps, out_year + 1, out_year)
    week = np.where(wraps, 1, week)
    week = np.where(zero, 0, week)
    return out_year, week


def _week_mode(mode: int) -> int:
    """MySQL's week_mode(): modes without Monday-first flip the first-weekday rule."""
    return mode ^ _FIRST_WEEKDAY if not mode & _MONDAY_FIRST else mode


def _mode_arg(ev: Evaluator, node: exp.Expression | None) -> int:
    if node is None:
        return 0
    m = ev.eval(node)
    if not isinstance(m, pa.Scalar):
        raise analysis_error("the week mode must be a constant")
    return int(convert(m, pa.int64()).as_py() or 0) & 7


@register(exp.Week)
def _week(ev: Evaluator, e: exp.Week) -> Value:
    v = ev.eval(e.this)
    n, scalar = _length(v)
    days, valid = _days(v, n)
    _, week = calc_week(days, _week_mode(_mode_arg(ev, e.args.get("mode"))))
    return _out(week, valid, pa.int32(), scalar)


@register_name("yearweek")
def _yearweek(ev: Evaluator, e: exp.Expression) -> Value:
    nodes = arguments(e, "yearweek", 1, 2)
    v = ev.eval(nodes[0])
    n, scalar = _length(v)
    days, valid = _days(v, n)
    year, week = calc_week(days, _week_mode(_mode_arg(ev, nodes[1] if len(nodes) > 1 else None)) | _WEEK_YEAR)
    return _out(year * 100 + week, valid, pa.int32(), scalar)
