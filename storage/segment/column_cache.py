"""Decoded columns of segments kept in memory: dorislite's form of Doris's storage page cache
(be.conf `storage_page_cache_limit`, default 20% of the memory; `disable_storage_page_cache`).

A scan that reads a whole column of a segment leaves the decoded Arrow array here; later scans of that
column (whole, by row ranges or by row ids) slice or take from it instead of reading and decoding pages.
Segment files are immutable and never renamed over, so an entry is valid as long as its file exists;
`forget_segments` drops the entries of deleted files. Least recently used entries go first when the
budget is exceeded; an array larger than a quarter of the budget is never kept.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable

import pyarrow as pa

DEFAULT_LIMIT = "20%"


def physical_memory() -> int:
    """The machine's memory in bytes (8 GiB when the system does not say)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 8 << 30


def parse_limit(text: str | None) -> int:
    """`20%` of the machine's memory, or a byte count (`2147483648`, `4G`, `512M`)."""
    text = (text or DEFAULT_LIMIT).strip().upper()
    if text.endswith("%"):
        return int(physical_memory() * float(text[:-1]) / 100)
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
    if text[-1:] in units:
        return int(float(text[:-1]) * units[text[-1]])
    return int(text)


class ColumnCache:
    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._entries: OrderedDict[tuple[str, str], pa.Array | pa.ChunkedArray] = OrderedDict()
        # path -> its cached columns: forget() runs at every load's publish and every compaction, and a walk
        # over every entry of a full cache took a few percent of a server under many small loads
        self._by_path: dict[str, set[str]] = {}
        self._bytes = 0
        self._lock = threading.Lock()
        self._making: dict[tuple[str, str], threading.Event] = {}  # columns being decoded by a fill()
        self.hits = 0
        self.misses = 0

    def get(self, path: str, column: str) -> pa.Array | pa.ChunkedArray | None:
        if self.limit <= 0:
            return None
        with self._lock:
            got = self._entries.get((path, column))
            if got is None:
                self.misses += 1
                return None
            self._entries.move_to_end((path, column))
            self.hits += 1
            return got

    def fill(self, path: str, column: str, make: Callable[[], pa.Array]) -> pa.Array | pa.ChunkedArray:
        """After a get() that missed: the column kept since, else `make()`'s, kept. One caller makes a missing
        column while the others asking for it wait for that one (16 clients' first lookups of a segment decoded
        its 5M-row columns 16 times)."""
        key = (path, column)
        with self._lock:
            got = self._entries.get(key)
            if got is not None:
                self._entries.move_to_end(key)
                return got
            making = self._making.get(key)
            if making is None:
                making = self._making[key] = threading.Event()
                mine = True
            else:
                mine = False
        if not mine:
            making.wait()
            got = self.get(path, column)
            return got if got is not None else make()  # its maker failed, or it was too big to keep
        try:
            array = make()
            self.put(path, column, array)
            return array
        finally:
            with self._lock:
                del self._making[key]
            making.set()

    def put(self, path: str, column: str, array: pa.Array | pa.ChunkedArray) -> None:
        size = array.nbytes
        if self.limit <= 0 or size * 4 > self.limit:
            return
        with self._lock:
            old = self._entries.pop((path, column), None)
            if old is not None:
                self._bytes -= old.nbytes
            self._entries[(path, column)] = array
            self._by_path.setdefault(path, set()).add(column)
            self._bytes += size
            while self._bytes > self.limit and self._entries:
                (p, c), dropped = self._entries.popitem(last=False)
                self._unindex(p, c)
                self._bytes -= dropped.nbytes

    def _unindex(self, path: str, column: str) -> None:
        columns = self._by_path.get(path)
        if columns is not None:
            columns.discard(column)
            if not columns:
                del self._by_path[path]

    def forget(self, paths: set[str]) -> None:
        with self._lock:
            for path in paths:
                for column in self._by_path.pop(path, ()):
                    self._bytes -= self._entries.pop((path, column)).nbytes

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._by_path.clear()
            self._bytes = 0

    @property
    def used_bytes(self) -> int:
        return self._bytes


COLUMNS = ColumnCache(parse_limit(None))


def configure(limit: str | None, disabled: bool = False) -> None:
    """The engine's be.conf settings: `storage_page_cache_limit`, `disable_storage_page_cache`."""
    COLUMNS.clear()
    COLUMNS.limit = 0 if disabled else parse_limit(limit)
