"""Segment writer: turns a key-sorted Arrow table into one or more immutable segment files.

Columns are written one after another (all data pages of a column are contiguous, so a full scan of a
column is one sequential read), each followed by its ordinal index, zone map and dictionary pages and, when the table asks for them
(`SegmentIndexConfig`), its page bloom filters and bitmap index; then
the short key index and the footer (format.py). A file is written under a temporary name, fsync'ed and
renamed, so "<prefix>_<n>.dat" is either complete or absent.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa

from storage.errors import StorageError
from storage.segment.bitmap_index import BitmapIndexWriter, supports_bitmap_index
from storage.segment.bloom_filter import BloomFilterIndexWriter
from storage.segment.encoding import check_supported, make_encoder
from storage.segment.format import MAGIC, ColumnMeta, Footer, PagePointer, write_tail
from storage.segment.ordinal_index import encode_ordinal_index
from storage.segment.schema_view import with_uids
from storage.segment.short_key_index import build_short_key_page, short_key_columns
from storage.segment.zone_map import build_zone_maps, encode_zone_map_page

DEFAULT_MAX_SEGMENT_BYTES = 256 * 1024 * 1024


@dataclass(frozen=True)
class SegmentIndexConfig:
    """The optional per-column indexes of the segments written: `bloom_filter` maps a column to the false
    positive probability of its page bloom filters, `bitmap` names the columns that get a bitmap index.
    Columns the data does not hold are ignored (a rollup holds a subset), and so is a bitmap index on a
    type it does not support."""

    bloom_filter: Mapping[str, float] = field(default_factory=dict)
    bitmap: frozenset[str] = frozenset()
    compression: str = "LZ4"  # the data pages' codec (the table's `compression` property)
    column_ids: Mapping[str, int] = field(default_factory=dict)  # the catalog's unique id of each column

    def __bool__(self) -> bool:
        return bool(self.bloom_filter) or bool(self.bitmap) or self.compression != "LZ4" or bool(self.column_ids)


@dataclass(frozen=True)
class SegmentInfo:
    file_name: str  # base name of the file written in `directory`
    num_rows: int
    data_size: int  # bytes on disk


def _row_sizes(data: pa.Table) -> np.ndarray:
    """Uncompressed bytes per row (fixed widths + string lengths + 4 for their offsets)."""
    sizes = np.zeros(data.num_rows, dtype=np.int64)
    for col in data.columns:
        if pa.types.is_string(col.type):
            lengths = [np.diff(np.frombuffer(c.buffers()[1], np.int32, count=len(c) + 1, offset=c.offset * 4))
                       for c in col.chunks]
            sizes += np.concatenate(lengths) + 4 if lengths else 0
        else:
            sizes += max(col.type.bit_width // 8, 1)
    return sizes


def _split(data: pa.Table, max_segment_bytes: int) -> list[tuple[int, int]]:
    """Row ranges of the segments. The budget is checked against the uncompressed size, which the
    encoded, LZ4-compressed file practically never exceeds (metadata aside)."""
    cum = np.cumsum(_row_sizes(data))
    if cum[-1] <= max_segment_bytes:
        return [(0, data.num_rows)]
    out, start = [], 0
    while start < data.num_rows:
        before = int(cum[start - 1]) if start else 0
        end = max(int(np.searchsorted(cum, before + max_segment_bytes, side="right")), start + 1)
        out.append((start, end))
        start = end
    return out


def write_segments(directory: Path, prefix: str, data: pa.Table, num_key_columns: int,
                   num_short_key_columns: int, max_segment_bytes: int = DEFAULT_MAX_SEGMENT_BYTES,
                   indexes: SegmentIndexConfig | None = None) -> list[SegmentInfo]:
    """Write `data` (already sorted by its first `num_key_columns` columns) as "<prefix>_<n>.dat" files,
    with the bloom filter / bitmap indexes `indexes` asks for."""
    if data.num_rows == 0:
        return []
    if not 0 <= num_key_columns <= data.num_columns:
        raise StorageError(f"num_key_columns {num_key_columns} out of range for {data.num_columns} columns")
    for f in data.schema:
        check_supported(f.type)
    directory = Path(directory)
    infos = []
    for n, (start, end) in enumerate(_split(data, max_segment_bytes)):
        name = f"{prefix}_{n}.dat"
        size = write_segment(directory / name, data.slice(start, end - start), num_key_columns,
                             num_short_key_columns, indexes)
        infos.append(SegmentInfo(name, end - start, size))
    # the folder is a transaction's staging folder: its entries need not survive a crash (an unpublished
    # load is aborted), the files are renamed into their tablet's folder and that folder is synced
    # (StorageEngine.install_rowsets); each file's own content is synced as it is written
    return infos


def write_segment(path: Path, data: pa.Table, num_key_columns: int, num_short_key_columns: int,
                  indexes: SegmentIndexConfig | None = None) -> int:
    """Write one segment file; returns its size in bytes."""
    if indexes is not None and indexes.column_ids:
        data = with_uids(data, dict(indexes.column_ids))  # read back by id after renames (schema_view)
    tmp = path.with_name(path.name + ".tmp")
    try:
        size = _write_file(tmp, data, num_key_columns, num_short_key_columns, indexes or SegmentIndexConfig())
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    os.replace(tmp, path)
    return size


def _write_file(tmp: Path, data: pa.Table, num_key_columns: int, num_short_key_columns: int,
                indexes: SegmentIndexConfig) -> int:
    with open(tmp, "wb", buffering=1 << 20) as f:
        f.write(MAGIC)
        pos = len(MAGIC)

        def put(blob: bytes) -> PagePointer:
            nonlocal pos
            f.write(blob)
            ptr = PagePointer(pos, len(blob))
            pos += len(blob)
            return ptr

        columns = []
        arrays = [col.combine_chunks() for col in data.columns]
        for fld, arr in zip(data.schema, arrays, strict=True):
            enc = make_encoder(arr)
            enc.codec = indexes.compression
            bounds = enc.page_bounds()
            data_start = pos
            first_rows, offsets, sizes = [], [], []
            for start, end in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
                ptr = put(enc.encode_page(start, end))
                first_rows.append(start)
                offsets.append(ptr.offset)
                sizes.append(ptr.size)
            data_ptr = PagePointer(data_start, pos - data_start)
            ordinal = put(encode_ordinal_index(first_rows, offsets, sizes))
            zone_map = put(encode_zone_map_page(build_zone_maps(arr, bounds)))
            dictionary = put(enc.dictionary_page) if enc.dictionary_page is not None else None
            bloom = bitmap = None
            fpp = indexes.bloom_filter.get(fld.name)
            if fpp is not None:
                bf = BloomFilterIndexWriter(fpp)
                bf.add_column(arr, bounds)
                bloom = put(bf.finish())
            if fld.name in indexes.bitmap and supports_bitmap_index(fld.type):
                bitmap = BitmapIndexWriter(arr, fld.name).write(put)
            columns.append(ColumnMeta(fld.name, len(first_rows), data_ptr, ordinal, zone_map, dictionary,
                                      bloom, bitmap))
        sk_count = short_key_columns(data.schema, num_key_columns, num_short_key_columns)
        sk_page = build_short_key_page(arrays[:sk_count], data.num_rows) if sk_count else None
        short_key = put(sk_page) if sk_page is not None else None
        footer = Footer(data.schema, data.num_rows, num_key_columns, num_short_key_columns,
                        sk_count if short_key else 0, short_key, columns)
        pos += write_tail(f, footer)
        f.flush()
        os.fsync(f.fileno())
    return pos
