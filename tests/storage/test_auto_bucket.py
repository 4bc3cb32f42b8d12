"""BUCKETS AUTO (issue 6): the seed's initial-bucket rule and its 8 worked cases, the EMA/trend estimate for
later partitions, and the be.conf storage_root_path / data size parsers."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from storage.partition_policy.auto_bucket import (
    DEFAULT_AUTO_BUCKETS,
    Disk,
    disks_from_storage_root_path,
    ema,
    estimate_next_partition_size,
    initial_bucket_num,
    next_partition_bucket_num,
    parse_data_size,
    usable_history,
)

MB = 1024**2
GB = 1024**3
TB = 1024**4


def _disks(size: int, count: int) -> list[Disk]:
    return [Disk(f"/disk{i}", size) for i in range(count)]


# (description, raw partition size, BEs, disk size, disks per BE, M as the seed computes it, final buckets)
SEED_CASES = [
    ("case1: 100MB, 10 BEs, 3 x 2TB", 100 * MB, 10, 2 * TB, 3, 1230, 1),
    ("case2: 1GB, 3 BEs, 2 x 500GB", 1 * GB, 3, 500 * GB, 2, 60, 2),
    ("case3: 100GB, 3 BEs, 2 x 500GB", 100 * GB, 3, 500 * GB, 2, 60, 20),
    ("case4: 500GB, 3 BEs, 1 x 1TB (disks cap it at 63)", 500 * GB, 3, 1 * TB, 1, 63, 63),
    ("case5: 500GB, 10 BEs, 3 x 2TB", 500 * GB, 10, 2 * TB, 3, 1230, 100),
    ("case6: 1TB, 10 BEs, 3 x 2TB (128 cap)", 1 * TB, 10, 2 * TB, 3, 1230, 128),
    ("case7: 500GB, 1 BE, 1 x 100TB", 500 * GB, 1, 100 * TB, 1, 2048, 100),
    ("case8: 1TB, 200 BEs, 7 x 4TB (raised to BE count)", 1 * TB, 200, 4 * TB, 7, 114800, 200),
]


@pytest.mark.parametrize(
    ("size", "backends", "disk_size", "disk_count", "m", "expected"),
    [pytest.param(*case[1:], id=case[0]) for case in SEED_CASES],
)
def test_seed_worked_cases(
    size: int, backends: int, disk_size: int, disk_count: int, m: int, expected: int
) -> None:
    disks = _disks(disk_size, disk_count)
    assert initial_bucket_num(size, backends, disks) == expected
    # M alone: a size far beyond every disk with no cap leaves x = M
    assert initial_bucket_num(1000 * 1024 * TB, backends, disks, max_buckets=10**9) == m


@pytest.mark.parametrize(
    ("raw_size", "expected"),
    [
        pytest.param(5 * 100 * MB, 1, id="compressed exactly 100MB -> 1"),
        pytest.param(5 * 100 * MB + 5, 2, id="just above 100MB -> 2"),
        pytest.param(5 * GB, 2, id="compressed exactly 1GB -> 2"),
        pytest.param(5 * GB + 5, 2, id="just above 1GB -> ceil = 2"),
        pytest.param(5 * 2 * GB + 5, 3, id="just above 2GB -> 3"),
        pytest.param(0, 1, id="empty -> 1"),
    ],
)
def test_size_thresholds(raw_size: int, expected: int) -> None:
    assert initial_bucket_num(raw_size, 1, _disks(100 * TB, 1)) == expected


def test_min_and_max_buckets_from_config() -> None:
    # Doris regression tests: autobucket_min_buckets = 5 with "1M" -> 5; autobucket_max_buckets = 200 with "100000G" -> 200
    assert initial_bucket_num(parse_data_size("1M"), 1, _disks(1 * TB, 1), min_buckets=5) == 5
    assert initial_bucket_num(parse_data_size("100000G"), 1, _disks(100 * TB, 1), max_buckets=200) == 200


def test_disks_of_different_sizes_sum_per_disk() -> None:
    # each disk counts its own started 50GB blocks: 60GB -> 2, 40GB -> 1, 0 -> 1; two BEs -> 2 * 4
    disks = [Disk("/a", 60 * GB), Disk("/b", 40 * GB), Disk("/c", 0)]
    assert initial_bucket_num(1000 * TB, 2, disks) == 8


def test_no_disks_still_spreads_over_backends() -> None:
    assert initial_bucket_num(100 * GB, 3, []) == 3


def test_backends_must_be_positive() -> None:
    with pytest.raises(ValueError, match="backend"):
        initial_bucket_num(GB, 0, _disks(TB, 1))


def test_default_without_estimate_is_ten() -> None:
    assert DEFAULT_AUTO_BUCKETS == 10


@given(
    a=st.integers(0, 2 * 1024 * TB),
    b=st.integers(0, 2 * 1024 * TB),
    backends=st.integers(1, 300),
    disk_gb=st.lists(st.integers(0, 100_000), max_size=8),
    min_buckets=st.integers(1, 10),
)
def test_buckets_grow_with_size_and_stay_in_bounds(
    a: int, b: int, backends: int, disk_gb: list[int], min_buckets: int
) -> None:
    disks = [Disk(f"/d{i}", g * GB) for i, g in enumerate(disk_gb)]
    small, large = sorted((a, b))
    lo = initial_bucket_num(small, backends, disks, min_buckets)
    hi = initial_bucket_num(large, backends, disks, min_buckets)
    assert min_buckets <= lo <= hi <= max(128, backends, min_buckets)


# --- later partitions -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ([123], 123),
        ([100, 200], 125),  # 0.25 * 200 + 0.75 * 100
        ([1, 2], 1),  # 1.25 truncated like Java's (long)
        ([4, 8, 12], 6),  # 4 -> 5 -> 6.75
        ([80, 40, 20], 57),  # 80 -> 70 -> 57.5
    ],
)
def test_ema(values: list[int], expected: int) -> None:
    assert ema(values) == expected


@pytest.mark.parametrize(
    ("sizes", "expected"),
    [
        pytest.param([], None, id="no history"),
        pytest.param([123], 123, id="one partition: its size"),
        pytest.param([100, 200, 300], 400, id="rising: 300 + ema(100, 100)"),
        pytest.param([10, 20, 40, 80], 99, id="rising: 80 + ema(10, 20, 40) = 80 + 19.375"),
        pytest.param([80, 40, 20], 57, id="falling: ema of sizes"),
        pytest.param([10, 10, 30], 15, id="not strictly rising: ema(10, 10, 30) = 15"),
        pytest.param([50, 10, 20, 30, 40, 50, 60, 70], 80, id="only the last 7: 20..70 rise by 10"),
        pytest.param([1, 1000, 2, 3, 4, 5, 6, 7, 8], 9, id="older spike outside the window is ignored"),
    ],
)
def test_estimate_next_partition_size(sizes: list[int], expected: int | None) -> None:
    assert estimate_next_partition_size(sizes) == expected


def test_next_partition_bucket_num() -> None:
    big = _disks(100 * TB, 1)
    # doris-reference §7.2 worked examples: 1, 3, 2 GB -> ema 1.625GB -> 2; 100, 200, 300 MB -> 400MB -> 2
    assert next_partition_bucket_num([1 * GB, 3 * GB, 2 * GB], 1, big) == 2
    assert next_partition_bucket_num([100 * MB, 200 * MB, 300 * MB], 1, big) == 2
    # stored sizes count 1:1 (no 5:1 discount): 10, 20, 30 GB -> 40GB -> 40 buckets
    assert next_partition_bucket_num([10 * GB, 20 * GB, 30 * GB], 1, big) == 40
    # ... capped by one 500GB disk (M = 10)
    assert next_partition_bucket_num([10 * GB, 20 * GB, 30 * GB], 1, _disks(500 * GB, 1)) == 10
    assert next_partition_bucket_num([MB], 1, big, min_buckets=3) == 3
    assert next_partition_bucket_num([], 1, big) is None


def test_usable_history_drops_current_and_empty() -> None:
    parts = [("p20240101", 100), ("p20240102", 0), ("P20240103", 300), ("p20240104", 50)]
    assert usable_history(parts, "p20240104") == [100, 300]
    assert usable_history(parts, "p20240103") == [100, 50]  # names compare case-insensitively
    assert usable_history(parts, None) == [100, 300, 50]
    assert usable_history([("p1", 0)], None) == []


# --- be.conf storage_root_path --------------------------------------------------------------------------


def test_empty_storage_root_path_is_default_root(tmp_path: Path) -> None:
    assert disks_from_storage_root_path("  ", tmp_path) == [
        Disk(str(tmp_path), shutil.disk_usage(tmp_path).total)
    ]


def test_storage_root_path_new_form(tmp_path: Path) -> None:
    real = shutil.disk_usage(tmp_path).total
    value = f"{tmp_path}/a,medium:ssd,capacity:50 ; {tmp_path}/b/ ;{tmp_path}/c,capacity:1.5TB,medium:HDD;"
    assert disks_from_storage_root_path(value, Path("/unused")) == [
        Disk(f"{tmp_path}/a", 50 * GB, "SSD"),
        Disk(f"{tmp_path}/b", real, "HDD"),  # not created yet: the capacity of its nearest existing parent
        Disk(f"{tmp_path}/c", 1536 * GB, "HDD"),
    ]


def test_storage_root_path_old_form(tmp_path: Path) -> None:
    real = shutil.disk_usage(tmp_path).total
    value = f"{tmp_path}/d1.HDD,50;{tmp_path}/d2.SSD,10;{tmp_path}/d3;{tmp_path}/d4.SSD,medium:hdd"
    assert disks_from_storage_root_path(value, tmp_path) == [
        Disk(f"{tmp_path}/d1.HDD", 50 * GB, "HDD"),
        Disk(f"{tmp_path}/d2.SSD", 10 * GB, "SSD"),
        Disk(f"{tmp_path}/d3", real, "HDD"),
        Disk(f"{tmp_path}/d4.SSD", real, "HDD"),  # medium: wins over the path's extension, as in Doris
    ]


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("/x,medium:nvme", "invalid storage medium"),
        ("/x,speed:fast", "invalid property of store path, speed:fast"),
        ("/x;/x/", "a duplicated path is found, path=/x"),
        ("/x,capacity:lots", "invalid data size expression: 'lots'"),
    ],
)
def test_storage_root_path_errors(value: str, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        disks_from_storage_root_path(value, Path("/"))


# --- data sizes -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1024", 1024),
        ("7b", 7),
        ("1K", 1024),
        ("3kb", 3 * 1024),
        ("100MB", 100 * MB),
        ("10G", 10 * GB),
        (" 20g ", 20 * GB),
        ("1.5GB", 1536 * MB),
        ("2t", 2 * TB),
        ("1TB", TB),
        ("1P", 1024 * TB),
    ],
)
def test_parse_data_size(text: str, expected: int) -> None:
    assert parse_data_size(text) == expected


@pytest.mark.parametrize("text", ["", "abc", "10XB", "-5G", "1.5.2G", "10 G", "G", "0", "0.0000000001K"])
def test_parse_data_size_rejects(text: str) -> None:
    with pytest.raises(ValueError, match=re.escape(f"'{text}'")):
        parse_data_size(text)
