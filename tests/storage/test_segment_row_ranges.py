"""RowRanges: sorted disjoint [start, end) ranges; set algebra checked against Python sets."""

from __future__ import annotations

import numpy as np

from storage.segment.row_ranges import RowRanges


def as_set(r: RowRanges) -> set[int]:
    return {i for s, e in r for i in range(s, e)}


def random_ranges(rng: np.random.Generator, n: int = 500) -> RowRanges:
    k = int(rng.integers(0, 12))
    starts = rng.integers(0, n, k)
    return RowRanges(starts, starts + rng.integers(0, 60, k))


def test_normalizes_overlapping_adjacent_and_empty() -> None:
    r = RowRanges([10, 0, 5, 30, 40], [20, 5, 12, 30, 41])
    assert list(r) == [(0, 20), (40, 41)]
    assert r.count() == 21 and len(r) == 2


def test_full_empty() -> None:
    assert RowRanges.full(0).is_empty and RowRanges.empty().is_empty
    assert list(RowRanges.full(7)) == [(0, 7)] and RowRanges.full(7).count() == 7


def test_set_algebra_matches_python_sets() -> None:
    rng = np.random.default_rng(0)
    for _ in range(300):
        a, b = random_ranges(rng), random_ranges(rng)
        assert as_set(a.intersect(b)) == as_set(a) & as_set(b)
        assert as_set(a.union(b)) == as_set(a) | as_set(b)
        for r in (a.intersect(b), a.union(b)):
            assert np.all(r.starts[1:] > r.ends[:-1]) and np.all(r.ends > r.starts)  # disjoint, non-adjacent
        assert a.to_indices().tolist() == sorted(as_set(a))
        assert np.flatnonzero(a.to_mask(600)).tolist() == sorted(as_set(a))
        assert a.clip(250).count() == len({i for i in as_set(a) if i < 250})


def test_intersect_with_one_range_matches_python_sets() -> None:
    """The single-range fast path (whole segment, key range): clipped at both ends, the other side
    returned as is when it lies within, count() cached consistently."""
    rng = np.random.default_rng(1)
    for _ in range(500):
        a = random_ranges(rng)
        lo = int(rng.integers(0, 560))
        one = RowRanges([lo], [lo + int(rng.integers(1, 200))])
        for r in (a.intersect(one), one.intersect(a)):
            assert as_set(r) == as_set(a) & as_set(one)
            assert r.count() == len(as_set(r))
            assert np.all(r.starts[1:] > r.ends[:-1]) and np.all(r.ends > r.starts)
        assert RowRanges.full(600).intersect(a) is a or a.is_empty


def test_from_pages_and_overlaps() -> None:
    starts = np.array([0, 100, 200, 300])
    ends = np.array([100, 200, 300, 350])
    r = RowRanges.from_pages(starts, ends, np.array([True, True, False, True]))
    assert list(r) == [(0, 200), (300, 350)]
    for keep in np.array(np.meshgrid(*[[False, True]] * 4)).T.reshape(-1, 4):
        got = RowRanges.from_pages(starts, ends, keep)
        assert got == RowRanges(starts[keep], ends[keep])  # the diff-based runs equal the sort-and-merge
    probe = RowRanges([150, 299], [151, 301])
    assert probe.overlaps(starts, ends).tolist() == [False, True, True, True]
    assert RowRanges.empty().overlaps(starts, ends).tolist() == [False] * 4


def test_rows_at_picks_from_the_ranges_without_listing_them() -> None:
    r = RowRanges(np.array([3, 10, 40]), np.array([5, 14, 41]))
    pos = np.array([0, 1, 2, 5, 6])
    assert r.rows_at(pos).tolist() == r.to_indices()[pos].tolist() == [3, 4, 10, 13, 40]


def test_ordinal_index_ranges_of_few_and_many_pages() -> None:
    """OrdinalIndex.ranges_of merges a few kept pages in Python and many with from_pages: same ranges."""
    from storage.segment.ordinal_index import OrdinalIndex

    rng = np.random.default_rng(2)
    first = np.concatenate([[0], np.cumsum(rng.integers(1, 50, 59))]).astype(np.int64)
    oi = OrdinalIndex(first, np.zeros(60, np.int64), np.ones(60, np.int64), int(first[-1]) + 10)
    for density in (0.02, 0.1, 0.3, 0.9):
        for _ in range(50):
            keep = rng.random(60) < density
            assert oi.ranges_of(keep) == RowRanges(first[keep], oi.page_ends[keep])


def test_ordinal_index_pages_for_few_and_many_ranges() -> None:
    """pages_for bisects a few ranges in Python and maps many with overlaps(): the same pages."""
    from storage.segment.ordinal_index import OrdinalIndex

    rng = np.random.default_rng(3)
    first = np.concatenate([[0], np.cumsum(rng.integers(1, 50, 39))]).astype(np.int64)
    n = int(first[-1]) + 10
    oi = OrdinalIndex(first, np.zeros(40, np.int64), np.ones(40, np.int64), n)
    for k in (1, 2, 3, 8, 9, 30):
        for _ in range(100):
            starts = rng.integers(0, n, k)
            r = RowRanges(starts, np.minimum(starts + rng.integers(1, 80, k), n))
            assert oi.pages_for(r).tolist() == np.flatnonzero(r.overlaps(first, oi.page_ends)).tolist()
    assert oi.pages_for(RowRanges.empty()).tolist() == []
    assert oi.pages_for(RowRanges.full(n)).tolist() == list(range(40))
