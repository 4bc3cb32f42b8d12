"""Dynamic partitions (issue 6): the `dynamic_partition.*` rules as pure functions.

In: a table's PROPERTIES and partitioning (type, column types), or a validated property plus the table's
RANGE partitions and the current instant. Out: a `DynamicPartitionProperty`, its SHOW CREATE TABLE and
SHOW DYNAMIC PARTITION TABLES text, and a `DynamicPlan` of partitions to add and drop. No catalog access,
no clock, no threads: the DDL paths and the scheduler call these with what they have read. The plan
itself lives in storage.partition_policy.dynamic_plan.
Imports nothing above `storage`.

Behaviour follows Doris 2.1 (`DynamicPartitionUtil`, `DynamicPartitionScheduler`):
* Validation runs in Doris's order and raises its messages: `ErrorCode`-based ones carry their MySQL
  codes (5065-5079, SQLSTATE 42000; unknown time zone 1298), plain `DdlException`s are 1105/HY000.
* Borders are computed in `time_zone`: HOUR steps over instants, DAY/WEEK/MONTH/YEAR over local dates.
  WEEK starts on `start_day_of_week` of the week `offset` weeks away, even when that day is after today;
  MONTH starts on `start_day_of_month`, counted from last month while today is before that day.
* WEEK names are `yyyy_ww` with java.util.Calendar's WEEK_OF_YEAR in the JVM's default (US) locale:
  weeks run Sunday to Saturday, week 1 holds 1 January, and a week 1 met in December is week 53
  (Doris's own unit test names the week starting Sunday 2020-05-31 `2020_23`).
* A planned range equal to an existing partition is skipped silently; one that overlaps a different
  partition is skipped with Doris's `Range ... is intersected with range: ...` message.
* Drops only happen when `start` is set: a partition survives when it reaches past border(start) or
  touches one of `reserved_history_periods` (closed ranges); `history_partition_num` never drops.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta, timezone, tzinfo
from typing import NamedTuple
from zoneinfo import ZoneInfo

from storage.errors import StorageError, doris_error

PREFIX = "dynamic_partition."
ENABLE = PREFIX + "enable"
TIME_UNIT = PREFIX + "time_unit"
TIME_ZONE = PREFIX + "time_zone"
START = PREFIX + "start"
END = PREFIX + "end"
PARTITION_PREFIX = PREFIX + "prefix"
BUCKETS = PREFIX + "buckets"
REPLICATION_NUM = PREFIX + "replication_num"
REPLICATION_ALLOCATION = PREFIX + "replication_allocation"
CREATE_HISTORY_PARTITION = PREFIX + "create_history_partition"
HISTORY_PARTITION_NUM = PREFIX + "history_partition_num"
HOT_PARTITION_NUM = PREFIX + "hot_partition_num"
RESERVED_HISTORY_PERIODS = PREFIX + "reserved_history_periods"
STORAGE_POLICY = PREFIX + "storage_policy"
STORAGE_MEDIUM = PREFIX + "storage_medium"
START_DAY_OF_WEEK = PREFIX + "start_day_of_week"
START_DAY_OF_MONTH = PREFIX + "start_day_of_month"
DYNAMIC_PARTITION_KEYS = frozenset({
    ENABLE, TIME_UNIT, TIME_ZONE, START, END, PARTITION_PREFIX, BUCKETS, REPLICATION_NUM, REPLICATION_ALLOCATION,
    CREATE_HISTORY_PARTITION, HISTORY_PARTITION_NUM, HOT_PARTITION_NUM, RESERVED_HISTORY_PERIODS, STORAGE_POLICY,
    STORAGE_MEDIUM, START_DAY_OF_WEEK, START_DAY_OF_MONTH,
})

TIME_UNITS = ("HOUR", "DAY", "WEEK", "MONTH", "YEAR")
MIN_START_OFFSET = -(2**31)  # Integer.MIN_VALUE: `start` not set, nothing is dropped
NOT_SET_HISTORY_PARTITION_NUM = -1
NOT_SET_RESERVED_HISTORY_PERIODS = "NULL"

SHOW_DYNAMIC_PARTITION_TABLES_COLUMNS = (
    "TableName", "Enable", "TimeUnit", "Start", "End", "Prefix", "Buckets", "ReplicationNum",
    "ReplicaAllocation", "StartOf", "LastUpdateTime", "LastSchedulerTime", "State", "LastCreatePartitionMsg",
    "LastDropPartitionMsg", "ReservedHistoryPeriods",
)

_DAY_NAMES = ("MONDAY", "TUESDAY", "WEDNESDAY", "THURSDAY", "FRIDAY", "SATURDAY", "SUNDAY")


# -- errors ---------------------------------------------------------------------------------------------

def _coded(detail: str, code: int) -> StorageError:
    """A Doris `ErrorCode` failure: its own MySQL code, SQLSTATE 42000."""
    return doris_error(detail, code, "42000")


def _detail_message(detail: str) -> str:
    """The text Doris records in SHOW DYNAMIC PARTITION TABLES (a DdlException's getMessage())."""
    return doris_error(detail).message


_PERIODS_FORMAT = ('"[yyyy-MM-dd,yyyy-MM-dd],[...,...]" while time_unit is DAY/WEEK/MONTH or '
                   '"[yyyy-MM-dd HH:mm:ss,yyyy-MM-dd HH:mm:ss],[...,...]" while time_unit is HOUR.')


# -- time zones -----------------------------------------------------------------------------------------

# java.time.ZoneId.SHORT_IDS with Doris's overrides (TimeUtils.timeZoneAliasMap)
_TZ_ALIASES = {
    "ACT": "Australia/Darwin", "AET": "Australia/Sydney", "AGT": "America/Argentina/Buenos_Aires",
    "ART": "Africa/Cairo", "AST": "America/Anchorage", "BET": "America/Sao_Paulo", "BST": "Asia/Dhaka",
    "CAT": "Africa/Harare", "CNT": "America/St_Johns", "CTT": "Asia/Shanghai", "EAT": "Africa/Addis_Ababa",
    "ECT": "Europe/Paris", "IET": "America/Indiana/Indianapolis", "IST": "Asia/Kolkata", "JST": "Asia/Tokyo",
    "MIT": "Pacific/Apia", "NET": "Asia/Yerevan", "NST": "Pacific/Auckland", "PLT": "Asia/Karachi",
    "PNT": "America/Phoenix", "PRT": "America/Puerto_Rico", "PST": "America/Los_Angeles",
    "SST": "Pacific/Guadalcanal", "VST": "Asia/Ho_Chi_Minh", "EST": "-05:00", "MST": "-07:00", "HST": "-10:00",
    "CST": "Asia/Shanghai", "PRC": "Asia/Shanghai", "UTC": "Europe/London", "GMT": "Europe/London",
}
_OFFSET_RE = re.compile(r"([+-]?)(\d{1,2}):(\d{2})")


def _offset_zone(sign: str, hours: int, minutes: int) -> tuple[str, tzinfo] | None:
    if minutes > 59 or hours > 18:
        return None
    total = timedelta(hours=hours, minutes=minutes) * (-1 if sign == "-" else 1)
    return f"GMT{'-' if sign == '-' else '+'}{hours:02d}:{minutes:02d}", timezone(total)


def resolve_time_zone(value: str) -> tuple[str, tzinfo]:
    """(the id SHOW CREATE TABLE prints, the zone) for a `dynamic_partition.time_zone` value, as Doris's
    TimeUtils.checkTimeZoneValidAndStandardize accepts it: a region id, an alias (`UTC` and `GMT` are
    Europe/London, `CST` Asia/Shanghai), `+08:00` (-12:00..+14:00) or `GMT+08:00` / `UTC+08:00`."""
    unknown = doris_error(f"Unknown or incorrect time zone: '{value}'", 1298, "HY000")
    resolved: tuple[str, tzinfo] | None = None
    if m := _OFFSET_RE.fullmatch(value):
        sign, hours, minutes = m[1], int(m[2]), int(m[3])
        if hours * 100 + minutes > (1200 if sign == "-" else 1400):
            raise unknown
        resolved = _offset_zone(sign, hours, minutes)
    elif "/" not in value and value not in _TZ_ALIASES:
        if value[:3] in ("GMT", "UTC") and (m := _OFFSET_RE.fullmatch(value[3:])):
            resolved = _offset_zone(m[1], int(m[2]), int(m[3]))
    else:
        target = _TZ_ALIASES.get(value, value)
        if m := _OFFSET_RE.fullmatch(target):
            resolved = _offset_zone(m[1], int(m[2]), int(m[3]))
        else:
            try:
                resolved = target, ZoneInfo(target)
            except Exception:  # ZoneInfoNotFoundError, ValueError on malformed keys
                resolved = None
    if resolved is None:
        raise unknown
    return resolved


def system_time_zone() -> str:
    """The default `dynamic_partition.time_zone`: the machine's zone as the JVM finds it (TZ, then
    /etc/timezone, then the /etc/localtime link), through Doris's aliases."""
    candidates = [os.environ.get("TZ", "").lstrip(":")]
    try:
        with open("/etc/timezone", encoding="utf-8") as f:
            candidates.append(f.read().strip())
    except OSError:
        pass
    try:
        candidates.append(os.readlink("/etc/localtime").partition("zoneinfo/")[2])
    except OSError:
        pass
    for name in filter(None, candidates):
        try:
            return resolve_time_zone(name)[0]
        except StorageError:
            continue
    return "Etc/UTC"


# -- the property ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class DynamicPartitionProperty:
    """A table's validated `dynamic_partition.*` properties with Doris's defaults filled in."""

    enable: bool = True
    time_unit: str = "DAY"  # as written: SHOW CREATE TABLE prints it back; `unit` is the upper-case form
    start: int = MIN_START_OFFSET
    end: int = 1
    prefix: str = "p"
    buckets: int | None = None  # None: the table's bucket number
    replication_allocation: str | None = None  # 'tag.location.default: 1'; None: the table's
    create_history_partition: bool = False
    history_partition_num: int = NOT_SET_HISTORY_PARTITION_NUM
    start_day_of_week: int = 1  # 1 = Monday .. 7 = Sunday
    start_day_of_month: int = 1
    time_zone: str = field(default_factory=system_time_zone)  # the id Doris prints (resolve_time_zone)
    reserved_history_periods: tuple[tuple[str, str], ...] = ()  # closed [lower, upper], as written
    hot_partition_num: int = 0
    storage_policy: str = ""
    storage_medium: str = ""  # '' when not set

    @property
    def unit(self) -> str:
        return self.time_unit.upper()

    @property
    def tzinfo(self) -> tzinfo:
        return resolve_time_zone(self.time_zone)[1]

    @property
    def create_start(self) -> int:
        """The first offset the scheduler creates: 0, or with create_history_partition
        max(start, -history_partition_num) (just `start` while history_partition_num is unset)."""
        if not self.create_history_partition:
            return 0
        return real_start(self.start, self.history_partition_num)


def real_start(start: int, history_partition_num: int) -> int:
    if history_partition_num == NOT_SET_HISTORY_PARTITION_NUM:
        return start
    return max(start, -history_partition_num)


def _java_int(text: str | None) -> int | None:
    """Integer.parseInt: optional sign, ASCII digits, 32-bit range; anything else is None."""
    if text is None or not re.fullmatch(r"[+-]?[0-9]+", text):
        return None
    value = int(text)
    return value if MIN_START_OFFSET <= value < 2**31 else None


def _is_java_bool(text: str | None) -> bool:
    return text is not None and text.lower() in ("true", "false")


class _Column(NamedTuple):
    kind: str  # DATE / DATETIME / INT
    precision: int  # DATETIME fractional digits
    internal: str  # the type name Doris prints inside partition keys (DATEV2, DATETIMEV2, INT ...)


def _column(type_text: str) -> _Column | None:
    name, _, rest = type_text.strip().upper().partition("(")
    name = name.strip()
    if name in ("DATE", "DATEV2"):
        return _Column("DATE", 0, "DATEV2")
    if name in ("DATETIME", "DATETIMEV2", "TIMESTAMP"):
        digits = rest.rstrip(") ").strip()
        return _Column("DATETIME", int(digits) if digits.isdigit() else 0, "DATETIMEV2")
    if name in ("TINYINT", "SMALLINT", "INT", "INTEGER", "BIGINT", "LARGEINT"):
        return _Column("INT", 0, "INT" if name == "INTEGER" else name)
    return None


def parse_dynamic_partition_properties(
    props: Mapping[str, str],
    partition_column_types: Sequence[str],
    partition_type: str,
    max_dynamic_partition_num: int,
    existing: DynamicPartitionProperty | None = None,
    *,
    partition_column_names: Sequence[str] = (),
    table_buckets: int | None = None,
    table_name: str | None = None,
    default_time_zone: str | None = None,
) -> DynamicPartitionProperty | None:
    """Validate the `dynamic_partition.*` keys of `props` as CREATE TABLE / ALTER TABLE SET do.

    `partition_type` is RANGE / LIST / UNPARTITIONED. `existing` is the table's current property (ALTER
    TABLE SET on a dynamic table): the new keys are merged into it and everything is checked again.
    `table_name` ('db.tbl') marks ALTER TABLE SET on a table without one: missing keys then raise Doris's
    "is not a dynamic partition table" message. `table_buckets` materialises `buckets` (Doris stores the
    table's bucket number); `default_time_zone` replaces the machine's zone. Returns `existing` (None for a
    CREATE) when `props` has no dynamic_partition keys.
    """
    given = {k: v for k, v in props.items() if k.startswith(PREFIX)}
    if not given:
        return existing
    unknown = [k for k in given if k not in DYNAMIC_PARTITION_KEYS]
    if unknown:
        raise doris_error("Invalid dynamic partition properties: " + ", ".join(unknown))
    if existing is None:
        try:
            raw = _check_input(given, partition_type, partition_column_types, table_buckets, default_time_zone)
        except StorageError:
            if table_name is None:
                raise
            raise doris_error(
                f"Table {table_name} is not a dynamic partition table. Use command `HELP ALTER TABLE` to see "
                "how to change a normal table to a dynamic partition table."
            ) from None
    else:
        raw = dict(stored_properties(existing))
        if REPLICATION_NUM in given:  # ALTER turns replication_num into an allocation before merging
            num = _replication_num(given.pop(REPLICATION_NUM))
            given[REPLICATION_ALLOCATION] = f"tag.location.default: {num}"
        raw.update(given)
    column_type = partition_column_types[0] if partition_column_types else ""
    column_name = partition_column_names[0] if partition_column_names else ""
    return _analyze(raw, _column(column_type), column_name, max_dynamic_partition_num)


def _check_input(given: dict[str, str], partition_type: str, column_types: Sequence[str],
                 table_buckets: int | None, default_time_zone: str | None) -> dict[str, str]:
    """Doris's checkInputDynamicPartitionProperties: required keys, defaults materialised."""
    if partition_type.upper() != "RANGE":
        raise doris_error("Only support dynamic partition properties on range partition table")
    if len(column_types) != 1:
        raise doris_error("Dynamic partition only support single-column range partition")
    raw = dict(given)
    if not raw.get(ENABLE):
        raw[ENABLE] = "true"
    if not raw.get(TIME_UNIT):
        raise doris_error("Must assign dynamic_partition.time_unit properties")
    if not raw.get(PARTITION_PREFIX):
        raise doris_error("Must assign dynamic_partition.prefix properties")
    if not raw.get(START):
        raw[START] = str(MIN_START_OFFSET)
    if not raw.get(END):
        raise doris_error("Must assign dynamic_partition.end properties")
    if not raw.get(BUCKETS) and table_buckets is not None:
        raw[BUCKETS] = str(table_buckets)
    if not raw.get(TIME_ZONE):
        raw[TIME_ZONE] = default_time_zone or system_time_zone()
    if not raw.get(CREATE_HISTORY_PARTITION):
        raw[CREATE_HISTORY_PARTITION] = "false"
    if not raw.get(HISTORY_PARTITION_NUM):
        raw[HISTORY_PARTITION_NUM] = str(NOT_SET_HISTORY_PARTITION_NUM)
    if not raw.get(RESERVED_HISTORY_PERIODS):
        raw[RESERVED_HISTORY_PERIODS] = NOT_SET_RESERVED_HISTORY_PERIODS
    return raw


def _replication_num(value: str) -> int:
    if not value:
        raise doris_error(f"Invalid properties: {REPLICATION_NUM}")
    num = _java_int(value)
    if num is None:
        raise _coded(f"Invalid dynamic partition replication num: {value}.", 5072)
    if num <= 0:
        raise _coded("Dynamic partition replication num must greater than 0", 5071)
    return num


def _replication_allocation(value: str) -> str:
    out, total = [], 0
    for part in (p.strip() for p in value.split(",")):
        tag, _, num = part.partition(":")
        if not tag.strip().startswith("tag.location.") or not num.strip().isdigit():
            raise doris_error(f"Invalid replication allocation property: {value}")
        out.append(f"{tag.strip()}: {int(num)}")
        total += int(num)
    if total <= 0:
        raise _coded("Dynamic partition replication num must greater than 0", 5071)
    return ", ".join(out)


def _int_between(raw: dict[str, str], key: str, low: int, high: int) -> None:
    value = _java_int(raw[key]) if raw[key] else None
    if value is None:
        raise doris_error(f"Invalid properties: {key}")
    if not low <= value <= high:
        raise doris_error(f"{key} should between {low} and {high}")


def _analyze(raw: dict[str, str], column: _Column | None, column_name: str, max_num: int) -> DynamicPartitionProperty:
    """Doris's analyzeDynamicPartition: each present key checked, in Doris's order."""
    if TIME_UNIT in raw:
        unit = raw[TIME_UNIT]
        if unit.upper() not in TIME_UNITS:
            raise _coded(f"Unsupported time unit {unit}. Expect HOUR/DAY/WEEK/MONTH/YEAR.", 5065)
        if unit.upper() == "HOUR" and column is not None and column.kind == "DATE":
            raise doris_error(f"{TIME_UNIT} could not be HOUR when type of partition column {column_name} "
                              "is DATE or DATEV2")
        if unit.upper() == "HOUR" and column is not None and column.kind == "INT":
            raise doris_error(f"{TIME_UNIT} could not be HOUR when type of partition column {column_name} "
                              "is Integer")
    if PARTITION_PREFIX in raw:
        prefix = raw[PARTITION_PREFIX]
        if not re.fullmatch(r"[a-zA-Z][a-zA-Z0-9_-]{0,63}", prefix) or prefix.startswith("placeholder_"):
            raise _coded(f"Invalid dynamic partition prefix: {prefix}.", 5069)
    if BUCKETS in raw:
        value = raw[BUCKETS]
        if not value:
            raise _coded("Dynamic partition buckets is empty", 5066)
        buckets = _java_int(value)
        if buckets is None:
            raise _coded(f"Invalid dynamic partition buckets {value}", 5067)
        if buckets <= 0:
            raise _coded("Dynamic partition buckets must greater than 0", 5067)
    if ENABLE in raw and not _is_java_bool(raw[ENABLE]):
        raise _coded(f"Invalid dynamic partition enable: {raw[ENABLE]}. Expected true or false", 5068)
    start = MIN_START_OFFSET
    if START in raw:
        value = raw[START]
        parsed = _java_int(value)
        if parsed is None:
            raise _coded(f"Invalid dynamic partition start {value}", 5066)
        if parsed >= 0:
            raise _coded("Dynamic partition start must less than 0", 5066)
        start = parsed
    end, has_end = 2**31 - 1, END in raw
    if has_end:
        value = raw[END]
        if not value:
            raise _coded("Dynamic partition end is empty", 5066)
        parsed = _java_int(value)
        if parsed is None:
            raise _coded(f"Invalid dynamic partition end {value}", 5066)
        if parsed <= 0:
            raise _coded("Dynamic partition end must greater than 0", 5066)
        end = parsed
    create_history = False
    if CREATE_HISTORY_PARTITION in raw:
        value = raw[CREATE_HISTORY_PARTITION]
        if not _is_java_bool(value):
            raise _coded(f"Invalid dynamic partition create_history_partition: {value}. Expected true or false",
                         5074)
        create_history = value.lower() == "true"
    history_num = NOT_SET_HISTORY_PARTITION_NUM
    if HISTORY_PARTITION_NUM in raw:
        parsed = _java_int(raw[HISTORY_PARTITION_NUM])
        if parsed is None:
            raise doris_error(f"Invalid properties: {HISTORY_PARTITION_NUM}")
        if parsed < 0 and parsed != NOT_SET_HISTORY_PARTITION_NUM:
            raise _coded("Dynamic history partition num must greater than 0", 5075)
        history_num = parsed
    first = real_start(start, history_num) if create_history else 0
    if first == MIN_START_OFFSET:
        raise doris_error("Provide start or history_partition_num property when create_history_partition=true. "
                          "Otherwise set create_history_partition=false")
    enabled = raw.get(ENABLE, "true").lower() == "true"
    if has_end and enabled and end - first > max_num:
        raise doris_error(f"Too many dynamic partitions: {end - first}. Limit: {max_num}")
    if START_DAY_OF_MONTH in raw:
        _int_between(raw, START_DAY_OF_MONTH, 1, 28)
    if START_DAY_OF_WEEK in raw:
        _int_between(raw, START_DAY_OF_WEEK, 1, 7)
    if TIME_ZONE in raw:
        raw[TIME_ZONE] = resolve_time_zone(raw[TIME_ZONE])[0]
    if HOT_PARTITION_NUM in raw:
        value = raw[HOT_PARTITION_NUM]
        if not value:
            raise doris_error(f"Invalid properties: {HOT_PARTITION_NUM}")
        parsed = _java_int(value)
        if parsed is None:
            raise doris_error(f"Invalid {HOT_PARTITION_NUM} value")
        if parsed < 0:
            raise doris_error(f"{HOT_PARTITION_NUM} must larger than 0.")
    if REPLICATION_ALLOCATION in raw:
        raw[REPLICATION_ALLOCATION] = _replication_allocation(raw[REPLICATION_ALLOCATION])
    elif REPLICATION_NUM in raw:
        raw[REPLICATION_ALLOCATION] = f"tag.location.default: {_replication_num(raw[REPLICATION_NUM])}"
    raw.pop(REPLICATION_NUM, None)
    if RESERVED_HISTORY_PERIODS in raw:
        _check_reserved_history_periods(raw[RESERVED_HISTORY_PERIODS], raw.get(TIME_UNIT, "DAY"))
    if raw.get(STORAGE_POLICY):  # no storage policy exists on a single node
        raise doris_error(f"{STORAGE_POLICY}: {raw[STORAGE_POLICY]} doesn't exist.")
    if STORAGE_MEDIUM in raw and raw[STORAGE_MEDIUM].upper() not in ("HDD", "SSD"):
        raise doris_error(f"invalid storage medium: {raw[STORAGE_MEDIUM]}. Should be SSD or HDD")
    built = property_from_strings(raw)
    assert built is not None
    return built


def _periods_pattern(unit: str) -> re.Pattern[str]:
    if unit.upper() == "HOUR":
        return re.compile(r"\[([0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2})"
                          r",([0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2})\]")
    return re.compile(r"\[([0-9]{4}-[0-9]{2}-[0-9]{2}),([0-9]{4}-[0-9]{2}-[0-9]{2})\]")


def _check_reserved_history_periods(text: str, unit: str) -> None:
    if not text:
        raise _coded("Dynamic reserved history periods is empty.", 5076)
    if text == NOT_SET_RESERVED_HISTORY_PERIODS:
        return
    invalid = _coded(f'Invalid " {RESERVED_HISTORY_PERIODS} " value {text}. It must be like {_PERIODS_FORMAT}',
                     5077)
    if not (text.startswith("[") and text.endswith("]")):
        raise invalid
    pairs = []
    for m in _periods_pattern(unit).finditer(text):
        if m[1] > m[2]:
            raise _coded(f"The first date is larger than the second date, [{m[1]},{m[2]}] is invalid.", 5079)
        pairs.append((m[1], m[2]))
    if len(pairs) != len(text.split("],[")):
        raise invalid
    for value in (v for pair in pairs for v in pair):
        y, mo, d, h, mi, s = ([int(x) for x in re.findall(r"\d+", value)] + [0, 0, 0])[:6]
        if not (1 <= mo <= 12 and 1 <= d <= 31 and h <= 23 and mi <= 59 and s <= 59 and y >= 1):
            raise doris_error(f"Invalid {RESERVED_HISTORY_PERIODS} value. It must be like {_PERIODS_FORMAT}")
        try:
            date(y, mo, d)
        except ValueError:  # java's SMART resolver moves 2021-02-30 to 2021-02-28: not the text written
            raise doris_error(f"Invalid {RESERVED_HISTORY_PERIODS} value. It must be correct DATE value "
                              f"{_PERIODS_FORMAT}") from None


def property_from_strings(props: Mapping[str, str]) -> DynamicPartitionProperty | None:
    """Build the property from stored (already validated) strings without checking them again, as
    Doris does when it reloads its catalog. None when there is no dynamic_partition key."""
    raw = {k: v for k, v in props.items() if k.startswith(PREFIX)}
    if not raw:
        return None
    num = lambda key, default: int(raw[key]) if raw.get(key) else default  # noqa: E731
    unit = raw.get(TIME_UNIT, "DAY")
    periods = raw.get(RESERVED_HISTORY_PERIODS, NOT_SET_RESERVED_HISTORY_PERIODS)
    allocation = raw.get(REPLICATION_ALLOCATION) or (
        f"tag.location.default: {int(raw[REPLICATION_NUM])}" if raw.get(REPLICATION_NUM) else None)
    return DynamicPartitionProperty(
        enable=raw.get(ENABLE, "true").lower() == "true",
        time_unit=unit,
        start=num(START, MIN_START_OFFSET),
        end=num(END, 1),
        prefix=raw.get(PARTITION_PREFIX, "p"),
        buckets=num(BUCKETS, None),
        replication_allocation=allocation,
        create_history_partition=raw.get(CREATE_HISTORY_PARTITION, "false").lower() == "true",
        history_partition_num=num(HISTORY_PARTITION_NUM, NOT_SET_HISTORY_PARTITION_NUM),
        start_day_of_week=num(START_DAY_OF_WEEK, 1),
        start_day_of_month=num(START_DAY_OF_MONTH, 1),
        time_zone=raw.get(TIME_ZONE) or system_time_zone(),
        reserved_history_periods=tuple(
            (m[1], m[2]) for m in re.finditer(r"\[([^,\]]+),([^\]]+)\]", periods)),
        hot_partition_num=num(HOT_PARTITION_NUM, 0),
        storage_policy=raw.get(STORAGE_POLICY, ""),
        storage_medium=raw.get(STORAGE_MEDIUM, ""),
    )


def _periods_text(periods: Sequence[tuple[str, str]]) -> str:
    if not periods:
        return NOT_SET_RESERVED_HISTORY_PERIODS
    return ",".join(f"[{lo},{hi}]" for lo, hi in periods)


def properties_to_strings(
    p: DynamicPartitionProperty,
    table_replication_allocation: str | None = None,
    table_buckets: int | None = None,
) -> list[tuple[str, str]]:
    """The dynamic_partition keys as SHOW CREATE TABLE prints them, in Doris's order, defaults filled in.
    `replication_allocation` / `buckets` fall back to the table's (omitted when neither is known)."""
    out = [
        (ENABLE, "true" if p.enable else "false"),
        (TIME_UNIT, p.time_unit),
        (TIME_ZONE, p.time_zone),
        (START, str(p.start)),
        (END, str(p.end)),
        (PARTITION_PREFIX, p.prefix),
    ]
    allocation = p.replication_allocation or table_replication_allocation
    if allocation is not None:
        out.append((REPLICATION_ALLOCATION, allocation))
    buckets = p.buckets if p.buckets is not None else table_buckets
    if buckets is not None:
        out.append((BUCKETS, str(buckets)))
    out += [
        (CREATE_HISTORY_PARTITION, "true" if p.create_history_partition else "false"),
        (HISTORY_PARTITION_NUM, str(p.history_partition_num)),
        (HOT_PARTITION_NUM, str(p.hot_partition_num)),
        (RESERVED_HISTORY_PERIODS, _periods_text(p.reserved_history_periods)),
        (STORAGE_POLICY, p.storage_policy),
    ]
    if p.storage_medium:
        out.append((STORAGE_MEDIUM, p.storage_medium))
    if p.unit == "WEEK":
        out.append((START_DAY_OF_WEEK, str(p.start_day_of_week)))
    elif p.unit == "MONTH":
        out.append((START_DAY_OF_MONTH, str(p.start_day_of_month)))
    return out


def stored_properties(p: DynamicPartitionProperty) -> list[tuple[str, str]]:
    """What to persist with the table: the SHOW CREATE TABLE keys without the table's defaults, plus a
    start_day_of_week / start_day_of_month set for another time unit. `property_from_strings` reads it back."""
    out = properties_to_strings(p)
    if p.unit != "WEEK" and p.start_day_of_week != 1:
        out.append((START_DAY_OF_WEEK, str(p.start_day_of_week)))
    if p.unit != "MONTH" and p.start_day_of_month != 1:
        out.append((START_DAY_OF_MONTH, str(p.start_day_of_month)))
    return out


# -- SHOW DYNAMIC PARTITION TABLES ----------------------------------------------------------------------

def _ordinal(n: int) -> str:
    if n % 100 in (11, 12, 13):
        return f"{n}th"
    return f"{n}{('th', 'st', 'nd', 'rd', 'th', 'th', 'th', 'th', 'th', 'th')[n % 10]}"


def start_of_info(p: DynamicPartitionProperty) -> str | None:
    """The StartOf column: MONDAY..SUNDAY for WEEK, `3rd` for MONTH, NULL otherwise."""
    if p.unit == "WEEK":
        return _DAY_NAMES[p.start_day_of_week - 1]
    if p.unit == "MONTH":
        return _ordinal(p.start_day_of_month)
    return None


def sorted_reserved_history_periods(p: DynamicPartitionProperty) -> str:
    """The ReservedHistoryPeriods column: `NULL`, or the periods sorted by their start."""
    return _periods_text(sorted(p.reserved_history_periods, key=lambda period: period[0]))


def show_dynamic_partition_row(
    p: DynamicPartitionProperty,
    table_name: str,
    table_replication_allocation: str,
    table_buckets: int | None = None,
    *,
    last_update_time: str | None = None,
    last_scheduler_time: str | None = None,
    state: str = "NORMAL",
    last_create_msg: str | None = None,
    last_drop_msg: str | None = None,
) -> tuple[str | None, ...]:
    """One SHOW DYNAMIC PARTITION TABLES row (SHOW_DYNAMIC_PARTITION_TABLES_COLUMNS); the runtime
    columns come from the scheduler, None is NULL."""
    allocation = p.replication_allocation or table_replication_allocation
    replicas = sum(int(part.rpartition(":")[2]) for part in allocation.split(","))
    buckets = p.buckets if p.buckets is not None else table_buckets
    return (
        table_name, "true" if p.enable else "false", p.unit, str(p.start), str(p.end), p.prefix,
        None if buckets is None else str(buckets), str(replicas), allocation, start_of_info(p),
        last_update_time, last_scheduler_time, state, last_create_msg, last_drop_msg,
        sorted_reserved_history_periods(p),
    )
