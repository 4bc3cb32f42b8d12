"""How many buckets a new partition gets: the table's fixed number, or BUCKETS AUTO's rules (auto_bucket)
fed with this node's disks (be.conf storage_root_path) and the table's real partition sizes."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from storage.catalog.model import OlapTable
from storage.partition_policy.auto_bucket import (
    DEFAULT_AUTO_BUCKETS,
    DEFAULT_MAX_BUCKETS,
    Disk,
    disks_from_storage_root_path,
    initial_bucket_num,
    next_partition_bucket_num,
    parse_data_size,
    usable_history,
)

BACKENDS = 1  # a single node


@dataclass(frozen=True)
class BucketPolicy:
    disks: tuple[Disk, ...]
    min_buckets: int = 1
    max_buckets: int = DEFAULT_MAX_BUCKETS

    @classmethod
    def from_settings(cls, setting: Callable[[str, str], str], default_root: Path) -> BucketPolicy:
        """`setting(key, default)` reads fe.conf / be.conf (storage_root_path, autobucket_min/max_buckets)."""
        disks = disks_from_storage_root_path(setting("storage_root_path", ""), default_root)
        return cls(tuple(disks), _int(setting("autobucket_min_buckets", "1"), 1),
                   _int(setting("autobucket_max_buckets", str(DEFAULT_MAX_BUCKETS)), DEFAULT_MAX_BUCKETS))

    def initial(self, estimate_partition_size: str | None) -> int:
        """BUCKETS AUTO at CREATE TABLE: from `estimate_partition_size`, else Doris's default of 10."""
        if not estimate_partition_size:
            return DEFAULT_AUTO_BUCKETS
        return initial_bucket_num(parse_data_size(estimate_partition_size), BACKENDS, self.disks,
                                  self.min_buckets, self.max_buckets)

    def from_history(self, table: OlapTable, current: str | None = None) -> int | None:
        """BUCKETS AUTO for a partition added later: from the earlier partitions' real data sizes (the
        current and empty ones excluded); None without such history."""
        sizes = usable_history([(p.name, p.data_size) for p in table.partitions], current)  # range order
        return next_partition_bucket_num(sizes, BACKENDS, self.disks, self.min_buckets, self.max_buckets)

    def for_new_partition(self, table: OlapTable, current: str | None = None, fixed: int | None = None) -> int:
        """A dynamic partition: BUCKETS AUTO tables size it from history (the table's number without
        one), others take `fixed` (dynamic_partition.buckets) or the table's bucket number."""
        if table.distribution.auto:
            got = self.from_history(table, current)
            return got if got is not None else table.distribution.buckets
        return fixed if fixed is not None else table.distribution.buckets


def _int(text: str, default: int) -> int:
    try:
        return int(text)
    except ValueError:
        return default
