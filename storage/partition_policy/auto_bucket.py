"""BUCKETS AUTO: how many buckets a new partition gets (issue 6; seed "自动分桶", doris-reference §7).

Pure functions: the caller reads `autobucket_min_buckets` / `autobucket_max_buckets` (fe.conf) and
`storage_root_path` (be.conf) and passes the values in; nothing here reads config or the catalog.
"""

from __future__ import annotations

import math
import os
import re
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

# Doris uses FeConstants.default_bucket_num when BUCKETS AUTO has no estimate_partition_size
# (regression test test_autobucket); the docs' "10GB default estimate" is not what the code does.
DEFAULT_AUTO_BUCKETS = 10
DEFAULT_MAX_BUCKETS = 128  # fe.conf autobucket_max_buckets; a fixed 128 before Doris 2.0.9

_MB = 1024**2
_GB = 1024**3
_COMPRESSION_RATIO = 5  # the seed assumes text loads compress 5:1
_DISK_GB_PER_BUCKET = 50  # each started 50 GB of a disk counts for one bucket
_EMA_PERIOD = 7  # seed: "最多前 7 个分区" and EMA with alpha = 2 / (7 + 1)

_UNITS = {"": 1, "B": 1, "K": 1024, "KB": 1024, "M": _MB, "MB": _MB, "G": _GB, "GB": _GB}
_UNITS |= {"T": 1024**4, "TB": 1024**4, "P": 1024**5, "PB": 1024**5}
_SIZE_RE = re.compile(r"(\d+(?:\.\d+)?)([A-Za-z]*)")
_MEDIA = ("HDD", "SSD")


@dataclass(frozen=True)
class Disk:
    """One storage_root_path entry; `capacity_bytes` is what the M (disk) term of the rule counts."""

    path: str
    capacity_bytes: int
    medium: str = "HDD"


def parse_data_size(text: str) -> int:
    """'10G', '100MB', '1.5GB', '1024' -> bytes, with Doris's 1024-based units (ParseUtil.analyzeDataVolume).

    Doris accepts integers only; a decimal is also accepted here and the byte count rounded down.
    """
    m = _SIZE_RE.fullmatch(text.strip())
    if m is None:
        raise ValueError(f"invalid data size expression: '{text}'")
    unit = m.group(2).upper()
    if unit not in _UNITS:
        raise ValueError(f"invalid unit '{m.group(2)}' in data size '{text}'")
    size = math.floor(Fraction(m.group(1)) * _UNITS[unit])
    if size <= 0:
        raise ValueError(f"data size must be larger than 0: '{text}'")
    return size


def filesystem_capacity(path: str | Path) -> int:
    """Total bytes of the filesystem holding `path`, or of its nearest existing parent (not created yet)."""
    p = Path(path).absolute()
    while not p.exists() and p != p.parent:
        p = p.parent
    return shutil.disk_usage(p).total


def _parse_root_path(item: str) -> Disk:
    # Doris be.conf forms: "/p,medium:ssd,capacity:50" and the old "/p.SSD,50"; a bare capacity is in GB.
    first, *props = [part.strip() for part in item.split(",") if part.strip()]
    path = first.rstrip("/") or "/"
    # Doris reads any extension as the medium and rejects others; here only .HDD/.SSD mean one
    suffix = os.path.splitext(path)[1][1:].upper()
    medium = suffix if suffix in _MEDIA else "HDD"
    capacity: int | None = None
    for prop in props:
        key, sep, value = prop.partition(":")
        key, value = (key.strip().upper(), value.strip()) if sep else ("CAPACITY", prop)
        if key == "CAPACITY":
            capacity = int(value) * _GB if value.isdigit() else parse_data_size(value)
        elif key == "MEDIUM":
            medium = value.upper()
            if medium not in _MEDIA:
                raise ValueError(f"invalid storage medium. medium={value} in storage_root_path '{item}'")
        else:
            raise ValueError(f"invalid property of store path, {prop}")
    return Disk(path, filesystem_capacity(path) if capacity is None else capacity, medium)


def disks_from_storage_root_path(value: str, default_root: Path) -> list[Disk]:
    """be.conf storage_root_path ("path[,medium:SSD][,capacity:50GB];path2...") -> one Disk per path.

    A capacity left out is the real filesystem's size; an empty value means the single `default_root`.
    """
    disks = [_parse_root_path(item) for item in value.split(";") if item.strip()]
    if not disks:
        return [Disk(str(default_root), filesystem_capacity(default_root))]
    seen: set[str] = set()
    for disk in disks:
        if disk.path in seen:
            raise ValueError(f"a duplicated path is found, path={disk.path}")
        seen.add(disk.path)
    return disks


def _buckets_by_size(estimate_partition_size_bytes: int) -> int:
    """N: the compressed size (size / 5) -> <= 100MB: 1, <= 1GB: 2, else one per started GB."""
    compressed = estimate_partition_size_bytes // _COMPRESSION_RATIO
    if compressed <= 100 * _MB:
        return 1
    if compressed <= _GB:
        return 2
    return -(-compressed // _GB)


def _buckets_by_disks(backends: int, disks: Sequence[Disk]) -> int:
    """M: every backend has these disks; each disk counts one per started 50 GB (at least 1), summed."""
    per_backend = sum(max(1, -(-d.capacity_bytes // (_DISK_GB_PER_BUCKET * _GB))) for d in disks)
    return backends * per_backend


def initial_bucket_num(
    estimate_partition_size_bytes: int,
    backends: int,
    disks: Sequence[Disk],
    min_buckets: int = 1,
    max_buckets: int = DEFAULT_MAX_BUCKETS,
) -> int:
    """Buckets for a partition of the given raw size: x = min(M, N, cap); x < N and x < BEs -> BEs; >= min."""
    if backends < 1:
        raise ValueError(f"auto bucket needs at least one backend, got {backends}")
    n = _buckets_by_size(estimate_partition_size_bytes)
    x = min(_buckets_by_disks(backends, disks), n, max_buckets)
    if x < n and x < backends:
        x = backends  # too little disk to split by size: at least spread the partition over every BE
    return max(x, min_buckets)


def ema(values: Sequence[int], period: int = _EMA_PERIOD) -> int:
    """Exponential moving average, oldest first, seeded with the first value; truncated like Java's (long)."""
    alpha = 2.0 / (period + 1)
    avg = float(values[0])
    for v in values[1:]:
        avg = alpha * v + (1 - alpha) * avg
    return int(avg)


def estimate_next_partition_size(previous_sizes: Sequence[int]) -> int | None:
    """The seed's estimate from the last (up to) 7 partitions S1..S7, oldest first.

    Strictly increasing -> S7 + EMA(S2-S1, ..., S7-S6) (follow the trend); otherwise EMA(S1..S7).
    None without history.
    """
    window = list(previous_sizes[-_EMA_PERIOD:])
    if not window:
        return None
    if len(window) == 1:
        return window[0]
    deltas = [b - a for a, b in zip(window, window[1:], strict=False)]
    if all(d > 0 for d in deltas):
        return window[-1] + ema(deltas)
    return ema(window)


def next_partition_bucket_num(
    previous_sizes: Sequence[int],
    backends: int,
    disks: Sequence[Disk],
    min_buckets: int = 1,
    max_buckets: int = DEFAULT_MAX_BUCKETS,
) -> int | None:
    """Buckets for the next partition of an auto-bucket table from its predecessors' data sizes.

    `previous_sizes` are bytes, oldest first, and must already exclude the current period's partition
    (still filling up) and empty ones (see `usable_history`). None means no usable history: the caller
    falls back to the table's default bucket number (dynamic_partition.buckets).
    """
    estimate = estimate_next_partition_size(previous_sizes)
    if estimate is None:
        return None
    # the history holds stored (compressed) sizes; x5 undoes the 5:1 guess applied to raw estimates
    return initial_bucket_num(estimate * _COMPRESSION_RATIO, backends, disks, min_buckets, max_buckets)


def usable_history(partitions: Sequence[tuple[str, int]], current: str | None) -> list[int]:
    """(name, data_size) in partition order -> sizes without the current partition and empty ones.

    Partition names compare case-insensitively, as Doris's do.
    """
    skip = current.lower() if current is not None else None
    return [size for name, size in partitions if size > 0 and name.lower() != skip]
