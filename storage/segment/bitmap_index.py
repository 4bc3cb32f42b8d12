"""Bitmap index: a segment column's sorted dictionary of distinct values + one roaring bitmap of row ids
per value, and one for the NULL rows (Doris BitmapIndexWriter / BitmapIndexReader).

On disk, a run of pages (page.py, crc32 each) written through the segment writer's `put`:
    dictionary pages: Arrow IPC stream of one column "v", the sorted distinct values (LZ4 via build_page);
                      header.base = ordinal of the page's first value
    bitmap pages:     u32 end offsets[count] | serialized roaring bitmaps, ordinal order; header.base = first ordinal
    meta page:        u64 num_rows | u64 num_values | u32 num_dict_pages | u32 num_bitmap_pages | u32 null_len
                      | i64 dict (first ordinal, offset, size)[num_dict_pages]
                      | i64 bitmap (first ordinal, offset, size)[num_bitmap_pages]
                      | null bitmap (serialized roaring) | Arrow IPC stream of "v" = each dict page's first value
The meta page's pointer is what the segment footer records. Readers load the meta page up front and the
dictionary / bitmap pages only when a predicate needs them: the first values (Doris's "value index")
tell which dictionary page a value falls in, the first ordinals which bitmap page holds a bitmap.
"""

from __future__ import annotations

import array
import bisect
import functools
import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyroaring import BitMap

from storage.errors import CorruptDataError, StorageError
from storage.predicate import ColumnPredicate, Op
from storage.segment.format import PagePointer
from storage.segment.page import PageEncoding, build_page, read_page
from storage.segment.zone_map import probe_scalars, to_scalar

PAGE_BYTES = 64 * 1024  # target size of a dictionary or bitmap page, like data pages
_META = struct.Struct("<QQIII")


def supports_bitmap_index(t: pa.DataType) -> bool:
    """doris-reference §8.5: TINYINT..BIGINT, LARGEINT and DECIMAL (decimal128), CHAR/VARCHAR (string),
    DATE, DATETIME, BOOL. Not FLOAT, DOUBLE, STRING-as-blob or complex types."""
    return (pa.types.is_integer(t) or pa.types.is_decimal128(t) or pa.types.is_string(t)
            or pa.types.is_date32(t) or pa.types.is_timestamp(t) or pa.types.is_boolean(t))


def check_bitmap_index_type(t: pa.DataType, column: str = "") -> None:
    if not supports_bitmap_index(t):
        name = f" of column {column}" if column else ""
        raise StorageError(f"bitmap index is not supported on type {t}{name}")


def _ipc(values: pa.Array) -> bytes:
    batch = pa.record_batch({"v": values})
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, batch.schema) as w:
        w.write_batch(batch)
    return sink.getvalue().to_pybytes()


def _read_ipc(body: bytes | memoryview, arrow_type: pa.DataType, count: int) -> pa.Array:
    try:
        table = pa.ipc.open_stream(pa.py_buffer(body)).read_all()
    except pa.ArrowException as e:
        raise CorruptDataError(f"malformed bitmap index dictionary: {e}") from e
    if table.schema.names != ["v"] or table.schema.field("v").type != arrow_type or table.num_rows != count:
        raise CorruptDataError("bitmap index dictionary does not match the column")
    return table.column("v").combine_chunks()


def _bitmap_of(rows: np.ndarray) -> BitMap:
    """Rows (sorted uint32) as a bitmap: array.array('I') takes pyroaring's bulk path (~7x BitMap(ndarray))."""
    return BitMap(array.array("I", rows.astype(np.uint32, copy=False).tobytes()))


def _chunks(sizes: np.ndarray, target: int) -> np.ndarray:
    """Start indexes of consecutive groups of items whose sizes sum to about `target` (at least one each)."""
    starts = [0]
    # one Python step per page, not per item: jump with searchsorted over the running sum
    cum = np.cumsum(sizes)
    while True:
        acc = int(cum[starts[-1] - 1]) if starts[-1] else 0
        nxt = max(int(np.searchsorted(cum, acc + target, side="right")), starts[-1] + 1)
        if nxt >= len(sizes):
            return np.array(starts, np.int64)
        starts.append(nxt)


class BitmapIndexWriter:
    """Builds the index of one segment column in memory (vectorized), then writes its pages."""

    def __init__(self, arr: pa.Array | pa.ChunkedArray, column: str = "") -> None:
        if isinstance(arr, pa.ChunkedArray):
            arr = arr.combine_chunks()
        if pa.types.is_dictionary(arr.type):
            arr = arr.dictionary_decode()
        check_bitmap_index_type(arr.type, column)
        if len(arr) >= 1 << 32:
            raise StorageError("bitmap index: more than 2^32 rows in a segment")
        self.type = arr.type
        self.num_rows = len(arr)
        valid = arr.is_valid().to_numpy(zero_copy_only=False) if arr.null_count else None
        self.null_bitmap = _bitmap_of(np.flatnonzero(~valid)) if valid is not None else BitMap()
        rows = np.flatnonzero(valid) if valid is not None else np.arange(len(arr))
        values = pc.drop_null(arr) if valid is not None else arr
        # distinct values sorted once; each row's value becomes its ordinal in that sorted dictionary
        encoded = pc.dictionary_encode(values)
        order = pc.sort_indices(encoded.dictionary).to_numpy()
        rank = np.empty(len(order), np.int64)
        rank[order] = np.arange(len(order))
        self.dictionary: pa.Array = encoded.dictionary.take(pa.array(order, pa.int64()))
        codes = rank[encoded.indices.to_numpy(zero_copy_only=False)] if len(values) else np.zeros(0, np.int64)
        by_code = np.argsort(codes, kind="stable")  # stable: row ids stay ascending within a value
        grouped = rows[by_code]
        ends = np.cumsum(np.bincount(codes, minlength=len(order)))
        starts = ends - np.bincount(codes, minlength=len(order))
        self.bitmaps = [_bitmap_of(grouped[s:e]) for s, e in zip(starts.tolist(), ends.tolist(), strict=True)]

    @property
    def num_values(self) -> int:
        return len(self.dictionary)

    def _dict_sizes(self) -> np.ndarray:
        if pa.types.is_string(self.type):
            return pc.binary_length(self.dictionary).to_numpy(zero_copy_only=False).astype(np.int64) + 4
        return np.full(self.num_values, max(self.type.bit_width // 8, 1), np.int64)

    def write(self, put: Callable[[bytes], PagePointer]) -> PagePointer:
        """Write dictionary pages, bitmap pages and the meta page via `put` (which appends a blob to the
        file and returns where it landed); returns the meta page's pointer."""
        n = self.num_values
        dict_meta: list[tuple[int, int, int]] = []
        bitmap_meta: list[tuple[int, int, int]] = []
        firsts: list[int] = []
        if n:
            d_starts = _chunks(self._dict_sizes(), PAGE_BYTES)
            for s, e in zip(d_starts.tolist(), [*d_starts[1:].tolist(), n], strict=True):
                ptr = put(build_page(PageEncoding.INDEX, e - s, _ipc(self.dictionary.slice(s, e - s)), base=s))
                dict_meta.append((s, ptr.offset, ptr.size))
                firsts.append(s)
            blobs = [bm.serialize() for bm in self.bitmaps]
            b_starts = _chunks(np.array([len(b) for b in blobs], np.int64), PAGE_BYTES)
            for s, e in zip(b_starts.tolist(), [*b_starts[1:].tolist(), n], strict=True):
                ends = np.cumsum([len(b) for b in blobs[s:e]], dtype=np.int64)
                body = ends.astype("<u4").tobytes() + b"".join(blobs[s:e])
                ptr = put(build_page(PageEncoding.INDEX, e - s, body, base=s))
                bitmap_meta.append((s, ptr.offset, ptr.size))
        null_blob = self.null_bitmap.serialize()
        first_values = self.dictionary.take(pa.array(firsts, pa.int64()))
        body = (_META.pack(self.num_rows, n, len(dict_meta), len(bitmap_meta), len(null_blob))
                + np.array(dict_meta, np.int64).reshape(-1, 3).T.astype("<i8").tobytes()
                + np.array(bitmap_meta, np.int64).reshape(-1, 3).T.astype("<i8").tobytes()
                + null_blob + _ipc(first_values))
        return put(build_page(PageEncoding.INDEX, n, body))


def encode_bitmap_index(arr: pa.Array | pa.ChunkedArray, start: int = 0) -> tuple[bytes, PagePointer]:
    """The index's pages as one blob placed at file offset `start`, and its meta page pointer."""
    parts: list[bytes] = []
    pos = start

    def put(blob: bytes) -> PagePointer:
        nonlocal pos
        parts.append(blob)
        pos += len(blob)
        return PagePointer(pos - len(blob), len(blob))

    meta = BitmapIndexWriter(arr).write(put)
    return b"".join(parts), meta


@functools.lru_cache(maxsize=1024)
def _probe_value(arrow_type: pa.DataType, value: Any, kind: type) -> Any:
    """`value` in the numpy form BitmapIndexReader._np gives the column's values; None if the column type
    cannot hold it exactly. Memoised (keyed with the Python type: 1, 1.0 and True hash alike): a scan probes
    the same value on every segment."""
    s = to_scalar(value, arrow_type)
    return None if s is None else pa.array([s], arrow_type).to_numpy(zero_copy_only=False)[0]


@dataclass(frozen=True)
class _Pages:
    first: np.ndarray  # first ordinal of each page
    offsets: np.ndarray
    sizes: np.ndarray


class BitmapIndexReader:
    """Answers column predicates with exact row-id bitmaps. `read(ptr)` returns the raw bytes of a page."""

    def __init__(self, read: Callable[[PagePointer], bytes | memoryview], meta: PagePointer,
                 arrow_type: pa.DataType, where: str = "bitmap index") -> None:
        self._read = read
        self.type = arrow_type
        self.where = where
        header, body = self._page(meta)
        body = memoryview(body)
        try:
            num_rows, n, nd, nb, null_len = _META.unpack_from(body)
            pos = _META.size
            d = np.frombuffer(body, "<i8", count=3 * nd, offset=pos).reshape(3, nd)
            pos += 24 * nd
            b = np.frombuffer(body, "<i8", count=3 * nb, offset=pos).reshape(3, nb)
            pos += 24 * nb
            self.null_bitmap = BitMap.deserialize(bytes(body[pos:pos + null_len]))
            pos += null_len
        except (struct.error, ValueError) as e:
            raise self._corrupt(f"malformed meta page: {e}") from e
        self.num_rows, self.num_values = int(num_rows), int(n)
        self._dict_pages = _Pages(d[0].astype(np.int64), d[1], d[2])
        self._bitmap_pages = _Pages(b[0].astype(np.int64), b[1], b[2])
        try:
            first_values = _read_ipc(body[pos:], arrow_type, nd)
        except CorruptDataError as e:
            raise self._corrupt(e.message) from e
        for p in (self._dict_pages, self._bitmap_pages):
            ok = (header.num_rows == n and (len(p.first) > 0) == (n > 0)
                  and (not len(p.first) or (p.first[0] == 0 and bool(np.all(np.diff(p.first) > 0))
                                            and int(p.first[-1]) < n)))
            if not ok:
                raise self._corrupt("inconsistent meta page")
        if len(self.null_bitmap) and self.null_bitmap.max() >= self.num_rows:
            raise self._corrupt("null bitmap beyond the segment")
        self._first_values = self._np(first_values)
        self._bitmap_first: list[int] = self._bitmap_pages.first.tolist()  # for bisect (no numpy per lookup)
        self._dict_cache: dict[int, np.ndarray] = {}
        self._bitmap_cache: dict[int, list[BitMap]] = {}

    @classmethod
    def from_buffer(cls, buf: bytes | memoryview, meta: PagePointer, arrow_type: pa.DataType,
                    start: int = 0) -> BitmapIndexReader:
        """A reader over the blob of `encode_bitmap_index` (placed at file offset `start`)."""
        mv = memoryview(buf)
        return cls(lambda p: mv[p.offset - start:p.end - start], meta, arrow_type)

    # ------------------------------------------------------------------ loading

    def _corrupt(self, what: str) -> CorruptDataError:
        return CorruptDataError(f"corrupt segment {self.where}: {what}")

    def _page(self, ptr: PagePointer):
        buf = memoryview(self._read(ptr))
        if len(buf) != ptr.size:
            raise self._corrupt("truncated page")
        header, body = read_page(buf, self.where)
        if header.encoding != PageEncoding.INDEX:
            raise self._corrupt("unexpected page type")
        return header, body

    def _np(self, values: pa.Array) -> np.ndarray:
        """Values in a numpy form whose order is the dictionary's (ints/dates/timestamps native, strings
        and decimals as Python objects compared by Python, which orders str by code point = UTF-8 bytes)."""
        return values.to_numpy(zero_copy_only=False)

    def _page_range(self, pages: _Pages, i: int) -> tuple[int, int]:
        end = int(pages.first[i + 1]) if i + 1 < len(pages.first) else self.num_values
        return int(pages.first[i]), end

    def _dict_page(self, i: int) -> np.ndarray:
        vals = self._dict_cache.get(i)
        if vals is None:
            s, e = self._page_range(self._dict_pages, i)
            header, body = self._page(PagePointer(int(self._dict_pages.offsets[i]), int(self._dict_pages.sizes[i])))
            if header.base != s or header.num_rows != e - s:
                raise self._corrupt("dictionary page out of place")
            try:
                vals = self._np(_read_ipc(body, self.type, e - s))
            except CorruptDataError as ex:
                raise self._corrupt(ex.message) from ex
            self._dict_cache[i] = vals
        return vals

    def _bitmap_page(self, i: int) -> list[BitMap]:
        bms = self._bitmap_cache.get(i)
        if bms is None:
            s, e = self._page_range(self._bitmap_pages, i)
            ptr = PagePointer(int(self._bitmap_pages.offsets[i]), int(self._bitmap_pages.sizes[i]))
            header, body = self._page(ptr)
            count = e - s
            if header.base != s or header.num_rows != count or len(body) < 4 * count:
                raise self._corrupt("bitmap page out of place")
            ends = np.frombuffer(body, "<u4", count=count).astype(np.int64)
            starts = np.concatenate([[0], ends[:-1]])
            data = bytes(body[4 * count:])
            if np.any(ends < starts) or (count and int(ends[-1]) != len(data)):
                raise self._corrupt("bitmap page offsets")
            try:
                bms = [BitMap.deserialize(data[a:b]) for a, b in zip(starts.tolist(), ends.tolist(), strict=True)]
            except (ValueError, OverflowError) as ex:
                raise self._corrupt(f"bitmap: {ex}") from ex
            if any(len(bm) and bm.max() >= self.num_rows for bm in bms):
                raise self._corrupt("bitmap beyond the segment")
            self._bitmap_cache[i] = bms
        return bms

    def bitmap(self, ordinal: int) -> BitMap:
        """Rows holding the dictionary's `ordinal`-th value."""
        i = bisect.bisect_right(self._bitmap_first, ordinal) - 1
        return self._bitmap_page(i)[ordinal - self._bitmap_first[i]]

    def _bitmaps(self, lo: int, hi: int) -> list[BitMap]:
        """The bitmaps of ordinals [lo, hi): slices of the (cached) bitmap pages, one lookup per page
        rather than one per ordinal (a range predicate unions many values on every segment)."""
        first = self._bitmap_first
        i = bisect.bisect_right(first, lo) - 1
        out: list[BitMap] = []
        while lo < hi:
            page = self._bitmap_page(i)
            base = first[i]
            end = min(hi, base + len(page))
            out.extend(page[lo - base:end - base])
            lo = end
            i += 1
        return out

    def _union(self, lo: int, hi: int) -> BitMap:
        """Rows whose value's ordinal is in [lo, hi); the complement side when that is the shorter list."""
        if lo >= hi:
            return BitMap()
        if hi - lo > self.num_values // 2 + 1:
            return self.not_null_rows() - self._union(0, lo) - self._union(hi, self.num_values)
        if hi - lo == 1:
            return self.bitmap(lo)
        return BitMap.union(*self._bitmaps(lo, hi))

    def not_null_rows(self) -> BitMap:
        rows = BitMap(range(self.num_rows))
        return rows - self.null_bitmap if len(self.null_bitmap) else rows

    def _bound(self, value: Any, side: str) -> int:
        """Ordinal of the first dictionary value >= value (side="left") or > value (side="right")."""
        if not self.num_values:
            return 0
        p = int(np.searchsorted(self._first_values, value, side=side)) - 1
        if p < 0:
            return 0
        vals = self._dict_page(p)
        return int(self._dict_pages.first[p]) + int(np.searchsorted(vals, value, side=side))

    def _probe(self, value: Any) -> Any:
        """`value` as the column type, in the dictionary's numpy form; None if not representable."""
        return _probe_value(self.type, value, type(value))

    def _eq(self, value: Any) -> BitMap:
        lo = self._bound(value, "left")
        if lo < self.num_values and self._dict_page_value(lo) == value:
            return self.bitmap(lo)
        return BitMap()

    def _dict_page_value(self, ordinal: int) -> Any:
        p = int(np.searchsorted(self._dict_pages.first, ordinal, side="right")) - 1
        return self._dict_page(p)[ordinal - int(self._dict_pages.first[p])]

    def can_evaluate(self, pred: ColumnPredicate) -> bool:
        """True when `rows(pred)` is exact: every value is representable in the column type."""
        return all(s is not None or v is None
                   for v, s in zip(pred.values, probe_scalars(pred.values, self.type), strict=True))

    def rows(self, pred: ColumnPredicate) -> BitMap:
        """Row ids satisfying `pred` (SQL semantics: NULL rows satisfy only IS NULL). A value the column
        cannot hold exactly (see can_evaluate) gives all rows: the caller's exact filter then decides."""
        op = pred.op
        if op == Op.IS_NULL:
            return BitMap(self.null_bitmap)
        if op == Op.IS_NOT_NULL:
            return self.not_null_rows()
        if not self.can_evaluate(pred):
            return BitMap(range(self.num_rows))
        if op in (Op.IN, Op.NOT_IN):
            if op == Op.NOT_IN and any(v is None for v in pred.values):
                return BitMap()  # x NOT IN (.., NULL) is never true
            probes = {self._probe(v) for v in pred.values if v is not None}
            hit = BitMap.union(BitMap(), *(self._eq(p) for p in probes))
            return hit if op == Op.IN else self.not_null_rows() - hit
        if pred.value is None:
            return BitMap()  # comparisons with NULL are never true
        v = self._probe(pred.value)
        if op == Op.EQ:
            return self._eq(v)
        if op == Op.NE:
            return self.not_null_rows() - self._eq(v)
        span = self._ordinals(op, v)
        if span is None:
            raise StorageError(f"bitmap index cannot evaluate {op}")
        return self._union(*span)

    def _ordinals(self, op: Op, v: Any) -> tuple[int, int] | None:
        """The dictionary ordinals [lo, hi) a comparison with the probe `v` selects; None for other ops."""
        if op == Op.LT:
            return 0, self._bound(v, "left")
        if op == Op.LE:
            return 0, self._bound(v, "right")
        if op == Op.GT:
            return self._bound(v, "right"), self.num_values
        if op == Op.GE:
            return self._bound(v, "left"), self.num_values
        return None

    def row_ids(self, pred: ColumnPredicate, evaluable: bool | None = None) -> np.ndarray:
        """rows(pred) as sorted int64 row ids. A range over a few values (up to half the dictionary)
        concatenates its bitmaps' row arrays (disjoint: a row holds one value) and sorts them, ~2x cheaper
        than a roaring union of many small bitmaps and its conversion to numpy. `evaluable`: can_evaluate(pred)
        when the caller already knows it."""
        if (pred.op in (Op.LT, Op.LE, Op.GT, Op.GE) and pred.values and pred.value is not None
                and (self.can_evaluate(pred) if evaluable is None else evaluable)):
            lo, hi = self._ordinals(pred.op, self._probe(pred.value))  # type: ignore[misc]
            if 1 < hi - lo <= self.num_values // 2 + 1:
                bitmaps = [b for b in self._bitmaps(lo, hi) if b]
                if not bitmaps:
                    return np.empty(0, np.int64)
                ids = np.concatenate([np.frombuffer(b.to_array(), np.uint32) for b in bitmaps])
                ids.sort()  # on the 4-byte ids: ~1.5x faster than after widening
                return ids.astype(np.int64)
        rows = self.rows(pred)
        if not rows:
            return np.empty(0, np.int64)
        return np.frombuffer(rows.to_array(), np.uint32).astype(np.int64)
