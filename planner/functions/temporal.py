"""Date and time functions: now/curdate, parts (year ... weekofyear), date_add/sub with INTERVAL,
datediff, date_format, str_to_date, unix_timestamp, from_unixtime, date_trunc, last_day.

Format strings arrive in sqlglot's normalised (Python strftime) form: the MySQL-family parsers translate
`%i` -> `%M`, `%s` -> `%S`, `%e` -> `%-d` ... while parsing. Arrow's strftime covers most directives;
the few it lacks (no-padding `%-d`, `%f`) are computed column-wise and joined.
"""

from __future__ import annotations

import re

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from planner.expressions import Evaluator, register, register_name
from planner.functions.casts import convert, to_string
from planner.values import Value, broadcast, is_string
from sql.errors import analysis_error

TS = pa.timestamp("us")


def as_timestamp(v: Value) -> Value:
    if pa.types.is_timestamp(v.type):
        return v if v.type == TS else pc.cast(v, TS, safe=False)
    return convert(v, TS)


def as_date(v: Value) -> Value:
    if pa.types.is_date32(v.type):
        return v
    return convert(v, pa.date32())


def as_temporal(v: Value) -> Value:
    """Dates stay dates, strings become DATETIME (or DATE when they carry no time)."""
    if pa.types.is_date(v.type) or pa.types.is_timestamp(v.type):
        return v
    ts = as_timestamp(v)
    return ts


def to_epoch_us(ts: Value, zone: str) -> Value:
    """Local DATETIMEs of the time zone `zone` as microseconds since the epoch."""
    zoned = pc.assume_timezone(pc.cast(ts, TS), zone, ambiguous="earliest", nonexistent="earliest")
    return pc.cast(zoned, pa.int64())


def from_epoch_us(us: Value, zone: str) -> Value:
    """Microseconds since the epoch as local DATETIMEs of the time zone `zone`."""
    return pc.local_timestamp(pc.cast(pc.cast(us, pa.int64()), pa.timestamp("us", zone)))


# -- current time ----------------------------------------------------------------------------------


def _now(ev: Evaluator, e: exp.Expression) -> Value:
    return pa.scalar(ev.ctx.statement_time(), TS)


def _curdate(ev: Evaluator, e: exp.Expression) -> Value:
    return pa.scalar(ev.ctx.statement_time().date(), pa.date32())


register(exp.CurrentTimestamp, exp.CurrentDatetime)(_now)
register_name("now", "sysdate", "localtime", "localtimestamp", "current_timestamp")(_now)
register(exp.CurrentDate)(_curdate)
register_name("curdate", "current_date")(_curdate)


@register(exp.CurrentTime)
@register_name("curtime", "current_time")
def _curtime(ev: Evaluator, e: exp.Expression) -> Value:
    return pa.scalar(ev.ctx.statement_time().strftime("%H:%M:%S"), pa.string())


# -- conversions -----------------------------------------------------------------------------------


@register(exp.TsOrDsToDate, exp.Date)
@register_name("to_date", "date")
def _to_date(ev: Evaluator, e: exp.Expression) -> Value:
    args = ev.args(e)
    return as_date(args[0])


@register(exp.TsOrDsToTimestamp, exp.Timestamp)
def _to_timestamp(ev: Evaluator, e: exp.Expression) -> Value:
    return as_timestamp(ev.eval(e.this))


# -- parts -----------------------------------------------------------------------------------------


def _part(fn, **kw):  # noqa: ANN001, ANN003, ANN202
    def handler(ev: Evaluator, e: exp.Expression) -> Value:
        v = as_temporal(ev.eval(e.this))
        return pc.cast(fn(v, **kw), pa.int32())

    return handler


register(exp.Year)(_part(pc.year))
register(exp.Month)(_part(pc.month))
register(exp.Day, exp.DayOfMonth)(_part(pc.day))
register(exp.Quarter)(_part(pc.quarter))
register(exp.DayOfYear)(_part(pc.day_of_year))
register(exp.WeekOfYear)(_part(pc.iso_week))
# MySQL DAYOFWEEK: 1 = Sunday ... 7 = Saturday
register(exp.DayOfWeek)(_part(pc.day_of_week, count_from_zero=False, week_start=7))
# MySQL WEEKDAY: 0 = Monday ... 6 = Sunday
register_name("weekday")(lambda ev, e: pc.cast(pc.day_of_week(as_temporal(ev.args(e)[0])), pa.int32()))


def _time_part(fn):  # noqa: ANN001, ANN202
    def handler(ev: Evaluator, e: exp.Expression) -> Value:
        return pc.cast(fn(as_timestamp(ev.eval(e.this))), pa.int32())

    return handler


register(exp.Hour)(_time_part(pc.hour))
register(exp.Minute)(_time_part(pc.minute))
register(exp.Second)(_time_part(pc.second))


@register(exp.Week)
def _week(ev: Evaluator, e: exp.Week) -> Value:
    # MySQL WEEK(d) default mode 0: weeks start on Sunday, week 0 before the first Sunday
    return pc.cast(pc.week(as_temporal(ev.eval(e.this)), week_starts_monday=False, count_from_zero=True,
                           first_week_is_fully_in_year=True), pa.int32())


@register(exp.Dayname)
def _dayname(ev: Evaluator, e: exp.Expression) -> Value:
    return pc.strftime(_seconds(ev.eval(e.this)), format="%A")


_EXTRACT = {
    "YEAR": pc.year, "MONTH": pc.month, "DAY": pc.day, "HOUR": pc.hour, "MINUTE": pc.minute,
    "SECOND": pc.second, "QUARTER": pc.quarter, "WEEK": pc.iso_week, "DOY": pc.day_of_year,
}


@register(exp.Extract)
def _extract(ev: Evaluator, e: exp.Extract) -> Value:
    unit = e.this.name.upper()
    fn = _EXTRACT.get(unit)
    if fn is None:
        raise analysis_error(f"Unsupported EXTRACT unit: {unit}")
    return pc.cast(fn(as_timestamp(ev.eval(e.expression))), pa.int32())


# -- arithmetic ------------------------------------------------------------------------------------

_FIXED_UNITS_US = {
    "MICROSECOND": 1, "SECOND": 1_000_000, "MINUTE": 60_000_000, "HOUR": 3_600_000_000,
    "DAY": 86_400_000_000, "WEEK": 7 * 86_400_000_000,
}
_MONTH_UNITS = {"MONTH": 1, "QUARTER": 3, "YEAR": 12}


def _unit_name(unit: exp.Expression | None) -> str:
    name = (unit.name if unit is not None else "DAY").upper()
    return name[:-1] if name.endswith("S") and name[:-1] in (*_FIXED_UNITS_US, *_MONTH_UNITS) else name


def add_interval(ev: Evaluator, base: Value, interval: exp.Interval, sign: int) -> Value:
    return shift(base, ev.eval(interval.this), _unit_name(interval.args.get("unit")), sign)


def shift(base: Value, amount: Value, unit: str, sign: int) -> Value:
    """base +/- amount units. DATE stays DATE for day-or-larger units (as MySQL and Doris do)."""
    n = convert(amount, pa.int64()) if not pa.types.is_integer(amount.type) else pc.cast(amount, pa.int64())
    if sign < 0:
        n = pc.negate(n)
    base = as_temporal(base)
    is_date = pa.types.is_date(base.type)
    if unit in _MONTH_UNITS:
        return _add_months(base, pc.multiply(n, _MONTH_UNITS[unit]))
    if unit not in _FIXED_UNITS_US:
        raise analysis_error(f"Unsupported time unit: {unit}")
    if is_date and unit in ("DAY", "WEEK"):
        days = pc.cast(pc.cast(base, pa.date32()), pa.int32())
        step = pc.multiply(n, 7 if unit == "WEEK" else 1)
        return pc.cast(pc.cast(pc.add(pc.cast(days, pa.int64()), step), pa.int32()), pa.date32())
    us = pc.cast(pc.cast(as_timestamp(base), TS), pa.int64())
    return pc.cast(pc.add(us, pc.multiply(n, _FIXED_UNITS_US[unit])), TS)


def _add_months(base: Value, months: Value) -> Value:
    """Calendar month arithmetic with the day clamped to the month's end (Jan 31 + 1 month = Feb 29)."""
    scalar = isinstance(base, pa.Scalar) and isinstance(months, pa.Scalar)
    n = max(len(base) if not isinstance(base, pa.Scalar) else 1, len(months) if not isinstance(months, pa.Scalar) else 1)
    b = broadcast(base, n)
    m = broadcast(months, n)
    valid = pc.and_(pc.is_valid(b), pc.is_valid(m)).to_numpy(zero_copy_only=False)
    is_date = pa.types.is_date(b.type)
    ts = pc.cast(b, TS) if is_date else b
    us = pc.fill_null(pc.cast(ts, pa.int64()), 0).to_numpy(zero_copy_only=False)
    mv = pc.fill_null(m, 0).to_numpy(zero_copy_only=False)
    days = us // 86_400_000_000
    tod = us - days * 86_400_000_000
    d64 = days.astype("datetime64[D]")
    month = d64.astype("datetime64[M]")
    dom = (d64 - month.astype("datetime64[D]")).astype(np.int64)
    target = month + mv
    month_len = ((target + 1).astype("datetime64[D]") - target.astype("datetime64[D]")).astype(np.int64)
    new_days = target.astype("datetime64[D]").astype(np.int64) + np.minimum(dom, month_len - 1)
    out_us = new_days * 86_400_000_000 + tod
    out = pa.array(out_us, TS, mask=~valid)
    if is_date:
        out = pc.cast(out, pa.date32())
    return out[0] if scalar else out


def _date_add(sign: int):  # noqa: ANN202
    def handler(ev: Evaluator, e: exp.Expression) -> Value:
        amount_node = e.expression
        unit = e.args.get("unit")
        if isinstance(amount_node, exp.Interval):
            unit = amount_node.args.get("unit")
            amount_node = amount_node.this
        return shift(ev.eval(e.this), ev.eval(amount_node), _unit_name(unit), sign)

    return handler


register(exp.DateAdd, exp.TimestampAdd)(_date_add(1))
register(exp.DateSub, exp.TimestampSub)(_date_add(-1))
register_name("days_add", "adddate")(_date_add(1))


@register(exp.DateDiff)
def _datediff(ev: Evaluator, e: exp.DateDiff) -> Value:
    a = pc.cast(pc.cast(as_date(ev.eval(e.this)), pa.int32()), pa.int64())
    b = pc.cast(pc.cast(as_date(ev.eval(e.expression)), pa.int32()), pa.int64())
    return pc.subtract(a, b)


@register(exp.TimestampDiff)
def _timestampdiff(ev: Evaluator, e: exp.TimestampDiff) -> Value:
    later = as_timestamp(ev.eval(e.this))
    earlier = as_timestamp(ev.eval(e.expression))
    unit = _unit_name(e.args.get("unit"))
    if unit in _MONTH_UNITS:
        months = pc.month_interval_between(earlier, later) if hasattr(pc, "month_interval_between") else None
        if months is None:
            raise analysis_error("TIMESTAMPDIFF by months is not supported")
        return pc.divide(pc.cast(months, pa.int64()), _MONTH_UNITS[unit])
    us = pc.subtract(pc.cast(later, pa.int64()), pc.cast(earlier, pa.int64()))
    return pc.divide(us, _FIXED_UNITS_US[unit])


# -- formatting and parsing --------------------------------------------------------------------------

_DIRECTIVE = re.compile(r"%-?[a-zA-Z%]")


def _seconds(v: Value) -> Value:
    v = as_temporal(v)
    if pa.types.is_date(v.type):
        return pc.cast(pc.cast(v, pa.date32()), pa.timestamp("s"))
    return pc.cast(v, pa.timestamp("s"), safe=False)


_DAY_SUFFIXED = pa.array([""] + [f"{n}{'th' if 11 <= n <= 13 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"
                                 for n in range(1, 32)])


def format_temporal(v: Value, fmt: str) -> Value:
    """strftime with Python directives; no-padding (%-d) and microseconds (%f) computed separately."""
    secs = _seconds(v)
    if not any(d in fmt for d in ("%-", "%f", "%D", "%v")):
        return pc.strftime(secs, format=fmt)
    parts: list[Value] = []
    pos = 0
    for m in _DIRECTIVE.finditer(fmt):
        if m.start() > pos:
            parts.append(pa.scalar(fmt[pos:m.start()], pa.string()))
        d = m.group()
        if d == "%f":
            us = pc.cast(pc.cast(as_timestamp(v), TS), pa.int64())
            parts.append(pc.utf8_lpad(pc.cast(pc.subtract(us, pc.multiply(pc.divide(us, 1_000_000), 1_000_000)),
                                              pa.string()), width=6, padding="0"))
        elif d == "%D":  # MySQL: the day of the month with its English suffix (7th)
            parts.append(pc.take(_DAY_SUFFIXED, pc.day(secs)))
        elif d == "%v":  # MySQL: the week (01..53), Monday first, mode 3 = ISO
            parts.append(pc.utf8_lpad(pc.cast(pc.iso_week(secs), pa.string()), width=2, padding="0"))
        elif d.startswith("%-"):
            fn = {"d": pc.day, "m": pc.month, "H": pc.hour, "M": pc.minute, "S": pc.second}.get(d[2])
            if d[2] == "I":
                h = pc.hour(secs)
                parts.append(pc.cast(pc.if_else(pc.equal(pc.subtract(h, pc.multiply(pc.divide(h, 12), 12)), 0), 12,
                                                pc.subtract(h, pc.multiply(pc.divide(h, 12), 12))), pa.string()))
            elif fn is None:
                parts.append(pc.strftime(secs, format="%" + d[2]))
            else:
                parts.append(pc.cast(fn(secs), pa.string()))
        else:
            parts.append(pc.strftime(secs, format=d))
        pos = m.end()
    if pos < len(fmt):
        parts.append(pa.scalar(fmt[pos:], pa.string()))
    return pc.binary_join_element_wise(*parts, "")


# the Java-style patterns Doris accepts besides MySQL's (date_format, from_unixtime, str_to_date,
# unix_timestamp), already in Python's strftime spelling
JAVA_FORMATS = {"yyyyMMdd": "%Y%m%d", "yyyy-MM-dd": "%Y-%m-%d", "yyyy-MM-dd HH:mm:ss": "%Y-%m-%d %H:%M:%S"}


def _format_arg(ev: Evaluator, node: exp.Expression | None, default: str) -> str | None:
    if node is None:
        return default
    f = ev.eval(node)
    if not isinstance(f, pa.Scalar):
        raise analysis_error("date format must be a constant")
    text = to_string(f).as_py()
    return JAVA_FORMATS.get(text, text) if text is not None else None


def mysql_format(text: str | None) -> str | None:
    """A MySQL format ('%Y-%m-%d %H:%i:%s') that sqlglot did not translate (an anonymous call's argument)
    in Python's strftime spelling."""
    if text is None or text in JAVA_FORMATS:
        return JAVA_FORMATS.get(text) if text is not None else None
    from sqlglot.time import format_time

    from sql.dialect import DorisLite

    return format_time(text, DorisLite.TIME_MAPPING, DorisLite.TIME_TRIE)


@register(exp.TimeToStr)
def _date_format(ev: Evaluator, e: exp.TimeToStr) -> Value:
    fmt = _format_arg(ev, e.args.get("format"), "%Y-%m-%d %H:%M:%S")
    v = ev.eval(e.this)
    if fmt is None:
        return pa.scalar(None, pa.string())
    return format_temporal(v, fmt)


_TIME_DIRECTIVES = re.compile(r"%-?[HIMSpfTrXklis]")


@register(exp.StrToDate, exp.StrToTime)
def _str_to_date(ev: Evaluator, e: exp.Expression) -> Value:
    fmt = _format_arg(ev, e.args.get("format"), "%Y-%m-%d")
    return parse_with_format(ev.eval(e.this), fmt)


def parse_with_format(value: Value, fmt: str | None) -> Value:
    """Text parsed by a (strftime-spelled) format: DATETIME, or DATE when the format has no time part."""
    v = to_string(value)
    if fmt is None or pa.types.is_null(v.type):
        return pa.scalar(None, TS)
    arrow_fmt = fmt.replace("%-", "%")
    parsed = pc.strptime(v, format=arrow_fmt, unit="us", error_is_null=True)
    if _TIME_DIRECTIVES.search(fmt):
        return parsed
    return pc.cast(parsed, pa.date32())


@register_name("unix_timestamp")
def _unix_timestamp(ev: Evaluator, e: exp.Anonymous) -> Value:
    args = ev.args(e)
    if len(args) > 2:
        raise analysis_error(f"Can not found function 'unix_timestamp' which has {len(args)} arity")
    if len(args) == 2:  # unix_timestamp(text, format)
        fmt = args[1]
        if not isinstance(fmt, pa.Scalar):
            raise analysis_error("unix_timestamp format must be a constant")
        args = [parse_with_format(args[0], mysql_format(to_string(fmt).as_py()))]
    ts = as_timestamp(args[0]) if args else pa.scalar(ev.ctx.statement_time(), TS)
    return pc.divide(to_epoch_us(ts, ev.ctx.time_zone()), 1_000_000)


@register(exp.UnixToTime)
def _from_unixtime(ev: Evaluator, e: exp.UnixToTime) -> Value:
    n = convert(ev.eval(e.this), pa.int64())
    local = from_epoch_us(pc.multiply(n, 1_000_000), ev.ctx.time_zone())
    fmt = _format_arg(ev, e.args.get("format"), "%Y-%m-%d %H:%M:%S")
    if fmt is None:
        return pa.scalar(None, pa.string())
    return format_temporal(local, fmt)


_TRUNC_UNITS = {"YEAR": "year", "QUARTER": "quarter", "MONTH": "month", "WEEK": "week", "DAY": "day",
                "HOUR": "hour", "MINUTE": "minute", "SECOND": "second"}


@register(exp.TimestampTrunc, exp.DateTrunc)
def _date_trunc(ev: Evaluator, e: exp.Expression) -> Value:
    unit_node = e.args.get("unit")
    unit = unit_node.name.upper() if unit_node is not None else "DAY"
    arrow_unit = _TRUNC_UNITS.get(unit)
    if arrow_unit is None:
        raise analysis_error(f"Unsupported date_trunc unit: {unit}")
    value = ev.eval(e.this)
    v = as_timestamp(value)
    out = pc.floor_temporal(v, unit=arrow_unit, week_starts_monday=True)
    # Doris: a DATE stays a DATE (date_trunc(DATE, 'month') prints 2024-01-01)
    return pc.cast(out, pa.date32()) if pa.types.is_date(value.type) and arrow_unit not in ("hour", "minute",
                                                                                             "second") else out


@register(exp.LastDay)
def _last_day(ev: Evaluator, e: exp.LastDay) -> Value:
    first = pc.floor_temporal(as_date(ev.eval(e.this)), unit="month")
    return shift(_add_months(first, pa.scalar(1, pa.int64())), pa.scalar(1, pa.int64()), "DAY", -1)


def string_or_null(v: Value) -> Value:
    return v if is_string(v.type) else to_string(v)
