"""Dynamic partitions, the plan (issue 6): from a validated `DynamicPartitionProperty`, the table's RANGE
partitions and the current instant, the partitions one scheduler pass adds and drops, with Doris's names,
borders and messages (the rules are listed in storage.partition_policy.dynamic_partition's docstring).
Pure: no catalog, no clock, no threads.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import NamedTuple

from storage.partition_policy.dynamic_partition import (
    MIN_START_OFFSET,
    START,
    DynamicPartitionProperty,
    _Column,
    _column,
    _detail_message,
)


@dataclass(frozen=True)
class PlannedPartition:
    name: str
    lower: str  # literal as Doris prints it: '2020-05-29', '2020-05-29 00:00:00', '20200529'
    upper: str


@dataclass(frozen=True)
class DynamicPlan:
    to_add: list[PlannedPartition]
    to_drop: list[str]
    errors: list[str]  # overlap (and other add) messages, in offset order, as SHOW DYNAMIC PARTITION TABLES shows them
    drop_errors: list[str] = field(default_factory=list)
    # LastCreatePartitionMsg after the run if every add succeeds (Doris clears it on each success)
    last_create_msg: str | None = None
    # the failure Doris raises when this is the synchronous first run inside CREATE TABLE
    first_run_error: str | None = None


class _BorderError(Exception):
    pass


_POS_INF: tuple = (2,)
_NEG_INF: tuple = (0,)
_BOUND_RE = re.compile(r"(\d{1,4})-(\d{1,2})-(\d{1,2})(?:[ T](\d{1,2}):(\d{1,2})(?::(\d{1,2})(?:\.(\d{1,6}))?)?)?")


def _bound_key(text: str | None, column: _Column, upper: bool) -> tuple:
    """Order of a stored bound literal; None (MAXVALUE) sorts last, a missing lower first."""
    if text is None:
        return _POS_INF if upper else _NEG_INF
    t = text.strip()
    if t.upper() == "MAXVALUE":
        return _POS_INF
    if t.upper() == "MINVALUE" or not t:
        return _NEG_INF
    if column.kind == "INT":
        return (1, int(t))
    m = _BOUND_RE.fullmatch(t)
    if m is None:
        raise ValueError(f"not a {column.kind} partition bound: {text!r}")
    parts = [int(x) if x else 0 for x in m.groups()[:6]]
    return (1, (*parts, int((m[7] or "0").ljust(6, "0"))))


def _time_key(t: datetime, column: _Column) -> tuple:
    if column.kind == "INT":
        return (1, t.year * 10000 + t.month * 100 + t.day)
    hour = t.hour if column.kind == "DATETIME" else 0
    return (1, (t.year, t.month, t.day, hour, 0, 0, 0))


def _format(t: datetime, column: _Column) -> str:
    if column.kind == "INT":
        return f"{t.year:04d}{t.month:02d}{t.day:02d}"
    day = f"{t.year:04d}-{t.month:02d}-{t.day:02d}"
    if column.kind == "DATE":
        return day
    return f"{day} {t.hour:02d}:00:00" + ("." + "0" * column.precision if column.precision else "")


def _range_text(lower: str | None, upper: str | None, column: _Column) -> str:
    """Guava's Range.toString of two PartitionKeys, as Doris prints it in messages."""
    def key(value: str | None, missing: str) -> str:
        return f"types: [{column.internal}]; keys: [{missing if value is None else value}]; "
    return f"[{key(lower, 'MINVALUE')}..{key(upper, 'MAXVALUE')})"


def _week_of_year(d: date) -> int:
    """java.util.Calendar.WEEK_OF_YEAR, US locale: Sunday-first weeks, week 1 holds 1 January."""
    sunday = d - timedelta(days=d.isoweekday() % 7)
    if (sunday + timedelta(days=6)).year > d.year:
        return 1
    jan1 = date(d.year, 1, 1)
    return (sunday - (jan1 - timedelta(days=jan1.isoweekday() % 7))).days // 7 + 1


def partition_name(p: DynamicPartitionProperty, lower: datetime) -> str:
    """prefix + the lower border as yyyyMMddHH / yyyyMMdd / yyyy_ww / yyyyMM / yyyy."""
    unit = p.unit
    if unit == "WEEK":
        week = _week_of_year(lower.date())
        if week <= 1 and lower.month == 12:  # Doris: the week of 2019-12-30 is 2019_53, not 2019_01
            week += 52
        return f"{p.prefix}{lower.year}_{week:02d}"
    digits = {"HOUR": 10, "DAY": 8, "MONTH": 6, "YEAR": 4}[unit]
    return p.prefix + f"{lower.year:04d}{lower.month:02d}{lower.day:02d}{lower.hour:02d}"[:digits]


class _Borders:
    """border(offset) for one property at one instant, as naive local datetimes."""

    def __init__(self, p: DynamicPartitionProperty, now: datetime) -> None:
        self.p = p
        self.now_utc = (now if now.tzinfo else now.replace(tzinfo=UTC)).astimezone(UTC)
        self.today = self.now_utc.astimezone(p.tzinfo).date()

    def __call__(self, offset: int) -> datetime:
        p = self.p
        try:
            if p.unit == "HOUR":
                t = (self.now_utc + timedelta(hours=offset)).astimezone(p.tzinfo)
                return t.replace(minute=0, second=0, microsecond=0, tzinfo=None)
            today = self.today
            if p.unit == "DAY":
                d = today + timedelta(days=offset)
            elif p.unit == "WEEK":
                d = today + timedelta(weeks=offset)
                d += timedelta(days=p.start_day_of_week - d.isoweekday())
            elif p.unit == "MONTH":
                months = today.year * 12 + today.month - 1 + offset - (today.day < p.start_day_of_month)
                d = date(months // 12, months % 12 + 1, p.start_day_of_month)
            else:
                d = date(today.year + offset, 1, 1)
        except (OverflowError, ValueError) as e:
            raise _BorderError(f"offset {offset} of {p.unit} is out of the date range ({e})") from None
        return datetime(d.year, d.month, d.day)


class _Existing(NamedTuple):
    name: str
    lower: str | None
    upper: str | None
    lo: tuple
    hi: tuple


def plan_dynamic_partitions(
    prop: DynamicPartitionProperty,
    column_type: str,
    existing: Sequence[tuple[str, tuple[str, ...] | None, tuple[str, ...] | None]],
    now: datetime,
) -> DynamicPlan:
    """One scheduler pass: the partitions to add for offsets create_start..end, and those to drop.

    `existing` is (name, lower, upper) of the table's RANGE partitions (bounds as stored, upper None for
    MAXVALUE); `now` is an aware instant (naive means UTC). A disabled property plans nothing."""
    column = _column(column_type)
    if column is None:
        msg = _detail_message("Dynamic Partition Only Support DATE, DATETIME and INTEGER Type Now.")
        return DynamicPlan([], [], [msg], last_create_msg=msg)  # recorded, even inside CREATE TABLE
    if not prop.enable:
        return DynamicPlan([], [], [])
    border = _Borders(prop, now)
    ranges = [
        _Existing(name, lo[0] if lo else None, hi[0] if hi else None,
                  _bound_key(lo[0] if lo else None, column, False), _bound_key(hi[0] if hi else None, column, True))
        for name, lo, hi in existing
    ]
    names = {r.name.lower() for r in ranges}
    to_add: list[PlannedPartition] = []
    errors: list[str] = []
    last_msg: str | None = None
    first_run_error: str | None = None
    for offset in range(prop.create_start, prop.end + 1):
        try:
            lower, upper = border(offset), border(offset + 1)
        except _BorderError as e:
            first_run_error = first_run_error or _detail_message(
                f"maybe dynamic_partition.start is too small, error: {e}")
            continue
        lo, hi = _time_key(lower, column), _time_key(upper, column)
        if lo >= hi:  # an empty range (a repeated local hour)
            continue
        lower_text, upper_text = _format(lower, column), _format(upper, column)
        hit = next((r for r in ranges if max(lo, r.lo) < min(hi, r.hi)), None)
        if hit is not None:
            if (hit.lo, hit.hi) == (lo, hi):
                last_msg = None
            else:
                last_msg = _detail_message(
                    f"Range {_range_text(hit.lower, hit.upper, column)} is intersected with range: "
                    f"{_range_text(lower_text, upper_text, column)}")
                errors.append(last_msg)
            continue
        name = partition_name(prop, lower)
        if name.lower() in names:
            last_msg = _detail_message(f"Duplicate partition name {name}")
            errors.append(last_msg)
            continue
        names.add(name.lower())
        to_add.append(PlannedPartition(name, lower_text, upper_text))
    to_drop, drop_errors = _plan_drops(prop, column, border, ranges)
    return DynamicPlan(to_add, to_drop, errors, drop_errors,
                       last_create_msg=None if to_add else last_msg, first_run_error=first_run_error)


def _plan_drops(p: DynamicPartitionProperty, column: _Column, border: _Borders,
                ranges: list[_Existing]) -> tuple[list[str], list[str]]:
    if p.start == MIN_START_OFFSET:
        return [], []
    try:
        keep_from = _time_key(border(p.start), column)
    except _BorderError as e:
        hint = f"'{START}' = {p.start}, maybe it's too small, can use alter table sql to increase it. "
        return [], [_detail_message(f"{hint}, error: {e}")]
    periods = []
    for lo, hi in p.reserved_history_periods:
        try:
            periods.append((_period_key(lo, column), _period_key(hi, column)))
        except ValueError:
            continue
    drops = []
    for r in ranges:
        if r.hi > keep_from or any(r.lo <= p_hi and p_lo < r.hi for p_lo, p_hi in periods):
            continue
        drops.append(r.name)
    return drops, []


def _period_key(text: str, column: _Column) -> tuple:
    """A reserved_history_periods endpoint in the partition column's terms (minutes and seconds dropped)."""
    parts = [int(x) for x in re.findall(r"\d+", text)] + [0, 0, 0]
    return _time_key(datetime(parts[0], parts[1], parts[2], parts[3]), column)
