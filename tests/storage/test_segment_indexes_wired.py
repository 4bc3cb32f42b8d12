"""Page bloom filters and bitmap indexes wired into the segment writer / reader: the footer locates them
(old footers without them still read), row_ranges narrows with them after the zone maps, counting
rows_bloom_filter_filtered / rows_bitmap_index_filtered, and the narrowed rows, filtered exactly, are the
same as without any index for random predicates on random data."""

from __future__ import annotations

import datetime as dt
import json
import random

import numpy as np
import pyarrow as pa
import pytest

from storage.predicate import ColumnPredicate, Op
from storage.segment.format import Footer, read_footer
from storage.segment.reader import SegmentReader
from storage.segment.writer import SegmentIndexConfig, write_segments
from storage.stats import ScanStats
from storage.tablet.predicate_filter import predicate_mask

N = 60_000


def make_data(seed: int = 7) -> pa.Table:
    rng = np.random.default_rng(seed)
    k = np.arange(N, dtype=np.int64)  # sorted key: zone maps prune k, not the shuffled columns below
    c = rng.integers(0, 10_000_000, N).astype(np.int32)  # high cardinality, random order: zone maps useless
    d = rng.integers(0, 20, N).astype(np.int32)  # low cardinality
    s = np.array([f"s{v}" for v in rng.integers(0, 300, N)], dtype=object)
    day = rng.integers(0, 50, N)
    c_null = rng.random(N) < 0.01
    d_null = rng.random(N) < 0.02
    return pa.table({
        "k": pa.array(k),
        "c": pa.array(c, mask=c_null),
        "d": pa.array(d, mask=d_null),
        "s": pa.array(s, pa.string()),
        "day": pa.array([dt.date(2024, 1, 1) + dt.timedelta(days=int(x)) for x in day], pa.date32()),
    })


CONFIG = SegmentIndexConfig(bloom_filter={"c": 0.01, "s": 0.05, "day": 0.05}, bitmap=frozenset({"d", "s", "day"}))


@pytest.fixture(scope="module")
def segments(tmp_path_factory):
    data = make_data()
    root = tmp_path_factory.mktemp("segidx")
    (plain,) = write_segments(root, "plain", data, 1, 1)
    (indexed,) = write_segments(root, "indexed", data, 1, 1, indexes=CONFIG)
    return data, SegmentReader(root / plain.file_name), SegmentReader(root / indexed.file_name)


def exact(reader: SegmentReader, preds: list[ColumnPredicate], stats: ScanStats | None = None) -> pa.Table:
    cols = reader.schema.names
    t = reader.read(cols, reader.row_ranges(preds, stats))
    return t.filter(pa.array(predicate_mask(t, preds))) if t.num_rows else t


def test_footer_records_pointers_and_old_footers_decode(segments):
    _, plain, indexed = segments
    metas = {c.name: c for c in indexed.footer.columns}
    assert metas["c"].bloom_filter is not None and metas["c"].bitmap_index is None
    assert metas["d"].bitmap_index is not None and metas["d"].bloom_filter is None
    assert metas["s"].bloom_filter is not None and metas["s"].bitmap_index is not None
    assert all(c.bloom_filter is None and c.bitmap_index is None for c in plain.footer.columns)
    with open(plain.path, "rb") as f:
        footer = read_footer(f, plain.file_size, plain.name)
    body = footer.encode()
    schema_len = int.from_bytes(body[:4], "little")
    meta = json.loads(body[4 + schema_len:])
    assert all("bloom_filter" not in c and "bitmap_index" not in c for c in meta["columns"])  # the old layout
    assert Footer.decode(body, plain.file_size).columns == footer.columns


def test_bloom_filter_prunes_pages(segments):
    data, plain, indexed = segments
    value = int(data.column("c")[12345].as_py() or 1)
    preds = [ColumnPredicate("c", Op.EQ, (value,))]
    stats = ScanStats()
    got = exact(indexed, preds, stats)
    assert stats.rows_bloom_filter_filtered > 0
    assert stats.rows_bitmap_index_filtered == 0
    assert got.equals(exact(plain, preds))
    present = set(data.column("c").drop_null().to_pylist())
    absent = tuple(v for v in range(5_000_000, 5_000_100) if v not in present)[:3]  # within every zone map
    none = ScanStats()
    assert exact(indexed, [ColumnPredicate("c", Op.IN, absent)], none).num_rows == 0
    assert none.rows_stats_filtered == 0 and none.rows_bloom_filter_filtered > N // 2
    is_null = [ColumnPredicate("c", Op.IS_NULL)]
    assert exact(indexed, is_null).equals(exact(plain, is_null))


def test_bitmap_index_gives_exact_rows(segments):
    data, plain, indexed = segments
    preds = [ColumnPredicate("d", Op.EQ, (3,))]
    stats = ScanStats()
    ranges = indexed.row_ranges(preds, stats)
    want = int(np.sum(data.column("d").to_numpy(zero_copy_only=False) == 3))
    assert ranges.count() == want  # exact row set, not pages
    assert stats.rows_bitmap_index_filtered == N - want
    assert exact(indexed, preds).equals(exact(plain, preds))


def random_pred(rng: random.Random, data: pa.Table) -> ColumnPredicate:
    col = rng.choice(["c", "d", "s", "day", "k"])
    arr = data.column(col)
    op = rng.choice(list(Op))
    if op in (Op.IS_NULL, Op.IS_NOT_NULL):
        return ColumnPredicate(col, op)

    def value():
        v = arr[rng.randrange(N)].as_py()
        if v is None or rng.random() < 0.15:  # absent values too
            return {"c": 5_000_001, "d": -1, "s": "zzz", "day": dt.date(1999, 1, 1), "k": -3}[col]
        return v

    if op in (Op.IN, Op.NOT_IN):
        values = tuple(value() for _ in range(rng.randint(1, 4)))
        if rng.random() < 0.05:
            values += (None,)
        return ColumnPredicate(col, op, values)
    return ColumnPredicate(col, op, (value(),))


def test_random_predicates_same_rows_as_without_indexes(segments):
    data, plain, indexed = segments
    rng = random.Random(2024)
    totals = ScanStats()
    for _ in range(150):
        preds = [random_pred(rng, data) for _ in range(rng.randint(1, 3))]
        stats = ScanStats()
        got = exact(indexed, preds, stats)
        want = exact(plain, preds)
        assert got.equals(want), preds
        assert indexed.row_ranges(preds).count() >= want.num_rows
        totals.merge(stats)
    assert totals.rows_bloom_filter_filtered > 0 and totals.rows_bitmap_index_filtered > 0


def test_rollup_subset_and_unsupported_columns_ignored(tmp_path):
    data = make_data(1).select(["k", "d"]).append_column("f", pa.array(np.linspace(0, 1, N)))
    cfg = SegmentIndexConfig(bloom_filter={"c": 0.05}, bitmap=frozenset({"d", "f", "missing"}))
    (info,) = write_segments(tmp_path, "r", data, 1, 1, indexes=cfg)
    r = SegmentReader(tmp_path / info.file_name)
    metas = {c.name: c for c in r.footer.columns}
    assert metas["d"].bitmap_index is not None and metas["f"].bitmap_index is None
    assert exact(r, [ColumnPredicate("f", Op.LT, (0.5,))]).num_rows == N // 2
