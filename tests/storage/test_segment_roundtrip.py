"""Segment files: every supported Arrow type round-trips exactly, splits, projection, reads by RowRanges."""

from __future__ import annotations

import datetime as dt
import os
from decimal import Decimal
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from storage.errors import StorageError
from storage.segment.encoding import PAGE_TARGET_BYTES
from storage.segment.reader import SegmentReader
from storage.segment.row_ranges import RowRanges
from storage.segment.writer import write_segments
from storage.stats import ScanStats


def with_nulls(arr: pa.Array, rng: np.random.Generator, fraction: float = 0.1) -> pa.Array:
    mask = pa.array(rng.random(len(arr)) < fraction)
    return pa.compute.if_else(mask, pa.scalar(None, arr.type), arr)


def all_types_table(n: int, seed: int = 1) -> pa.Table:
    rng = np.random.default_rng(seed)
    big = [Decimal(int(x)) * 10**20 + Decimal(int(y)) for x, y in zip(rng.integers(-10**17, 10**17, n),
                                                                     rng.integers(0, 10**18, n), strict=True)]
    i64 = rng.integers(-2**63, 2**63 - 1, n, dtype=np.int64, endpoint=True)
    i64[:3] = [-2**63, 2**63 - 1, 0][:n]  # wrap-around arithmetic in FOR / delta
    strings = np.array(["", "a", "ab", "ümlaut", "x" * 300, "tail\x00zero"], dtype=object)
    cols = {
        "k": pa.array(np.sort(rng.integers(-1000, 1000, n)).astype(np.int32)),
        "b": pa.array(rng.random(n) < 0.3),
        "i8": pa.array(rng.integers(-128, 128, n, dtype=np.int8)),
        "i16": pa.array(rng.integers(-2**15, 2**15, n, dtype=np.int16)),
        "i32": pa.array(rng.integers(-2**31, 2**31, n, dtype=np.int32)),
        "i64": pa.array(i64),
        "i64_sorted": pa.array(np.cumsum(rng.integers(0, 3, n))),
        "f32": pa.array(rng.standard_normal(n).astype(np.float32)),
        "f64": pa.array(np.where(rng.random(n) < 0.01, np.nan, rng.standard_normal(n))),
        "dec9": pa.array([Decimal(int(x)).scaleb(-2) for x in rng.integers(-10**8, 10**8, n)], pa.decimal128(9, 2)),
        "dec38": pa.array(big, pa.decimal128(38, 0)),
        "dec38s": pa.array([Decimal(int(x)).scaleb(-10) for x in rng.integers(-10**15, 10**15, n)],
                           pa.decimal128(38, 10)),
        "d": pa.array(rng.integers(-1000, 30000, n).astype(np.int32), pa.date32()),
        "ts": pa.array(rng.integers(0, 2**50, n), pa.timestamp("us")),
        "s_dict": pa.array(strings[rng.integers(0, len(strings), n)].tolist(), pa.string()),
        "s_plain": pa.array([f"v{x}" * int(x % 5) for x in rng.integers(0, 10**9, n)], pa.string()),
        "const": pa.array(np.full(n, 7, np.int64)),
    }
    nullable = {name: with_nulls(arr, rng) for name, arr in cols.items() if name not in ("k", "const")}
    nullable["all_null"] = pa.nulls(n, pa.int32())
    nullable["k"] = cols["k"]
    nullable["const"] = cols["const"]
    fields = [pa.field("k", pa.int32(), nullable=False)] + [
        pa.field(name, arr.type) for name, arr in nullable.items() if name != "k"]
    return pa.table([nullable[f.name] for f in fields], schema=pa.schema(fields, metadata={b"table": b"t1"}))


def same(a: pa.ChunkedArray | pa.Array, b: pa.ChunkedArray | pa.Array) -> bool:
    """Exact equality, NaN equal to NaN."""
    if not pa.types.is_floating(a.type):
        return a.equals(b)
    return (a.type == b.type and a.is_null().equals(b.is_null())
            and np.array_equal(a.fill_null(0).to_numpy(), b.fill_null(0).to_numpy(), equal_nan=True))


def assert_same(out: pa.Table, expected: pa.Table) -> None:
    assert out.schema == expected.schema
    for name in expected.column_names:
        assert same(out.column(name), expected.column(name)), name


def read_all(directory: Path, infos) -> pa.Table:
    return pa.concat_tables(SegmentReader(directory / i.file_name).read(
        SegmentReader(directory / i.file_name).schema.names) for i in infos)


@pytest.fixture(params=["sequential", "parallel"])
def decode_mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    import storage.segment.reader as reader_module
    monkeypatch.setattr(reader_module, "_PARALLEL_MIN_ROWS", 10**12 if request.param == "sequential" else 1)
    return request.param


def test_every_type_round_trips_with_nulls(tmp_path: Path, decode_mode: str) -> None:
    table = all_types_table(40_000)
    infos = write_segments(tmp_path, "seg", table, num_key_columns=1, num_short_key_columns=1)
    assert len(infos) == 1 and infos[0].file_name == "seg_0.dat" and infos[0].num_rows == 40_000
    assert infos[0].data_size == (tmp_path / "seg_0.dat").stat().st_size
    reader = SegmentReader(tmp_path / "seg_0.dat")
    assert reader.num_rows == 40_000
    assert reader.schema == table.schema and reader.schema.metadata == table.schema.metadata
    assert not reader.schema.field("k").nullable
    assert_same(reader.read(table.column_names), table)
    assert sorted(os.listdir(tmp_path)) == ["seg_0.dat"]  # no temporary file left behind


@pytest.mark.parametrize("n", [1, 2, 1023, 1025, 8193])
def test_small_and_boundary_sizes(tmp_path: Path, n: int) -> None:
    table = all_types_table(n, seed=n)
    infos = write_segments(tmp_path, "p", table, 1, 1)
    assert_same(read_all(tmp_path, infos), table)


def test_sliced_and_chunked_input(tmp_path: Path) -> None:
    full = all_types_table(20_000)
    table = pa.concat_tables([full.slice(100, 5_000), full.slice(7_000, 3_000)])  # offsets + two chunks
    infos = write_segments(tmp_path, "c", table, 1, 1)
    assert_same(read_all(tmp_path, infos), table)


def test_empty_input_writes_nothing(tmp_path: Path) -> None:
    assert write_segments(tmp_path, "e", all_types_table(10).slice(0, 0), 1, 1) == []
    assert os.listdir(tmp_path) == []


def test_unsupported_type_rejected(tmp_path: Path) -> None:
    with pytest.raises(StorageError):
        write_segments(tmp_path, "u", pa.table({"l": pa.array([[1]])}), 0, 0)


def test_multi_segment_split(tmp_path: Path) -> None:
    table = all_types_table(30_000)
    infos = write_segments(tmp_path, "m", table, 1, 1, max_segment_bytes=400_000)
    assert len(infos) > 3
    assert [i.file_name for i in infos] == [f"m_{n}.dat" for n in range(len(infos))]
    assert sum(i.num_rows for i in infos) == 30_000
    for info in infos:
        assert info.data_size == (tmp_path / info.file_name).stat().st_size
        assert info.data_size <= 400_000
    assert_same(read_all(tmp_path, infos), table)


def test_split_by_string_volume(tmp_path: Path) -> None:
    # rows are tiny except a run of 100 KB strings: splits follow bytes, not row counts
    values = ["s"] * 1000 + ["L" * 100_000] * 10 + ["s"] * 1000
    table = pa.table({"v": pa.array(values)})
    infos = write_segments(tmp_path, "v", table, 0, 0, max_segment_bytes=250_000)
    assert len(infos) >= 5
    assert_same(read_all(tmp_path, infos), table)


def test_pages_are_about_64k(tmp_path: Path) -> None:
    n = 100_000
    table = pa.table({"v": pa.array(np.arange(n, dtype=np.int64) * 7919 % 1_000_003)})
    write_segments(tmp_path, "g", table, 0, 0)
    reader = SegmentReader(tmp_path / "g_0.dat")
    oi = reader._ordinal_index("v")
    assert oi.num_pages == -(-n * 8 // PAGE_TARGET_BYTES)
    assert reader.file_size < n * 8  # encoded: values span 20 bits, stored in 4-byte lanes + LZ4


def test_projection_reads_only_requested_columns(tmp_path: Path) -> None:
    table = all_types_table(50_000)
    write_segments(tmp_path, "p", table, 1, 1)
    reader = SegmentReader(tmp_path / "p_0.dat")
    stats = ScanStats()
    out = reader.read(["s_plain", "k"], stats=stats)
    assert out.column_names == ["s_plain", "k"]
    assert out.column("k").equals(table.column("k")) and out.column("s_plain").equals(table.column("s_plain"))
    wanted = sum(reader._columns[c].data.size for c in ("s_plain", "k"))
    assert stats.bytes_read == wanted < reader.file_size / 3
    assert stats.raw_rows_read == 50_000
    assert stats.pages_read == sum(reader._columns[c].num_pages for c in ("s_plain", "k"))
    # a column nobody asked for is never touched: garbage there does not matter
    meta = reader._columns["i64"]
    with open(tmp_path / "p_0.dat", "r+b") as f:
        f.seek(meta.data.offset + meta.data.size // 2)
        f.write(b"\xff" * 64)
    fresh = SegmentReader(tmp_path / "p_0.dat")
    assert fresh.read(["k", "d"]).column("d").equals(table.column("d"))


def test_read_no_columns_gives_row_count(tmp_path: Path) -> None:
    write_segments(tmp_path, "n", all_types_table(5000), 1, 1)
    reader = SegmentReader(tmp_path / "n_0.dat")
    assert reader.read([]).num_rows == 5000
    assert reader.read([], RowRanges([10], [20])).num_rows == 10


def test_read_by_row_ranges(tmp_path: Path, decode_mode: str) -> None:
    table = all_types_table(60_000, seed=7)
    write_segments(tmp_path, "r", table, 1, 1)
    reader = SegmentReader(tmp_path / "r_0.dat")
    rng = np.random.default_rng(3)
    cases = [RowRanges.empty(), RowRanges.full(60_000), RowRanges([0], [1]), RowRanges([59_999], [60_000]),
             RowRanges([100, 30_000], [200, 30_001]), RowRanges([5], [70_000])]
    for _ in range(10):
        starts = np.sort(rng.choice(60_000, 6, replace=False))
        cases.append(RowRanges(starts, starts + rng.integers(1, 3000, 6)))
    for ranges in cases:
        stats = ScanStats()
        out = reader.read(table.column_names, ranges, stats)
        expected = table.take(pa.array(ranges.clip(60_000).to_indices()))
        assert_same(out, expected)
        assert stats.raw_rows_read == len(expected)
    stats = ScanStats()
    reader.read(["i64"], RowRanges([20_000], [20_010]), stats)
    assert stats.pages_read == 1 and stats.pages_skipped == reader._columns["i64"].num_pages - 1
    assert stats.bytes_read < reader._columns["i64"].data.size / 4


def test_unknown_column_is_an_error(tmp_path: Path) -> None:
    write_segments(tmp_path, "x", all_types_table(10), 1, 1)
    with pytest.raises(StorageError):
        SegmentReader(tmp_path / "x_0.dat").read(["nope"])


def test_zone_map_values(tmp_path: Path) -> None:
    table = pa.table({
        "k": pa.array([1, 2, 3, 4], pa.int64()),
        "s": pa.array(["pear", None, "apple", "zoo"]),
        "n": pa.nulls(4, pa.float64()),
        "d": pa.array([dt.date(2020, 1, 2), dt.date(2019, 5, 1), None, dt.date(2021, 1, 1)]),
        "m": pa.array([Decimal("1.50"), Decimal("-2.25"), None, None], pa.decimal128(10, 2)),
    })
    write_segments(tmp_path, "z", table, 1, 1)
    reader = SegmentReader(tmp_path / "z_0.dat")
    zm = reader.zone_map("s")
    assert (zm.min, zm.max, zm.has_null, zm.has_not_null) == ("apple", "zoo", True, True)
    zm = reader.zone_map("n")
    assert (zm.min, zm.max, zm.has_null, zm.has_not_null) == (None, None, True, False)
    zm = reader.zone_map("d")
    assert (zm.min, zm.max) == (dt.date(2019, 5, 1), dt.date(2021, 1, 1))
    zm = reader.zone_map("m")
    assert (zm.min, zm.max, zm.has_null) == (Decimal("-2.25"), Decimal("1.50"), True)
    assert reader.zone_map("k") == type(zm)(1, 4, False, True)


def _page_encodings(reader: SegmentReader, column: str) -> set[int]:
    from storage.segment.page import read_page
    oi = reader._ordinal_index(column)
    data = (reader.path).read_bytes()
    return {read_page(memoryview(data)[o:o + s], "t")[0].encoding for o, s in zip(oi.offsets, oi.sizes, strict=True)}


def test_encodings_fit_the_data(tmp_path: Path) -> None:
    from storage.segment.page import PageEncoding as E
    n = 50_000
    rng = np.random.default_rng(5)
    table = pa.table({
        "sorted": pa.array(np.arange(n, dtype=np.int64) * 1000 + 10**15),  # delta: constant step
        "narrow": pa.array(rng.integers(10**12, 10**12 + 200, n)),  # frame of reference, 1-byte lanes
        "wide": pa.array(rng.integers(-2**62, 2**62, n)),  # plain
        "dec": pa.array([Decimal(int(x)).scaleb(-2) for x in rng.integers(0, 10**6, n)], pa.decimal128(15, 2)),
        "city": pa.array([f"city{x}" for x in rng.integers(0, 30, n)]),
        "token": pa.array([f"tok{x}" for x in rng.integers(0, 10**12, n)]),
    })
    write_segments(tmp_path, "e", table, 1, 1)
    r = SegmentReader(tmp_path / "e_0.dat")
    assert _page_encodings(r, "sorted") == {E.DELTA}
    assert _page_encodings(r, "narrow") == {E.FOR}
    assert _page_encodings(r, "wide") == {E.PLAIN}
    assert _page_encodings(r, "dec") == {E.FOR}
    assert r._columns["city"].dictionary is not None and _page_encodings(r, "city") == {E.FOR}
    assert r._columns["token"].dictionary is None and _page_encodings(r, "token") == {E.PLAIN_BINARY}
    assert r._columns["sorted"].data.size < n  # 0-width deltas: header-only pages
    assert_same(r.read(table.column_names), table)


@pytest.mark.parametrize("codec", ["ZSTD", "ZLIB", "SNAPPY", "NONE"])
def test_every_type_round_trips_under_each_codec(tmp_path: Path, codec: str) -> None:
    from storage.segment.page import FLAG_HAS_NULLS, FLAG_SNAPPY, FLAG_ZLIB, FLAG_ZSTD, HEADER
    from storage.segment.writer import SegmentIndexConfig

    table = all_types_table(20_000)
    (tmp_path / "lz4").mkdir()
    (tmp_path / codec).mkdir()
    lz4 = write_segments(tmp_path / "lz4", "seg", table, 1, 1)
    infos = write_segments(tmp_path / codec, "seg", table, 1, 1, indexes=SegmentIndexConfig(compression=codec))
    assert_same(read_all(tmp_path / codec, infos), table)
    # the data pages carry the codec's flag and the file size differs from LZ4's
    path = tmp_path / codec / infos[0].file_name
    oi = SegmentReader(path)._ordinal_index("i64_sorted")
    flags = HEADER.unpack_from(path.read_bytes()[int(oi.offsets[0]):])[2]
    assert flags & ~FLAG_HAS_NULLS == {"ZSTD": FLAG_ZSTD, "ZLIB": FLAG_ZLIB, "SNAPPY": FLAG_SNAPPY, "NONE": 0}[codec]
    assert infos[0].data_size != lz4[0].data_size


def test_footer_column_json_names_every_field() -> None:
    """The footer's column entries are written by hand (not dataclasses.asdict): a field added to ColumnMeta
    must be added there too, and decode must read back what encode wrote."""
    import dataclasses

    from storage.segment.format import ColumnMeta, Footer, PagePointer, _column_json

    p = [PagePointer(10 + i * 10, i + 1) for i in range(6)]
    full = ColumnMeta("c", 3, p[0], p[1], p[2], p[3], p[4], p[5])
    assert _column_json(full) == dataclasses.asdict(full)
    bare = ColumnMeta("c", 3, p[0], p[1], p[2])
    assert _column_json(bare) == {k: v for k, v in dataclasses.asdict(bare).items()
                                  if k not in ("bloom_filter", "bitmap_index")}
    schema = pa.schema([("c", pa.int32())])
    footer = Footer(schema, 7, 1, 1, 1, p[5], [full])
    encoded = footer.encode()
    assert Footer.decode(encoded, 10_000).columns == [full]
