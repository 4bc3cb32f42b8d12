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
    __slots__ = ("starts", "ends")

    def __init__(self, starts: np.ndarray | list[int], ends: np.ndarray | list[int]) -> None:
        self.starts, self.ends = _normalize(np.asarray(starts), np.asarray(ends))

    @classmethod
    def _trusted(cls, starts: np.ndarray, ends: np.ndarray) -> RowRanges:
        obj = cls.__new__(cls)
        obj.starts, obj.ends = starts, ends
        return obj

    @classmethod
    def full(cls, n: int) -> RowRanges:
        return cls([0], [n]) if n > 0 else cls.empty()

    @classmethod
    def empty(cls) -> RowRanges:
        return cls._trusted(np.empty(0, np.int64), np.empty(0, np.int64))

    @classmethod
    def from_pages(cls, page_starts: np.ndarray, page_ends: np.ndarray, keep: np.ndarray) -> RowRanges:
        """The rows of the kept pages; adjacent kept pages merge into one range."""
        return cls(np.asarray(page_starts)[keep], np.asarray(page_ends)[keep])

    @property
    def is_empty(self) -> bool:
        return len(self.starts) == 0

    def count(self) -> int:
        return int((self.ends - self.starts).sum())

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
