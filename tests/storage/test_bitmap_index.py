"""Bitmap index: row sets equal plain pyarrow filtering for every operator, NULLs and empty columns."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from storage.errors import CorruptDataError, StorageError
from storage.predicate import ColumnPredicate as P
from storage.predicate import Op
from storage.segment import bitmap_index
from storage.segment.bitmap_index import BitmapIndexReader, BitmapIndexWriter, encode_bitmap_index

_CMP = {Op.EQ: pc.equal, Op.NE: pc.not_equal, Op.LT: pc.less, Op.LE: pc.less_equal, Op.GT: pc.greater,
        Op.GE: pc.greater_equal}


def expected(arr: pa.Array, pred: P) -> list[int]:
    if pred.op == Op.IS_NULL:
        m = pc.is_null(arr)
    elif pred.op == Op.IS_NOT_NULL:
        m = pc.is_valid(arr)
    elif pred.op in (Op.IN, Op.NOT_IN):
        m = pc.is_in(arr, value_set=pa.array(pred.values, arr.type))
        m = pc.and_(pc.invert(m), pc.is_valid(arr)) if pred.op == Op.NOT_IN else m
    else:
        m = _CMP[pred.op](arr, pa.scalar(pred.value, arr.type))
    return np.flatnonzero(pc.fill_null(m, False).to_numpy(zero_copy_only=False)).tolist()


def rows_of(r: BitmapIndexReader, pred: P) -> list[int]:
    """rows(pred), sorted, after checking that row_ids (the scan's path: a range concatenates its bitmaps'
    arrays) gives the very same ids."""
    rows = sorted(r.rows(pred))
    ids = r.row_ids(pred)
    assert ids.dtype == np.int64 and ids.tolist() == rows, pred
    return rows


def reader_for(arr: pa.Array, start: int = 0) -> BitmapIndexReader:
    blob, meta = encode_bitmap_index(arr, start)
    return BitmapIndexReader.from_buffer(blob, meta, arr.type, start)


def random_column(t: pa.DataType, n: int, card: int, rng: np.random.Generator) -> tuple[pa.Array, list]:
    codes = rng.integers(0, card, n)
    if pa.types.is_string(t):
        pool = sorted({"".join(rng.choice(list("abcé xyz"), rng.integers(0, 6))) for _ in range(card)})
    elif pa.types.is_decimal(t):
        pool = [Decimal(int(i)).scaleb(-t.scale) for i in rng.integers(-10**6, 10**6, card)]
    elif pa.types.is_date32(t):
        pool = [dt.date(2020, 1, 1) + dt.timedelta(days=int(i)) for i in rng.integers(-500, 500, card)]
    elif pa.types.is_timestamp(t):
        pool = [dt.datetime(2020, 1, 1) + dt.timedelta(seconds=int(i)) for i in rng.integers(0, 10**7, card)]
    elif pa.types.is_boolean(t):
        pool = [False, True]
    else:
        info = np.iinfo(t.to_pandas_dtype())
        pool = [int(i) for i in rng.integers(max(info.min, -10**6), min(info.max, 10**6), card)]
    values = [pool[c % len(pool)] for c in codes.tolist()]
    nulls = rng.random(n) < 0.1
    arr = pa.array([None if z else v for v, z in zip(values, nulls.tolist(), strict=True)], t)
    return arr, pool


TYPES = [pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.decimal128(38, 0), pa.decimal128(12, 2),
         pa.string(), pa.date32(), pa.timestamp("s"), pa.bool_()]


@pytest.mark.parametrize("t", TYPES, ids=str)
def test_every_operator_matches_pyarrow(t: pa.DataType) -> None:
    rng = np.random.default_rng(len(str(t)) * 7919)
    arr, pool = random_column(t, 3000, 40, rng)
    r = reader_for(arr, start=1000)
    assert r.num_rows == len(arr)
    assert r.num_values == len(pc.unique(pc.drop_null(arr)))
    probes = [pool[0], pool[-1], min(pool), max(pool)] + [pool[int(i)] for i in rng.integers(0, len(pool), 4)]
    # values absent from the column (between, below and above the dictionary)
    extra, _ = random_column(t, 8, 10_000, np.random.default_rng(7))
    probes += [v for v in extra.to_pylist() if v is not None]
    for v in probes:
        for op in (Op.EQ, Op.NE, Op.LT, Op.LE, Op.GT, Op.GE):
            assert rows_of(r, (P("c", op, (v,)))) == expected(arr, P("c", op, (v,))), (op, v)
    for vals in [tuple(probes[:3]), tuple(probes[-3:]), (probes[0],), ()]:
        for op in (Op.IN, Op.NOT_IN):
            assert rows_of(r, (P("c", op, vals))) == expected(arr, P("c", op, vals)), (op, vals)
    for op in (Op.IS_NULL, Op.IS_NOT_NULL):
        assert rows_of(r, (P("c", op))) == expected(arr, P("c", op))


def test_many_pages_and_high_cardinality(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bitmap_index, "PAGE_BYTES", 512)  # force many dictionary and bitmap pages
    rng = np.random.default_rng(11)
    data = rng.integers(0, 5000, 20_000)
    arr = pa.array(data, mask=rng.random(len(data)) < 0.05)
    r = reader_for(arr)
    assert len(r._dict_pages.first) > 10 and len(r._bitmap_pages.first) > 10
    for v in [-1, 0, 17, 2500, 4999, 5000, int(data[123])]:
        for op in (Op.EQ, Op.NE, Op.LT, Op.LE, Op.GT, Op.GE):
            assert rows_of(r, (P("c", op, (v,)))) == expected(arr, P("c", op, (v,))), (op, v)
    strings = pa.array([f"s{i:05d}" for i in rng.integers(0, 3000, 5000)])
    rs = reader_for(strings)
    for v in ["s00000", "s01500", "s01500x", "s2", "t"]:
        for op in (Op.LT, Op.GE, Op.EQ):
            assert rows_of(rs, (P("c", op, (v,)))) == expected(strings, P("c", op, (v,)))


def test_sorted_clustered_and_sliced_input() -> None:
    arr = pa.array(np.repeat(np.arange(100), 200)).slice(50, 10_000)
    r = reader_for(pa.chunked_array([arr.slice(0, 3000), arr.slice(3000)]))
    assert rows_of(r, (P("c", Op.EQ, (10,)))) == expected(arr, P("c", Op.EQ, (10,)))
    assert rows_of(r, (P("c", Op.IN, (0, 49, 99)))) == expected(arr, P("c", Op.IN, (0, 49, 99)))


@pytest.mark.parametrize("arr", [pa.array([], pa.int32()), pa.array([None, None], pa.string()),
                                 pa.array([5], pa.int64())], ids=["empty", "all-null", "one"])
def test_edge_columns(arr: pa.Array) -> None:
    r = reader_for(arr)
    for pred in [P("c", Op.EQ, (5,) if pa.types.is_integer(arr.type) else ("5",)),
                 P("c", Op.NE, (5,) if pa.types.is_integer(arr.type) else ("5",)),
                 P("c", Op.GE, (0,) if pa.types.is_integer(arr.type) else ("",)),
                 P("c", Op.IS_NULL), P("c", Op.IS_NOT_NULL)]:
        assert rows_of(r, (pred)) == expected(arr, pred)


def test_null_probes_and_unrepresentable_values() -> None:
    arr = pa.array([1, 2, None, 3], pa.int32())
    r = reader_for(arr)
    assert list(r.rows(P("c", Op.EQ, (None,)))) == []
    assert list(r.rows(P("c", Op.IN, (None, 2)))) == [1]
    assert list(r.rows(P("c", Op.NOT_IN, (None, 2)))) == []
    assert not r.can_evaluate(P("c", Op.LT, (2.5,)))
    assert list(r.rows(P("c", Op.LT, (2.5,)))) == [0, 1, 2, 3]  # superset: the exact filter decides


@pytest.mark.parametrize("t", [pa.float32(), pa.float64(), pa.list_(pa.int32()), pa.binary()], ids=str)
def test_unsupported_types_refused(t: pa.DataType) -> None:
    with pytest.raises(StorageError, match="bitmap index is not supported"):
        BitmapIndexWriter(pa.array([], t), column="c")


def test_corruption_detected() -> None:
    rng = np.random.default_rng(12)
    arr = pa.array([f"v{int(i)}" for i in rng.integers(0, 50, 2000)])
    blob, meta = encode_bitmap_index(arr)
    reader_for(arr)  # the intact blob reads
    for pos in [3, meta.offset // 3, meta.offset - 5, meta.offset + 3, len(blob) - 2]:
        bad = bytearray(blob)
        bad[pos] ^= 0x40
        with pytest.raises(CorruptDataError):
            r = BitmapIndexReader.from_buffer(bytes(bad), meta, arr.type)
            for v in ("v1", "v2", "v30", "v49"):
                r.rows(P("c", Op.GE, (v,)))
    with pytest.raises(CorruptDataError):
        BitmapIndexReader.from_buffer(blob, meta, pa.large_string())  # dictionary of another type
