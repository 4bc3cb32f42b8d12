"""A tablet's scanned rows kept for the next scan of the same columns: a table that takes a trickle of small
loads holds many small rowsets between compactions, and a scan without predicates then opens and reads every
one of them each time (16 clients: ~30 rowsets per tablet, 30-40 us of Python per segment, most of a read).
A scan whose snapshot holds the rowsets of a kept scan, in the same order, with newer ones after them, reads
only the newer ones and adds them to the kept rows (merged by the table's keys when it merges), as the
whole read would have.

Kept only for tablets of at least MIN_ROWSETS data rowsets (a compacted tablet is read at once) and at most
MAX_ROWS rows, within a byte budget (least recently used first out). A snapshot whose rowsets differ (a
compaction, an overwrite, a DELETE, a schema change) reads everything again.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from dataclasses import dataclass

import pyarrow as pa

MIN_ROWSETS = 4
MAX_ROWS = 1 << 18
MAX_CHUNKS = 16  # the kept rows are made one chunk again past this: operators above pay per chunk


@dataclass(frozen=True)
class KeptScan:
    rowset_ids: tuple[str, ...]  # the data rowsets read, in version order
    columns: object  # what the segments were read as (the engine's wanted columns: the same object until the
    # schema changes)
    rows: pa.Table


class TabletScanCache:
    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._entries: OrderedDict[Hashable, KeptScan] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self.hits = 0

    def extends(self, key: Hashable, rowset_ids: tuple[str, ...], columns: object) -> KeptScan | None:
        """The kept scan under `key` whose rowsets begin `rowset_ids` (read as `columns`), if any."""
        with self._lock:
            kept = self._entries.get(key)
            if kept is None or kept.columns is not columns or rowset_ids[:len(kept.rowset_ids)] != kept.rowset_ids:
                return None
            self._entries.move_to_end(key)
            self.hits += 1
            return kept

    def keep(self, key: Hashable, rowset_ids: tuple[str, ...], columns: object, rows: pa.Table) -> None:
        if len(rowset_ids) < MIN_ROWSETS or rows.num_rows > MAX_ROWS:
            self.forget(key)
            return
        if rows.num_columns and rows.column(0).num_chunks > MAX_CHUNKS:
            rows = rows.combine_chunks()
        size = rows.nbytes
        if size > self.max_bytes // 4:
            self.forget(key)
            return
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self._bytes -= old.rows.nbytes
            self._entries[key] = KeptScan(rowset_ids, columns, rows)
            self._bytes += size
            while self._bytes > self.max_bytes and self._entries:
                _, gone = self._entries.popitem(last=False)
                self._bytes -= gone.rows.nbytes

    def forget(self, key: Hashable) -> None:
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self._bytes -= old.rows.nbytes

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._bytes = 0
