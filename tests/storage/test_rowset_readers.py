"""The scans' holds on rowsets (storage/compaction/readers.py): each scan's hold is its own."""

from __future__ import annotations

import time

from storage.catalog.model import Rowset
from storage.compaction.readers import RowsetReaders


def test_a_scan_ending_does_not_release_another_scans_hold() -> None:
    readers = RowsetReaders(remove=lambda rowsets: None, unlink=lambda rowsets: None, sweep_seconds=lambda: 0.0)
    with readers.reading() as first:
        with readers.reading():
            pass  # ends while both holds look alike (nothing looked up yet)
        first.rowset_ids.add("r1")  # the first scan then looks its rowsets up
        assert readers.held() == {"r1"}  # still held: compaction may not delete them under the scan
    assert readers.held() == set()


def test_a_tables_retention_keeps_its_stale_rowsets_until_it_passes_or_changes() -> None:
    removed: list[str] = []
    retention = {1: 100.0}  # tablet 1's table keeps its stale rowsets 100 s; tablet 2's none
    readers = RowsetReaders(remove=lambda rowsets: removed.extend(r.rowset_id for r in rowsets),
                            unlink=lambda rowsets: None, sweep_seconds=lambda: 10.0,
                            retention=lambda rowsets: max(retention.get(r.tablet_id, 0.0) for r in rowsets))
    start = time.monotonic()
    readers.retire([Rowset("kept", 1, 2, 3, 1, 1, 1, 1)], now=start)
    readers.retire([Rowset("swept", 2, 2, 3, 1, 1, 1, 1)], now=start)
    assert readers.collect(now=start + 50) == 1 and removed == ["swept"]  # the sweep delay only
    assert readers.collect(now=start + 99) == 0 and readers.pending() == 1
    retention[1] = 20.0  # ALTER TABLE ... SET ("time_travel_retention" = ...) shortened it
    readers.reschedule()
    assert readers.collect(now=start + 21) == 1 and removed == ["swept", "kept"]
