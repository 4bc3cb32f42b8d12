"""A damaged segment file raises CorruptDataError (naming the file); it never yields wrong data."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from storage.errors import CorruptDataError
from storage.predicate import ColumnPredicate as P
from storage.predicate import Op
from storage.segment.format import TAIL_SIZE
from storage.segment.reader import SegmentReader
from storage.segment.writer import write_segments


def small_table(n: int) -> pa.Table:
    rng = np.random.default_rng(n)
    return pa.table({
        "k": pa.array(np.sort(rng.integers(0, 1000, n))),
        "s": pa.array([f"s{x % 7}" if x % 5 else None for x in range(n)]),  # dictionary-encoded
        "t": pa.array([f"token-{x}" for x in rng.integers(0, 10**9, n)]),  # plain strings
        "m": pa.array([Decimal(int(x)).scaleb(-2) for x in rng.integers(-10**6, 10**6, n)], pa.decimal128(10, 2)),
        "f": pa.array(rng.random(n)),
    })


def use_everything(path: Path) -> pa.Table:
    """Open and exercise every part: footer, short key index, zone maps, ordinal indexes, pages."""
    reader = SegmentReader(path)
    for column in reader.schema.names:
        reader.zone_map(column)
    reader.row_ranges([P("k", Op.GE, (10,)), P("s", Op.IS_NOT_NULL), P("t", Op.NE, ("x",)),
                       P("m", Op.LT, (Decimal("5.00"),)), P("f", Op.LE, (2.0,))])
    return reader.read(reader.schema.names)


def flip(path: Path, offset: int, original: bytes) -> None:
    data = bytearray(original)
    data[offset] ^= 0x10
    path.write_bytes(bytes(data))


def assert_detects(path: Path, offsets, table: pa.Table) -> None:
    original = path.read_bytes()
    for offset in offsets:
        flip(path, offset, original)
        try:
            out = use_everything(path)
        except CorruptDataError as e:
            assert path.name in e.message, e.message
            continue
        assert out.equals(table), f"flipped byte {offset} returned wrong data"
    path.write_bytes(original)


def test_every_byte_of_a_small_segment(tmp_path: Path) -> None:
    table = small_table(300)
    write_segments(tmp_path, "c", table, 1, 1)
    path = tmp_path / "c_0.dat"
    assert use_everything(path).equals(table)
    assert_detects(path, range(path.stat().st_size), table)


def test_sampled_bytes_of_a_multi_page_segment(tmp_path: Path) -> None:
    table = small_table(30_000)
    write_segments(tmp_path, "c", table, 1, 1)
    path = tmp_path / "c_0.dat"
    size = path.stat().st_size
    rng = np.random.default_rng(0)
    offsets = set(rng.integers(0, size, 150).tolist()) | set(range(size - TAIL_SIZE - 40, size))
    assert_detects(path, sorted(offsets), table)


def test_flipped_data_page_byte_raises(tmp_path: Path) -> None:
    table = small_table(30_000)
    write_segments(tmp_path, "c", table, 1, 1)
    path = tmp_path / "c_0.dat"
    reader = SegmentReader(path)
    meta = reader._columns["t"]
    original = path.read_bytes()
    flip(path, meta.data.offset + meta.data.size // 2, original)
    reader = SegmentReader(path)  # footer intact: opening works
    assert reader.read(["k", "m"]).equals(table.select(["k", "m"]))
    with pytest.raises(CorruptDataError, match="c_0.dat.*column t.*checksum"):
        reader.read(["t"])


def test_flipped_footer_byte_raises_on_open(tmp_path: Path) -> None:
    write_segments(tmp_path, "c", small_table(1000), 1, 1)
    path = tmp_path / "c_0.dat"
    original = path.read_bytes()
    flip(path, len(original) - TAIL_SIZE - 10, original)
    with pytest.raises(CorruptDataError, match="footer checksum"):
        SegmentReader(path)


@pytest.mark.parametrize("cut", [1, 12, 100, 4000])
def test_truncated_file_raises(tmp_path: Path, cut: int) -> None:
    write_segments(tmp_path, "c", small_table(1000), 1, 1)
    path = tmp_path / "c_0.dat"
    path.write_bytes(path.read_bytes()[:-cut])
    with pytest.raises(CorruptDataError):
        use_everything(path)


def test_empty_and_foreign_files_raise(tmp_path: Path) -> None:
    for content in (b"", b"PAR1" + b"\x00" * 100):
        path = tmp_path / "x.dat"
        path.write_bytes(content)
        with pytest.raises(CorruptDataError):
            SegmentReader(path)
