"""A tablet's scanned rows kept for the next scan of the same columns: a table that takes a trickle of small
loads holds many small rowsets between compactions, and a scan without predicates then opens and reads every
one of them each time (16 clients: ~30 rowsets per tablet, 30-40 us of Python per segment, most of a read).
The kept rows are those of versions `first` to `last`. A later snapshot whose version path starts at `first` and
has a rowset ending at `last` holds the same rows up to there, however its rowsets were compacted since (a merge
of versions a-b holds the rows of a-b, merged as a read merges them): only its rowsets after `last` are read and
added to the kept rows (merged by the table's keys when it merges), as the whole read would have.

Kept only for tablets of at least MIN_ROWSETS data rowsets (a compacted tablet is read at once) and at most
MAX_ROWS rows, within a byte budget (least recently used first out), and never for a snapshot with a DELETE (the
engine's rule). A compaction across `last`, an overwrite, an older snapshot or a schema change reads everything.
"""

from __future__ import annotations

import bisect
import threading
from collections import OrderedDict
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import pyarrow as pa

MIN_ROWSETS = 4
MAX_ROWS = 1 << 18
MAX_CHUNKS = 16  # the kept rows are made one chunk again past this: operators above pay per chunk


Path = Sequence[tuple[int, int]]  # a snapshot's data rowsets as (start_version, end_version), in version order


@dataclass(frozen=True)
class KeptScan:
    first: int  # the versions the rows hold, first to last
    last: int
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

    def extends(self, key: Hashable, path: Path, columns: object) -> tuple[KeptScan, int] | None:
        """The kept scan under `key` that `path` (read as `columns`) begins with, and how many of the path's
        rowsets it holds; None when there is none."""
        with self._lock:
            kept = self._entries.get(key)
            if kept is None or kept.columns is not columns or not path or path[0][0] != kept.first:
                return None
            ends = [end for _, end in path]
            covered = bisect.bisect_left(ends, kept.last)
            if covered == len(ends) or ends[covered] != kept.last:
                return None
            self._entries.move_to_end(key)
            self.hits += 1
            return kept, covered + 1

    def keep(self, key: Hashable, path: Path, columns: object, rows: pa.Table) -> None:
        """Keep `rows`, the whole read of `path` as `columns`."""
        if len(path) < MIN_ROWSETS or rows.num_rows > MAX_ROWS:
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
            self._entries[key] = KeptScan(path[0][0], path[-1][1], columns, rows)
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
