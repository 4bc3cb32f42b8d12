"""Sparse row-id reads (bitmap index hits spread over a segment) gather values page by page; they must give
exactly what decoding the whole column and taking the rows gives, for every encoding and NULLs."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from storage.segment.page import PageEncoding
from storage.segment.reader import SegmentReader
from storage.segment.writer import write_segments
from storage.stats import ScanStats


def columns(n: int, rng: np.random.Generator) -> pa.Table:
    nulls = rng.random(n) < 0.1
    return pa.table({
        "k": pa.array(np.cumsum(rng.integers(1, 10, n))),  # sorted: DELTA pages
        "step": pa.array(np.arange(n, dtype=np.int64) * 3),  # DELTA without lanes (one step)
        "small": pa.array(rng.integers(-50, 50, n).astype(np.int16)),  # FOR, 1-byte lanes
        "wide": pa.array(rng.integers(-2**62, 2**62, n)),  # PLAIN
        "const": pa.array(np.full(n, 7, np.int32)),  # FOR width 0
        "nullable": pa.array(rng.integers(0, 1000, n), mask=nulls),
        "u": pa.array(rng.integers(0, 2**32 - 1, n, dtype=np.uint32)),
        "f": pa.array(rng.random(n), mask=rng.random(n) < 0.05),
        "f32": pa.array(rng.random(n).astype(np.float32)),
        "d": pa.array([dt.date(2020, 1, 1) + dt.timedelta(days=int(x)) for x in rng.integers(0, 3000, n)]),
        "ts": pa.array(rng.integers(0, 10**12, n).astype("datetime64[ms]")),
        "s": pa.array([f"v{x}" for x in rng.integers(0, 10**6, n)]),  # not gathered: the usual path
        "b": pa.array(rng.random(n) < 0.5),  # not gathered either
    })


@pytest.mark.parametrize("hits", [2, 17, 300, 4000])
def test_sparse_row_ids_equal_full_decode_and_take(tmp_path: Path, hits: int) -> None:
    rng = np.random.default_rng(hits)
    n = 60_000
    table = columns(n, rng)
    write_segments(tmp_path, "g", table, 1, 1)
    reader = SegmentReader(tmp_path / "g_0.dat")
    assert reader._ordinal_index("k").num_pages > 3
    ids = np.sort(rng.choice(n, hits, replace=False)).astype(np.int64)
    for name in table.column_names:
        stats = ScanStats()
        got = reader._read_column_rows(name, ids, stats)
        want = table.column(name).take(pa.array(ids)).combine_chunks()
        assert got.equals(want), name
        assert stats.pages_read >= 1


def test_encodings_covered(tmp_path: Path) -> None:
    """The fixture above really has DELTA, FOR (with and without lanes) and PLAIN integer pages."""
    from storage.segment.page import read_page

    table = columns(60_000, np.random.default_rng(0))
    write_segments(tmp_path, "g", table, 1, 1)
    reader = SegmentReader(tmp_path / "g_0.dat")
    seen = set()
    for name in ("k", "step", "small", "wide", "const"):
        oi = reader._ordinal_index(name)
        raw = (tmp_path / "g_0.dat").read_bytes()
        for off, size in zip(oi.offsets.tolist(), oi.sizes.tolist(), strict=True):
            header, _ = read_page(memoryview(raw[off:off + size]), "t")
            seen.add((header.encoding, header.width > 0))
    assert {(PageEncoding.DELTA, True), (PageEncoding.DELTA, False), (PageEncoding.FOR, True),
            (PageEncoding.FOR, False), (PageEncoding.PLAIN, True)} <= seen
