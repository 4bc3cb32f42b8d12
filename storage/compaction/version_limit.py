"""Doris's -235 (TOO_MANY_VERSION) check, run by every load before it publishes.

A load into a tablet that already holds more than `max_tablet_version_num` visible rowsets fails with
Doris's message and is aborted; above `max_tablet_version_num - 100` it submits a cumulative compaction of
that tablet so compaction catches up (Doris: RowsetBuilder::check_tablet_version_count). The one check
used by the in-process and the Spark publish paths (StorageEngine.commit).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from storage.catalog.model import Rowset
from storage.catalog.store import Catalog
from storage.compaction.policy import CompactionConfig, too_many_versions, too_many_versions_message
from storage.errors import StorageError

ALL_VERSIONS = 1 << 62
# Doris submits a cumulative compaction once a tablet is this close to the limit
TRIGGER_MARGIN = 100


def tablet_visible_rowsets(catalog: Catalog, tablet_id: int) -> list[Rowset]:
    """A tablet's rowsets on the current version path (what VersionCount counts): compaction inputs kept
    as stale rowsets are not on it."""
    return catalog.rowsets(tablet_id, ALL_VERSIONS)


def check_version_limit(catalog: Catalog, tablet_ids: Iterable[int], config: CompactionConfig,
                        trigger: Callable[[int, str], object] | None = None, limit: int | None = None) -> None:
    """Raise Doris's -235 error (MySQL 1105) for the first tablet over the limit (`limit`, default
    max_tablet_version_num); ask `trigger(tablet_id, "cumulative")` for a compaction of every tablet near it."""
    limit = config.max_tablet_version_num if limit is None else limit
    for tablet_id in sorted(set(tablet_ids)):
        rowsets = tablet_visible_rowsets(catalog, tablet_id)
        if len(rowsets) > limit - TRIGGER_MARGIN and trigger is not None:
            trigger(tablet_id, "cumulative")
        if too_many_versions(rowsets, config, limit):
            raise StorageError(too_many_versions_message(len(rowsets), limit, tablet_id), 1105, "HY000")
