"""Segment format vs Parquet: write and full-scan throughput and file size on the same Arrow table.

    python -m bench.segment_bench [--rows N] [--repeat R]

Columns: a sorted BIGINT key, INT, DECIMAL(15,2), DATE, a VARCHAR of ~1000 distinct values and a
mostly-distinct VARCHAR. Reads are timed best-of-R (page cache warm for both formats).
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from storage.segment.reader import SegmentReader
from storage.segment.writer import write_segments


def make_table(rows: int, seed: int = 42) -> pa.Table:
    rng = np.random.default_rng(seed)
    key = np.cumsum(rng.integers(0, 20, rows, dtype=np.int64)) + 1_000_000
    unscaled = rng.integers(-10**9, 10**9, rows, dtype=np.int64)
    dec_buf = np.empty((rows, 2), np.int64)
    dec_buf[:, 0] = unscaled
    dec_buf[:, 1] = unscaled >> 63
    cities = pa.array([f"city_{i:04d}_{'x' * (i % 7)}" for i in range(1000)])
    city_idx = pa.array(rng.zipf(1.3, rows).clip(1, 1000) - 1)
    random_part = pc.cast(pa.array(rng.integers(0, 10**12, rows)), pa.string())
    return pa.table({
        "k": pa.array(key),
        "qty": pa.array(rng.integers(0, 100_000, rows, dtype=np.int32)),
        "price": pa.Array.from_buffers(pa.decimal128(15, 2), rows, [None, pa.py_buffer(dec_buf)]),
        "day": pa.array(rng.integers(18_000, 21_650, rows, dtype=np.int32)).cast(pa.date32()),
        "city": cities.take(city_idx),
        "token": pc.binary_join_element_wise("tok-", random_part, ""),
    })


def _best(fn, repeat: int) -> tuple[float, object]:
    best, result = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t0)
    return best, result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=5_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()

    table = make_table(args.rows)
    work = Path(tempfile.mkdtemp(prefix="segbench-"))
    try:
        seg_dir = work / "seg"
        seg_dir.mkdir()
        t0 = time.perf_counter()
        infos = write_segments(seg_dir, "bench", table, num_key_columns=1, num_short_key_columns=1)
        seg_write = time.perf_counter() - t0
        seg_size = sum(i.data_size for i in infos)

        def read_segments() -> pa.Table:
            parts = [SegmentReader(seg_dir / i.file_name).read(table.column_names) for i in infos]
            return pa.concat_tables(parts)

        seg_read, seg_table = _best(read_segments, args.repeat)
        assert seg_table.equals(table), "segment round trip differs"

        pq_path = work / "bench.parquet"
        t0 = time.perf_counter()
        pq.write_table(table, pq_path)
        pq_write = time.perf_counter() - t0
        pq_size = pq_path.stat().st_size
        pq_read, _ = _best(lambda: pq.read_table(pq_path), args.repeat)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    rows = args.rows
    mb = 1024 * 1024
    print(f"rows={rows:,}  columns={table.num_columns}  arrow={table.nbytes / mb:.1f} MiB  segments={len(infos)}")
    print(f"{'':10}{'write rows/s':>16}{'read rows/s':>16}{'size MiB':>12}")
    print(f"{'segment':10}{rows / seg_write:>16,.0f}{rows / seg_read:>16,.0f}{seg_size / mb:>12.1f}")
    print(f"{'parquet':10}{rows / pq_write:>16,.0f}{rows / pq_read:>16,.0f}{pq_size / mb:>12.1f}")
    print(f"segment/parquet: write throughput {pq_write / seg_write:.2f}x, read throughput "
          f"{pq_read / seg_read:.2f}x (target >= 0.5), size {seg_size / pq_size:.2f}x (target <= 1.5)")


if __name__ == "__main__":
    main()
