"""Dynamic partition rules (issue 6): the seed's worked examples, Doris's naming and overlap behaviour, and
every validation message, against the pure storage module (no server, no clock)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from storage.errors import StorageError
from storage.partition_policy.dynamic_partition import (
    SHOW_DYNAMIC_PARTITION_TABLES_COLUMNS,
    DynamicPartitionProperty,
    parse_dynamic_partition_properties,
    properties_to_strings,
    property_from_strings,
    resolve_time_zone,
    show_dynamic_partition_row,
    start_of_info,
    stored_properties,
)
from storage.partition_policy.dynamic_plan import PlannedPartition, plan_dynamic_partitions

SHANGHAI = "Asia/Shanghai"


def _props(**kw: str) -> dict[str, str]:
    return {f"dynamic_partition.{k}": v for k, v in kw.items()}


def _parse(props: dict[str, str], col: str = "DATE", ptype: str = "RANGE", max_num: int = 500, **kw):
    kw.setdefault("default_time_zone", SHANGHAI)
    kw.setdefault("partition_column_names", ("k1",))
    return parse_dynamic_partition_properties(props, [col], ptype, max_num, **kw)


def _prop(**kw) -> DynamicPartitionProperty:
    kw.setdefault("time_zone", SHANGHAI)
    return DynamicPartitionProperty(**kw)


def _at(text: str, tz: str = SHANGHAI) -> datetime:
    """A local wall-clock time in `tz` as the aware UTC instant the scheduler passes."""
    return datetime.fromisoformat(text).replace(tzinfo=resolve_time_zone(tz)[1]).astimezone(UTC)


def _plan(prop, now: str, col: str = "DATE", existing=()):
    return plan_dynamic_partitions(prop, col, [(n, (lo,), (hi,)) for n, lo, hi in existing], _at(now, prop.time_zone))


def _added(plan) -> list[tuple[str, str, str]]:
    return [(p.name, p.lower, p.upper) for p in plan.to_add]


def _days(start: str, count: int, col: str = "DATE") -> list[tuple[str, str, str]]:
    first = datetime.fromisoformat(start)
    out = []
    for i in range(count):
        lo, hi = first + timedelta(days=i), first + timedelta(days=i + 1)
        fmt = "%Y-%m-%d" if col == "DATE" else "%Y-%m-%d %H:%M:%S"
        out.append((f"p{lo:%Y%m%d}", lo.strftime(fmt), hi.strftime(fmt)))
    return out


# -- seed example 1: DAY, start -7, end 3 ------------------------------------------------------------------

def test_seed_day_example_creates_today_and_three_days_ahead():
    prop = _parse(_props(enable="true", time_unit="DAY", start="-7", end="3", prefix="p", buckets="32"))
    plan = _plan(prop, "2020-05-29 10:00")
    assert _added(plan) == [
        ("p20200529", "2020-05-29", "2020-05-30"),
        ("p20200530", "2020-05-30", "2020-05-31"),
        ("p20200531", "2020-05-31", "2020-06-01"),
        ("p20200601", "2020-06-01", "2020-06-02"),
    ]
    assert plan.to_drop == [] and plan.errors == [] and plan.last_create_msg is None


def test_seed_day_example_next_day_adds_one_partition():
    prop = _parse(_props(time_unit="DAY", start="-7", end="3", prefix="p"))
    plan = _plan(prop, "2020-05-30 00:00", existing=_days("2020-05-29", 4))
    assert _added(plan) == [("p20200602", "2020-06-02", "2020-06-03")]
    assert plan.errors == [] and plan.last_create_msg is None


def test_seed_day_example_drops_the_partition_seven_days_back():
    prop = _parse(_props(time_unit="DAY", start="-7", end="3", prefix="p"))
    plan = _plan(prop, "2020-06-06 12:00", existing=_days("2020-05-29", 11))
    assert plan.to_drop == ["p20200529"]
    assert _added(plan) == [("p20200609", "2020-06-09", "2020-06-10")]


def test_no_start_never_drops():
    prop = _parse(_props(time_unit="DAY", end="1", prefix="p"))
    assert prop.start == -2147483648
    assert _plan(prop, "2030-01-01", existing=_days("2020-05-29", 3)).to_drop == []


# -- seed example 2: WEEK on DATETIME ------------------------------------------------------------------

def test_seed_week_example_on_datetime_column():
    prop = _parse(_props(time_unit="WEEK", start="-2", end="2", prefix="p", buckets="8"), col="DATETIME")
    plan = _plan(prop, "2020-05-29 09:00", col="DATETIME")
    assert _added(plan) == [
        ("p2020_22", "2020-05-25 00:00:00", "2020-06-01 00:00:00"),
        ("p2020_23", "2020-06-01 00:00:00", "2020-06-08 00:00:00"),
        ("p2020_24", "2020-06-08 00:00:00", "2020-06-15 00:00:00"),
    ]


def test_seed_week_example_drops_two_weeks_back_on_2020_06_15():
    prop = _parse(_props(time_unit="WEEK", start="-2", end="2", prefix="p"), col="DATETIME")
    existing = [(p.name, p.lower, p.upper) for p in _plan(prop, "2020-05-29", col="DATETIME").to_add]
    existing += [("p2020_25", "2020-06-15 00:00:00", "2020-06-22 00:00:00")]
    plan = _plan(prop, "2020-06-15 08:00", col="DATETIME", existing=existing)
    assert plan.to_drop == ["p2020_22"]


def test_seed_week_example_starting_on_wednesday():
    prop = _parse(_props(time_unit="WEEK", start="-2", end="2", prefix="p", start_day_of_week="3"),
                  col="DATETIME")
    assert _added(_plan(prop, "2020-05-29", col="DATETIME")) == [
        ("p2020_22", "2020-05-27 00:00:00", "2020-06-03 00:00:00"),
        ("p2020_23", "2020-06-03 00:00:00", "2020-06-10 00:00:00"),
        ("p2020_24", "2020-06-10 00:00:00", "2020-06-17 00:00:00"),
    ]


@pytest.mark.parametrize(("today", "start_day", "name", "lower"), [
    ("2020-01-01", "2", "p2019_53", "2019-12-31"),  # seed: a week starting 2019-12-31 is 2019_53
    ("2020-01-01", "3", "p2020_01", "2020-01-01"),  # ... and one starting 2020-01-01 is 2020_01
    ("2020-01-01", "1", "p2019_53", "2019-12-30"),  # Doris unit test
    ("2020-05-25", "7", "p2020_23", "2020-05-31"),  # a Sunday starts a java.util.Calendar week
    ("2020-02-29", "3", "p2020_09", "2020-02-26"),
    ("2020-03-25", "1", "p2020_13", "2020-03-23"),  # seed: 2020-03-25 is in week 13
])
def test_week_names_follow_java_calendar_with_the_year_boundary_rule(today, start_day, name, lower):
    prop = _prop(time_unit="WEEK", end=1, start_day_of_week=int(start_day))
    assert _added(_plan(prop, today))[0][:2] == (name, lower)


def test_week_border_zero_can_be_in_the_future():
    # Monday 2020-05-25 with weeks starting on Wednesday: this week's partition starts on the 27th
    prop = _prop(time_unit="WEEK", end=1, start_day_of_week=3)
    assert _added(_plan(prop, "2020-05-25"))[0] == ("p2020_22", "2020-05-27", "2020-06-03")


# -- seed example 3: MONTH with start_day_of_month -------------------------------------------------------

def test_seed_month_example_starting_on_the_3rd():
    prop = _parse(_props(time_unit="MONTH", end="2", prefix="p", buckets="8", start_day_of_month="3"))
    plan = _plan(prop, "2020-05-29")
    assert _added(plan) == [
        ("p202005", "2020-05-03", "2020-06-03"),
        ("p202006", "2020-06-03", "2020-07-03"),
        ("p202007", "2020-07-03", "2020-08-03"),
    ]
    assert plan.to_drop == []


def test_seed_month_example_starting_on_the_28th_counts_from_last_month():
    prop = _parse(_props(time_unit="MONTH", end="2", prefix="p", start_day_of_month="28"))
    assert _added(_plan(prop, "2020-05-20")) == [
        ("p202004", "2020-04-28", "2020-05-28"),
        ("p202005", "2020-05-28", "2020-06-28"),
        ("p202006", "2020-06-28", "2020-07-28"),
    ]


def test_month_across_the_year():
    prop = _prop(time_unit="MONTH", end=2, start=-3, create_history_partition=True, start_day_of_month=27)
    names = [n for n, _, _ in _added(_plan(prop, "2020-02-29"))]
    assert names == ["p201911", "p201912", "p202001", "p202002", "p202003", "p202004"]


# -- seed: create_history_partition with history_partition_num -----------------------------------------

@pytest.mark.parametrize(("history", "first"), [("1", "2021-05-19"), ("5", "2021-05-17"), (None, "2021-05-17")])
def test_seed_history_partition_num_examples(history, first):
    kw = {"time_unit": "DAY", "start": "-3", "end": "3", "prefix": "p", "create_history_partition": "true"}
    if history is not None:
        kw["history_partition_num"] = history
    prop = _parse(_props(**kw))
    count = (datetime(2021, 5, 23) - datetime.fromisoformat(first)).days + 1
    assert _added(_plan(prop, "2021-05-20 15:00")) == _days(first, count)


def test_drop_uses_start_not_history_partition_num():
    prop = _prop(time_unit="DAY", start=-3, end=1, create_history_partition=True, history_partition_num=1)
    plan = _plan(prop, "2021-05-20", existing=_days("2021-05-16", 2))
    assert plan.to_drop == ["p20210516"]  # border(start) = 2021-05-17; history_partition_num is ignored


# -- seed: reserved_history_periods ---------------------------------------------------------------------

def test_seed_reserved_history_periods_keep_partitions_they_touch():
    prop = _parse(_props(time_unit="DAY", start="-3", end="3", prefix="p",
                         reserved_history_periods="[2020-06-01,2020-06-20],[2020-10-31,2020-11-15]"))
    assert prop.reserved_history_periods == (("2020-06-01", "2020-06-20"), ("2020-10-31", "2020-11-15"))
    days = ["2020-05-31", "2020-06-01", "2020-06-20", "2020-06-21", "2020-10-30", "2020-10-31", "2020-11-15",
            "2020-11-16", "2021-09-02", "2021-09-03", "2021-09-06"]
    existing = [d for day in days for d in _days(day, 1)]
    plan = _plan(prop, "2021-09-06", existing=existing)
    assert plan.to_drop == ["p20200531", "p20200621", "p20201030", "p20201116", "p20210902"]


def test_seed_reserved_history_periods_in_hour_form():
    prop = _parse(_props(time_unit="HOUR", start="-3", end="3", prefix="p",
                         reserved_history_periods="[2020-06-01 00:00:00,2020-06-01 03:00:00]"), col="DATETIME")
    hours = [datetime(2020, 5, 31, 23) + timedelta(hours=i) for i in range(6)]
    existing = [(f"p{h:%Y%m%d%H}", f"{h:%Y-%m-%d %H:%M:%S}", f"{h + timedelta(hours=1):%Y-%m-%d %H:%M:%S}")
                for h in hours]
    plan = _plan(prop, "2021-09-06 12:30", col="DATETIME", existing=existing)
    assert plan.to_drop == ["p2020053123", "p2020060104"]


# -- HOUR / YEAR / INT / DATETIME(p) -----------------------------------------------------------------------

def test_hour_names_and_bounds():
    prop = _parse(_props(time_unit="HOUR", end="2", prefix="p"), col="DATETIME")
    assert _added(_plan(prop, "2020-03-25 01:30", col="DATETIME")) == [
        ("p2020032501", "2020-03-25 01:00:00", "2020-03-25 02:00:00"),
        ("p2020032502", "2020-03-25 02:00:00", "2020-03-25 03:00:00"),
        ("p2020032503", "2020-03-25 03:00:00", "2020-03-25 04:00:00"),
    ]


def test_year_names_and_bounds():
    prop = _parse(_props(time_unit="YEAR", end="1", prefix="y"))
    assert _added(_plan(prop, "2020-05-29")) == [
        ("y2020", "2020-01-01", "2021-01-01"), ("y2021", "2021-01-01", "2022-01-01")]


def test_integer_column_uses_yyyymmdd_bounds():
    prop = _parse(_props(time_unit="MONTH", end="1", prefix="p"), col="INT")
    assert _added(_plan(prop, "2020-05-29", col="INT")) == [
        ("p202005", "20200501", "20200601"), ("p202006", "20200601", "20200701")]


def test_datetime_with_fraction_prints_its_digits():
    prop = _prop(time_unit="DAY", end=0)
    assert _added(_plan(prop, "2020-05-29", col="DATETIME(3)")) == [
        ("p20200529", "2020-05-29 00:00:00.000", "2020-05-30 00:00:00.000")]


# -- time zone -------------------------------------------------------------------------------------------

def test_time_zone_decides_the_day():
    now = datetime(2020, 5, 28, 20, 0, tzinfo=UTC)
    east = _prop(time_unit="DAY", end=0, time_zone="Asia/Shanghai")
    west = _prop(time_unit="DAY", end=0, time_zone="America/Los_Angeles")
    assert [p.name for p in plan_dynamic_partitions(east, "DATE", [], now).to_add] == ["p20200529"]
    assert [p.name for p in plan_dynamic_partitions(west, "DATE", [], now).to_add] == ["p20200528"]


def test_hour_border_is_the_local_hour():
    now = datetime(2020, 5, 28, 20, 15, tzinfo=UTC)
    prop = _prop(time_unit="HOUR", end=0, time_zone="+08:00")
    assert plan_dynamic_partitions(prop, "DATETIME", [], now).to_add == [
        PlannedPartition("p2020052904", "2020-05-29 04:00:00", "2020-05-29 05:00:00")]


@pytest.mark.parametrize(("value", "shown"), [
    ("Asia/Shanghai", "Asia/Shanghai"), ("UTC", "Europe/London"), ("CST", "Asia/Shanghai"),
    ("+08:00", "GMT+08:00"), ("-5:30", "GMT-05:30"), ("GMT+8:00", "GMT+08:00"), ("EST", "GMT-05:00"),
])
def test_time_zone_values_doris_accepts(value, shown):
    assert _parse(_props(time_unit="DAY", end="1", prefix="p", time_zone=value)).time_zone == shown


def test_offset_zone_is_applied():
    assert resolve_time_zone("+08:00")[1].utcoffset(None) == timezone(timedelta(hours=8)).utcoffset(None)


# -- overlap and existing partitions ---------------------------------------------------------------------

def test_seed_day_to_month_overlap_is_skipped_with_doris_message():
    prop = _prop(time_unit="MONTH", end=1, start=-1)
    existing = _days("2020-05-19", 3)
    plan = _plan(prop, "2020-05-22", existing=existing)
    assert _added(plan) == [("p202006", "2020-06-01", "2020-07-01")]
    assert plan.errors == [
        "errCode = 2, detailMessage = Range [types: [DATEV2]; keys: [2020-05-19]; ..types: [DATEV2]; keys: "
        "[2020-05-20]; ) is intersected with range: [types: [DATEV2]; keys: [2020-05-01]; ..types: [DATEV2]; "
        "keys: [2020-06-01]; )"
    ]
    assert plan.last_create_msg is None  # the June partition's creation clears it
    assert plan.to_drop == []  # they reach past border(-1) = 2020-04-01


def test_overlap_message_stays_when_nothing_is_added():
    prop = _prop(time_unit="MONTH", end=1)
    existing = [("p202005", "2020-05-01", "2020-06-01"), ("pjune", "2020-06-05", "2020-06-06")]
    plan = _plan(prop, "2020-05-22", existing=existing)
    assert plan.to_add == []
    assert plan.last_create_msg == plan.errors[-1]
    assert "keys: [2020-06-05]" in plan.last_create_msg


def test_same_range_is_skipped_silently():
    prop = _prop(time_unit="DAY", end=1)
    plan = _plan(prop, "2020-05-29", existing=[("manual", "2020-05-29", "2020-05-30")])
    assert _added(plan) == [("p20200530", "2020-05-30", "2020-05-31")]
    assert plan.errors == []


def test_maxvalue_partition_blocks_and_is_kept():
    prop = _prop(time_unit="DAY", start=-1, end=1)
    plan = plan_dynamic_partitions(prop, "DATE", [("pmax", ("2020-01-01",), None)], _at("2020-05-29"))
    assert plan.to_add == [] and len(plan.errors) == 2 and "keys: [MAXVALUE]" in plan.errors[0]
    assert plan.to_drop == []


def test_first_less_than_partition_is_dropped_when_below_start():
    prop = _prop(time_unit="DAY", start=-1, end=1)
    plan = plan_dynamic_partitions(prop, "DATE", [("p0", ("0000-01-01",), ("2020-01-01",))], _at("2020-05-29"))
    assert plan.to_drop == ["p0"]


def test_disabled_property_plans_nothing():
    prop = _prop(time_unit="DAY", start=-1, end=1, enable=False)
    plan = _plan(prop, "2020-05-29", existing=_days("2020-01-01", 1))
    assert (plan.to_add, plan.to_drop, plan.errors) == ([], [], [])


def test_too_small_start_reports_instead_of_dropping_everything():
    prop = _prop(time_unit="YEAR", start=-100000, end=1)
    plan = _plan(prop, "2020-05-29", existing=_days("2020-01-01", 1))
    assert plan.to_drop == []
    assert plan.drop_errors[0].startswith(
        "errCode = 2, detailMessage = 'dynamic_partition.start' = -100000, maybe it's too small, can use alter "
        "table sql to increase it. , error: ")


def test_unsupported_column_type_is_recorded():
    plan = plan_dynamic_partitions(_prop(time_unit="DAY", end=1), "VARCHAR(10)", [], _at("2020-05-29"))
    assert plan.errors == [
        "errCode = 2, detailMessage = Dynamic Partition Only Support DATE, DATETIME and INTEGER Type Now."]


# -- defaults, SHOW CREATE TABLE and SHOW DYNAMIC PARTITION TABLES -----------------------------------------

def test_defaults_and_show_create_table_order():
    prop = _parse(_props(time_unit="WEEK", end="3", prefix="p"), table_buckets=10)
    assert properties_to_strings(prop, "tag.location.default: 1") == [
        ("dynamic_partition.enable", "true"),
        ("dynamic_partition.time_unit", "WEEK"),
        ("dynamic_partition.time_zone", "Asia/Shanghai"),
        ("dynamic_partition.start", "-2147483648"),
        ("dynamic_partition.end", "3"),
        ("dynamic_partition.prefix", "p"),
        ("dynamic_partition.replication_allocation", "tag.location.default: 1"),
        ("dynamic_partition.buckets", "10"),
        ("dynamic_partition.create_history_partition", "false"),
        ("dynamic_partition.history_partition_num", "-1"),
        ("dynamic_partition.hot_partition_num", "0"),
        ("dynamic_partition.reserved_history_periods", "NULL"),
        ("dynamic_partition.storage_policy", ""),
        ("dynamic_partition.start_day_of_week", "1"),
    ]


def test_show_create_table_keeps_written_values_and_medium():
    prop = _parse(_props(enable="TRUE", time_unit="month", end="+2", prefix="p", replication_num="1",
                         storage_medium="ssd", start_day_of_month="3"))
    out = dict(properties_to_strings(prop, "tag.location.default: 3", 10))
    assert out["dynamic_partition.enable"] == "true"
    assert out["dynamic_partition.time_unit"] == "month"
    assert out["dynamic_partition.end"] == "2"
    assert out["dynamic_partition.replication_allocation"] == "tag.location.default: 1"
    assert out["dynamic_partition.storage_medium"] == "ssd"
    assert out["dynamic_partition.start_day_of_month"] == "3"
    assert list(out)[-2:] == ["dynamic_partition.storage_medium", "dynamic_partition.start_day_of_month"]


def test_no_dynamic_keys_returns_none():
    assert _parse({"replication_num": "1"}) is None
    existing = _prop(time_unit="DAY", end=1)
    assert _parse({"replication_num": "1"}, existing=existing) is existing


def test_stored_properties_round_trip():
    prop = _parse(_props(time_unit="WEEK", start="-3", end="3", prefix="p", start_day_of_month="5",
                         reserved_history_periods="[2021-12-01,2021-12-31]", replication_allocation="tag.location.default: 2"))
    assert property_from_strings(dict(stored_properties(prop))) == prop


@pytest.mark.parametrize(("unit", "day", "shown"), [
    ("WEEK", 1, "MONDAY"), ("WEEK", 3, "WEDNESDAY"), ("WEEK", 7, "SUNDAY"), ("MONTH", 1, "1st"),
    ("MONTH", 2, "2nd"), ("MONTH", 3, "3rd"), ("MONTH", 11, "11th"), ("MONTH", 22, "22nd"), ("MONTH", 24, "24th"),
    ("DAY", 1, None), ("HOUR", 1, None),
])
def test_start_of_column(unit, day, shown):
    prop = _prop(time_unit=unit, end=1, start_day_of_week=min(day, 7), start_day_of_month=day)
    assert start_of_info(prop) == shown


def test_show_dynamic_partition_tables_row():
    prop = _parse(_props(time_unit="week", start="-3", end="3", prefix="p", buckets="1",
                         reserved_history_periods="[2021-12-01,2021-12-31],[2020-01-01,2020-01-31]"))
    row = show_dynamic_partition_row(prop, "d3", "tag.location.default: 1", last_scheduler_time="2020-05-25 14:29:24")
    assert len(row) == len(SHOW_DYNAMIC_PARTITION_TABLES_COLUMNS) == 16
    assert dict(zip(SHOW_DYNAMIC_PARTITION_TABLES_COLUMNS, row, strict=True)) == {
        "TableName": "d3", "Enable": "true", "TimeUnit": "WEEK", "Start": "-3", "End": "3", "Prefix": "p",
        "Buckets": "1", "ReplicationNum": "1", "ReplicaAllocation": "tag.location.default: 1", "StartOf": "MONDAY",
        "LastUpdateTime": None, "LastSchedulerTime": "2020-05-25 14:29:24", "State": "NORMAL",
        "LastCreatePartitionMsg": None, "LastDropPartitionMsg": None,
        "ReservedHistoryPeriods": "[2020-01-01,2020-01-31],[2021-12-01,2021-12-31]",
    }


# -- ALTER TABLE SET ---------------------------------------------------------------------------------------

def test_alter_merges_into_the_existing_property():
    prop = _parse(_props(time_unit="DAY", start="-3", end="3", prefix="p", time_zone="UTC"))
    altered = _parse(_props(end="5", start_day_of_week="2"), existing=prop)
    assert (altered.end, altered.start, altered.time_zone, altered.start_day_of_week) == (5, -3, "Europe/London", 2)


def test_alter_checks_the_merged_count():
    prop = _parse(_props(time_unit="DAY", start="-3", end="3", prefix="p", create_history_partition="true"))
    with pytest.raises(StorageError) as e:
        _parse(_props(end="498"), existing=prop)
    assert e.value.message == "errCode = 2, detailMessage = Too many dynamic partitions: 501. Limit: 500"


def test_alter_replication_num_replaces_the_allocation():
    prop = _parse(_props(time_unit="DAY", end="3", prefix="p", replication_allocation="tag.location.default: 2"))
    assert _parse(_props(replication_num="1"), existing=prop).replication_allocation == "tag.location.default: 1"


def test_alter_on_a_table_without_dynamic_partitioning_needs_every_required_key():
    with pytest.raises(StorageError) as e:
        _parse(_props(enable="true"), table_name="test.no_dynamic_table")
    assert e.value.message == (
        "errCode = 2, detailMessage = Table test.no_dynamic_table is not a dynamic partition table. Use command "
        "`HELP ALTER TABLE` to see how to change a normal table to a dynamic partition table.")
    ok = _parse(_props(enable="true", time_unit="DAY", start="-3", end="3", prefix="p", buckets="3"),
                table_name="test.no_dynamic_table")
    assert ok.buckets == 3


# -- validation errors -----------------------------------------------------------------------------------

_BASE = {"time_unit": "DAY", "start": "-3", "end": "3", "prefix": "p"}


def _error(overrides: dict[str, str | None], col: str = "DATE", ptype: str = "RANGE", max_num: int = 500,
           cols: int = 1) -> StorageError:
    kw = {k: v for k, v in {**_BASE, **overrides}.items() if v is not None}
    with pytest.raises(StorageError) as e:
        parse_dynamic_partition_properties(_props(**kw), [col] * cols, ptype, max_num,
                                           partition_column_names=("k1",) * cols, default_time_zone=SHANGHAI)
    return e.value


D = "errCode = 2, detailMessage = "
PERIODS = ('"[yyyy-MM-dd,yyyy-MM-dd],[...,...]" while time_unit is DAY/WEEK/MONTH or '
           '"[yyyy-MM-dd HH:mm:ss,yyyy-MM-dd HH:mm:ss],[...,...]" while time_unit is HOUR.')


@pytest.mark.parametrize(("overrides", "message", "code"), [
    ({"foo": "1", "bar": "2"}, "Invalid dynamic partition properties: dynamic_partition.foo, dynamic_partition.bar", 1105),
    ({"time_unit": None}, "Must assign dynamic_partition.time_unit properties", 1105),
    ({"time_unit": ""}, "Must assign dynamic_partition.time_unit properties", 1105),
    ({"prefix": None}, "Must assign dynamic_partition.prefix properties", 1105),
    ({"end": None}, "Must assign dynamic_partition.end properties", 1105),
    ({"time_unit": "MINUTE"}, "Unsupported time unit MINUTE. Expect HOUR/DAY/WEEK/MONTH/YEAR.", 5065),
    ({"time_unit": "HOUR"}, "dynamic_partition.time_unit could not be HOUR when type of partition column k1 is DATE "
                            "or DATEV2", 1105),
    ({"prefix": "1p"}, "Invalid dynamic partition prefix: 1p.", 5069),
    ({"prefix": "p.x"}, "Invalid dynamic partition prefix: p.x.", 5069),
    ({"prefix": "placeholder_x"}, "Invalid dynamic partition prefix: placeholder_x.", 5069),
    ({"buckets": "0"}, "Dynamic partition buckets must greater than 0", 5067),
    ({"buckets": "ten"}, "Invalid dynamic partition buckets ten", 5067),
    ({"enable": "yes"}, "Invalid dynamic partition enable: yes. Expected true or false", 5068),
    ({"start": "0"}, "Dynamic partition start must less than 0", 5066),
    ({"start": "-3.5"}, "Invalid dynamic partition start -3.5", 5066),
    ({"end": "0"}, "Dynamic partition end must greater than 0", 5066),
    ({"end": " 3"}, "Invalid dynamic partition end  3", 5066),
    ({"end": "9999999999"}, "Invalid dynamic partition end 9999999999", 5066),
    ({"create_history_partition": "1"},
     "Invalid dynamic partition create_history_partition: 1. Expected true or false", 5074),
    ({"history_partition_num": "-2"}, "Dynamic history partition num must greater than 0", 5075),
    ({"history_partition_num": "x"}, "Invalid properties: dynamic_partition.history_partition_num", 1105),
    ({"start": None, "create_history_partition": "true"},
     "Provide start or history_partition_num property when create_history_partition=true. "
     "Otherwise set create_history_partition=false", 1105),
    ({"end": "501"}, "Too many dynamic partitions: 501. Limit: 500", 1105),
    ({"start": "-498", "create_history_partition": "true"}, "Too many dynamic partitions: 501. Limit: 500", 1105),
    ({"start": "-600", "create_history_partition": "true", "history_partition_num": "498"},
     "Too many dynamic partitions: 501. Limit: 500", 1105),
    ({"start_day_of_month": "29"}, "dynamic_partition.start_day_of_month should between 1 and 28", 1105),
    ({"start_day_of_month": "x"}, "Invalid properties: dynamic_partition.start_day_of_month", 1105),
    ({"start_day_of_week": "0"}, "dynamic_partition.start_day_of_week should between 1 and 7", 1105),
    ({"start_day_of_week": "8"}, "dynamic_partition.start_day_of_week should between 1 and 7", 1105),
    ({"time_zone": "invalid"}, "Unknown or incorrect time zone: 'invalid'", 1298),
    ({"time_zone": "Asia/Nowhere"}, "Unknown or incorrect time zone: 'Asia/Nowhere'", 1298),
    ({"time_zone": "+15:00"}, "Unknown or incorrect time zone: '+15:00'", 1298),
    ({"hot_partition_num": "-1"}, "dynamic_partition.hot_partition_num must larger than 0.", 1105),
    ({"hot_partition_num": "x"}, "Invalid dynamic_partition.hot_partition_num value", 1105),
    ({"replication_num": "0"}, "Dynamic partition replication num must greater than 0", 5071),
    ({"replication_num": "two"}, "Invalid dynamic partition replication num: two.", 5072),
    ({"reserved_history_periods": "2020-06-01,2020-06-20"},
     f'Invalid " dynamic_partition.reserved_history_periods " value 2020-06-01,2020-06-20. It must be like {PERIODS}',
     5077),
    ({"reserved_history_periods": "[2020-06-01, 2020-06-20]"},
     f'Invalid " dynamic_partition.reserved_history_periods " value [2020-06-01, 2020-06-20]. It must be like '
     f"{PERIODS}", 5077),
    ({"reserved_history_periods": "[2020-06-01,]"},
     f'Invalid " dynamic_partition.reserved_history_periods " value [2020-06-01,]. It must be like {PERIODS}', 5077),
    ({"reserved_history_periods": "[2020-06-01 00:00:00,2020-06-01 03:00:00]"},
     f'Invalid " dynamic_partition.reserved_history_periods " value [2020-06-01 00:00:00,2020-06-01 03:00:00]. It '
     f"must be like {PERIODS}", 5077),
    ({"reserved_history_periods": "[2020-06-20,2020-06-01]"},
     "The first date is larger than the second date, [2020-06-20,2020-06-01] is invalid.", 5079),
    ({"reserved_history_periods": "[2021-02-01,2021-02-30]"},
     f"Invalid dynamic_partition.reserved_history_periods value. It must be correct DATE value {PERIODS}", 1105),
    ({"reserved_history_periods": "[2021-01-01,2021-13-01]"},
     f"Invalid dynamic_partition.reserved_history_periods value. It must be like {PERIODS}", 1105),
    ({"storage_medium": "tape"}, "invalid storage medium: tape. Should be SSD or HDD", 1105),
    ({"storage_policy": "cold"}, "dynamic_partition.storage_policy: cold doesn't exist.", 1105),
])
def test_validation_messages(overrides, message, code):
    err = _error(overrides)
    assert (err.message, err.code, err.sqlstate) == (D + message, code, "42000" if code >= 5000 else "HY000")


def test_empty_reserved_periods_in_alter():
    # CREATE TABLE turns an empty value into "NULL"; ALTER TABLE SET checks it
    assert _parse(_props(**_BASE, reserved_history_periods="")).reserved_history_periods == ()
    with pytest.raises(StorageError) as e:
        _parse(_props(reserved_history_periods=""), existing=_parse(_props(**_BASE)))
    assert (e.value.message, e.value.code) == (D + "Dynamic reserved history periods is empty.", 5076)


def test_hour_on_integer_column():
    err = _error({"time_unit": "HOUR"}, col="INT")
    assert err.message == D + "dynamic_partition.time_unit could not be HOUR when type of partition column k1 is Integer"


def test_hour_reserved_periods_need_the_datetime_form():
    err = _error({"time_unit": "HOUR", "reserved_history_periods": "[2020-06-01,2020-06-02]"}, col="DATETIME")
    assert err.code == 5077


@pytest.mark.parametrize(("ptype", "cols", "message"), [
    ("LIST", 1, "Only support dynamic partition properties on range partition table"),
    ("UNPARTITIONED", 0, "Only support dynamic partition properties on range partition table"),
    ("RANGE", 2, "Dynamic partition only support single-column range partition"),
])
def test_partitioning_must_be_single_column_range(ptype, cols, message):
    assert _error({}, ptype=ptype, cols=cols).message == D + message


def test_disabled_table_skips_the_count_limit():
    prop = _parse(_props(enable="false", time_unit="DAY", end="1000", prefix="p"))
    assert prop.enable is False and prop.end == 1000


def test_max_dynamic_partition_num_is_the_callers():
    assert _error({"end": "11"}, max_num=10).message == D + "Too many dynamic partitions: 11. Limit: 10"
