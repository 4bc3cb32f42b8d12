"""The scans' holds on rowsets (storage/compaction/readers.py): each scan's hold is its own."""

from __future__ import annotations

from storage.compaction.readers import RowsetReaders


def test_a_scan_ending_does_not_release_another_scans_hold() -> None:
    readers = RowsetReaders(remove=lambda rowsets: None, unlink=lambda rowsets: None, sweep_seconds=lambda: 0.0)
    with readers.reading() as first:
        with readers.reading():
            pass  # ends while both holds look alike (nothing looked up yet)
        first.rowset_ids.add("r1")  # the first scan then looks its rowsets up
        assert readers.held() == {"r1"}  # still held: compaction may not delete them under the scan
    assert readers.held() == set()
