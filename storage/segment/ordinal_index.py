"""Ordinal index: for each data page of a column, its first row ordinal, file offset and size.

On disk: one INDEX page per column; body = first_row int64[n] | offset int64[n] | size int64[n].
The reader maps a RowRanges onto the pages it must read with a searchsorted, never a loop.
"""

from __future__ import annotations

import bisect
from array import array
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from storage.errors import CorruptDataError
from storage.segment.page import PageEncoding, build_page
from storage.segment.row_ranges import RowRanges


def _ints(values: np.ndarray) -> array:
    return array("q", values.astype(np.int64).tobytes())


def encode_ordinal_index(first_rows: list[int], offsets: list[int], sizes: list[int]) -> bytes:
    body = np.concatenate([np.asarray(first_rows, np.int64), np.asarray(offsets, np.int64),
                           np.asarray(sizes, np.int64)]).tobytes()
    return build_page(PageEncoding.INDEX, len(first_rows), body)


@dataclass(frozen=True)
class OrdinalIndex:
    first_rows: np.ndarray  # int64, ascending, first_rows[0] == 0
    offsets: np.ndarray
    sizes: np.ndarray
    num_rows: int

    @classmethod
    def decode(cls, body: bytes | memoryview, num_pages: int, num_rows: int, data_start: int,
               data_end: int) -> OrdinalIndex:
        try:
            arr = np.frombuffer(body, np.int64, count=3 * num_pages).reshape(3, num_pages)
        except ValueError as e:
            raise CorruptDataError(f"malformed ordinal index: {e}") from e
        first_rows, offsets, sizes = arr[0], arr[1], arr[2]
        if num_pages == 1:  # most segments of small loads: the checks below in plain Python (~18 -> ~3 us)
            (first,), (offset,), (size,) = arr.tolist()
            ok = first == 0 and first < num_rows and size > 0 and offset == data_start and offset + size == data_end
        else:
            ok = (num_pages > 0 and first_rows[0] == 0 and bool(np.all(np.diff(first_rows) > 0))
                  and int(first_rows[-1]) < num_rows and bool(np.all(sizes > 0))
                  and int(offsets[0]) == data_start and bool(np.all(offsets[1:] == offsets[:-1] + sizes[:-1]))
                  and int(offsets[-1] + sizes[-1]) == data_end)
        if not ok:
            raise CorruptDataError("ordinal index is inconsistent")
        return cls(first_rows, offsets, sizes, num_rows)

    @property
    def num_pages(self) -> int:
        return len(self.first_rows)

    @cached_property
    def page_ends(self) -> np.ndarray:
        # computed once per loaded index: every scan of the segment maps its pages' row spans
        return np.append(self.first_rows[1:], self.num_rows)

    @cached_property
    def page_rows(self) -> np.ndarray:
        return self.page_ends - self.first_rows

    @cached_property
    def lists(self) -> tuple[array, array, array]:
        """(offsets, sizes, row counts) per page as int64 arrays that index to Python ints (and stay 8 bytes
        a page in the reader cache, unlike lists): reading a handful of pages (a point lookup, a bloom
        filter's survivors) then needs no numpy call per page."""
        return _ints(self.offsets), _ints(self.sizes), _ints(self.page_rows)

    def pages_for(self, ranges: RowRanges) -> np.ndarray:
        """Indexes of the pages holding at least one row of `ranges`."""
        if len(ranges) > 8:
            return np.flatnonzero(ranges.overlaps(self.first_rows, self.page_ends))
        return np.array(self._few_pages(ranges), np.intp)

    def count_pages(self, ranges: RowRanges) -> int:
        """len(pages_for(ranges)) (a read served from the column cache counts the pages it covers)."""
        if ranges.count() == 1:  # a point lookup's row, in every column it reads
            return 1
        if len(ranges) > 8:
            return int(np.count_nonzero(ranges.overlaps(self.first_rows, self.page_ends)))
        return len(self._few_pages(ranges))

    def _few_pages(self, ranges: RowRanges) -> list[int]:
        # a few ranges (a key range, bloom survivors): bisect the page starts in Python
        firsts, ends = self._row_lists
        pages: list[int] = []
        for s, e in ranges:
            a = max(bisect.bisect_right(firsts, s) - 1, 0)
            if ends[a] <= s:  # past the last page
                a += 1
            if pages and pages[-1] >= a:  # two ranges in one page
                a = pages[-1] + 1
            pages.extend(range(a, bisect.bisect_left(firsts, e)))
        return pages

    @cached_property
    def _row_lists(self) -> tuple[array, array]:
        return _ints(self.first_rows), _ints(self.page_ends)

    def ranges_of(self, keep: np.ndarray) -> RowRanges:
        """The rows of the pages flagged in `keep` (one bool per page)."""
        kept = np.flatnonzero(keep)
        if len(kept) > 16:
            return RowRanges.from_pages(self.first_rows, self.page_ends, keep)
        # a few pages (what a bloom filter or a selective zone map leaves): merge adjacent ones in Python
        firsts, ends = self._row_lists
        starts: list[int] = []
        stops: list[int] = []
        prev = -2
        for p in kept.tolist():
            if p == prev + 1:
                stops[-1] = ends[p]
            else:
                starts.append(firsts[p])
                stops.append(ends[p])
            prev = p
        return RowRanges._trusted(np.array(starts, np.int64), np.array(stops, np.int64))
