"""RowRanges: a set of row ordinals as sorted, disjoint, non-adjacent [start, end) ranges in numpy arrays.

The index steps of a segment scan (short key, zone maps) each produce one and intersect it with the
previous; the reader maps the result onto pages. Everything is vectorized: a segment can have thousands
of pages and ranges.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np


def _normalize(starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sort, drop empty ranges and merge overlapping or touching ones."""
    starts = np.asarray(starts, dtype=np.int64)
    ends = np.asarray(ends, dtype=np.int64)
    keep = ends > starts
    starts, ends = starts[keep], ends[keep]
    if len(starts) <= 1:
        return starts, ends
    order = np.argsort(starts, kind="stable")
    starts, ends = starts[order], ends[order]
    reach = np.maximum.accumulate(ends)
    # a range opens a new group when it starts after everything before it has ended
    new_group = np.empty(len(starts), dtype=bool)
    new_group[0] = True
    new_group[1:] = starts[1:] > reach[:-1]
    group_starts = np.flatnonzero(new_group)
    group_ends = np.append(group_starts[1:], len(starts)) - 1
    return starts[group_starts], reach[group_ends]


class RowRanges:
    # `_count` caches count(): index narrowing asks for it after every step, on every segment
    __slots__ = ("starts", "ends", "_count")

    def __init__(self, starts: np.ndarray | list[int], ends: np.ndarray | list[int]) -> None:
        self.starts, self.ends = _normalize(np.asarray(starts), np.asarray(ends))
        self._count: int | None = None

    @classmethod
    def _trusted(cls, starts: np.ndarray, ends: np.ndarray, count: int | None = None) -> RowRanges:
        """From arrays already sorted, disjoint and non-adjacent (skips _normalize's sort and merge)."""
        obj = cls.__new__(cls)
        obj.starts, obj.ends, obj._count = starts, ends, count
        return obj

    @classmethod
    def full(cls, n: int) -> RowRanges:
        return cls._trusted(np.array([0], np.int64), np.array([n], np.int64), n) if n > 0 else cls.empty()

    @classmethod
    def empty(cls) -> RowRanges:
        return cls._trusted(np.empty(0, np.int64), np.empty(0, np.int64), 0)

    @classmethod
    def from_pages(cls, page_starts: np.ndarray, page_ends: np.ndarray, keep: np.ndarray) -> RowRanges:
        """The rows of the kept pages (pages contiguous and in row order, as a column's are); adjacent kept
        pages merge into one range. Runs of kept pages come from their indexes' gaps, not a sort and merge."""
        kept = np.flatnonzero(keep)
        if not len(kept):
            return cls.empty()
        gaps = np.flatnonzero(kept[1:] != kept[:-1] + 1)  # a run ends where the next kept page is not adjacent
        first = np.empty(len(gaps) + 1, np.intp)
        first[0] = kept[0]
        first[1:] = kept[gaps + 1]
        last = np.empty(len(gaps) + 1, np.intp)
        last[-1] = kept[-1]
        last[:-1] = kept[gaps]
        return cls._trusted(np.asarray(page_starts, np.int64)[first], np.asarray(page_ends, np.int64)[last])

    @property
    def is_empty(self) -> bool:
        return len(self.starts) == 0

    def count(self) -> int:
        n = self._count
        if n is None:
            n = self._count = int((self.ends - self.starts).sum())
        return n

    def __len__(self) -> int:
        return len(self.starts)

    def __iter__(self) -> Iterator[tuple[int, int]]:
        return zip(self.starts.tolist(), self.ends.tolist(), strict=True)

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, RowRanges) and np.array_equal(self.starts, other.starts)
                and np.array_equal(self.ends, other.ends))

    def __repr__(self) -> str:
        shown = ", ".join(f"[{s}, {e})" for s, e in list(self)[:8])
        return f"RowRanges({shown}{', ...' if len(self) > 8 else ''})"

    def union(self, other: RowRanges) -> RowRanges:
        return RowRanges(np.concatenate([self.starts, other.starts]), np.concatenate([self.ends, other.ends]))

    def intersect(self, other: RowRanges) -> RowRanges:
        a_s, a_e, b_s, b_e = self.starts, self.ends, other.starts, other.ends
        if len(a_s) == 0 or len(b_s) == 0:
            return RowRanges.empty()
        # one side a single range (the whole segment, a key range): the other side's ranges within it, clipped
        # at its ends; cheaper than the general pairing below and usually just `other` itself
        if len(a_s) == 1:
            return other._within(int(a_s[0]), int(a_e[0]))
        if len(b_s) == 1:
            return self._within(int(b_s[0]), int(b_e[0]))
        # for each range of a, the run of b ranges overlapping it is b[first:last]
        first = np.searchsorted(b_e, a_s, side="right")
        last = np.searchsorted(b_s, a_e, side="left")
        counts = np.maximum(last - first, 0)
        total = int(counts.sum())
        if total == 0:
            return RowRanges.empty()
        a_idx = np.repeat(np.arange(len(a_s)), counts)
        run_offsets = np.repeat(np.cumsum(counts) - counts, counts)
        b_idx = np.arange(total) - run_offsets + np.repeat(first, counts)
        starts = np.maximum(a_s[a_idx], b_s[b_idx])
        ends = np.minimum(a_e[a_idx], b_e[b_idx])
        return RowRanges(starts, ends)

    def _within(self, lo: int, hi: int) -> RowRanges:
        """These ranges cut to [lo, hi)."""
        starts, ends = self.starts, self.ends
        if lo <= starts[0] and ends[-1] <= hi:
            return self
        i = int(np.searchsorted(ends, lo, side="right"))
        j = int(np.searchsorted(starts, hi, side="left"))
        if i >= j:
            return RowRanges.empty()
        starts, ends = starts[i:j].copy(), ends[i:j].copy()
        starts[0] = max(starts[0], lo)
        ends[-1] = min(ends[-1], hi)
        return RowRanges._trusted(starts, ends)

    def clip(self, n: int) -> RowRanges:
        return self.intersect(RowRanges.full(n))

    def to_mask(self, n: int) -> np.ndarray:
        """A boolean mask over rows [0, n)."""
        delta = np.zeros(n + 1, dtype=np.int32)
        s = np.minimum(self.starts, n)
        e = np.minimum(self.ends, n)
        np.add.at(delta, s, 1)
        np.add.at(delta, e, -1)
        return np.cumsum(delta[:-1]) > 0

    def to_indices(self) -> np.ndarray:
        """The row ordinals, ascending."""
        counts = self.ends - self.starts
        total = int(counts.sum())
        offsets = np.repeat(self.starts - (np.cumsum(counts) - counts), counts)
        return np.arange(total, dtype=np.int64) + offsets

    def rows_at(self, positions: np.ndarray) -> np.ndarray:
        """The row ordinals at `positions` (ascending) of `to_indices()`, without building it."""
        if len(self.starts) == 1:  # one range (a whole segment, most often): an offset
            return positions.astype(np.int64) + int(self.starts[0])
        counts = self.ends - self.starts
        first = np.cumsum(counts) - counts
        k = np.searchsorted(first, positions, side="right") - 1
        return (self.starts[k] + (positions - first[k])).astype(np.int64)

    def overlaps(self, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
        """For each [start, end) given (e.g. pages), whether any of these ranges touches it."""
        idx = np.searchsorted(self.ends, starts, side="right")
        hit = idx < len(self.starts)
        out = np.zeros(len(starts), dtype=bool)
        out[hit] = self.starts[idx[hit]] < ends[hit]
        return out
