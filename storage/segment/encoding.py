"""Column data encodings: split a column into ~64 KB pages, encode each page, decode pages back to Arrow.

Integers (and dates, timestamps, bools, dictionary codes, decimals whose unscaled value fits in 64 bits)
use frame-of-reference or delta packing into 0/1/2/4/8-byte lanes, so decoding is one numpy pass per
page; floats and wide decimals are plain. Strings use a column-wide dictionary when it is much smaller
than the plain form, otherwise packed lengths + bytes. Null slots hold the previous value (keeps FOR and
delta ranges tight) and the page carries a validity bitmap. Decoders write every page into one
preallocated column-sized buffer, so a scan returns one contiguous Arrow array per column.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from storage.errors import CorruptDataError, StorageError
from storage.segment.page import PageEncoding, PageHeader, build_page

PAGE_TARGET_BYTES = 64 * 1024
MAX_DICTIONARY_BYTES = 8 * 1024 * 1024
MAX_BINARY_CHUNK = (1 << 31) - 1  # int32 offsets of pa.string()

_UNSIGNED = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
_SIGNED = {1: np.int8, 2: np.int16, 4: np.int32, 8: np.int64}


def _int_dtype(t: pa.DataType) -> np.dtype | None:
    """The numpy lane of an integer-like Arrow type (what its data buffer holds)."""
    if pa.types.is_integer(t):
        return np.dtype(t.to_pandas_dtype())
    if pa.types.is_date32(t):
        return np.dtype(np.int32)
    if pa.types.is_timestamp(t) or pa.types.is_date64(t):
        return np.dtype(np.int64)
    if pa.types.is_boolean(t):
        return np.dtype(np.uint8)
    return None


def check_supported(t: pa.DataType) -> None:
    if _int_dtype(t) is None and not (pa.types.is_floating(t) or pa.types.is_decimal128(t)
                                      or pa.types.is_string(t)):
        raise StorageError(f"segment format does not support Arrow type {t}")


def _width_for(span: int) -> int:
    if span == 0:
        return 0
    for w in (1, 2, 4):
        if span < (1 << (8 * w)):
            return w
    return 8


def _as_unsigned(x: int, u: type) -> np.unsignedinteger:
    return u(x % (1 << (8 * np.dtype(u).itemsize)))


def pack_for(v: np.ndarray) -> tuple[int, int, bytes]:
    """Frame of reference: (width, base = min, values - base in `width`-byte lanes; none when width 0)."""
    if len(v) == 0:
        return 0, 0, b""
    u = _UNSIGNED[v.dtype.itemsize]
    lo, hi = int(v.min()), int(v.max())
    width = _width_for(hi - lo)
    if width == 0:
        return 0, lo, b""
    return width, lo, (v.view(u) - _as_unsigned(lo, u)).astype(_UNSIGNED[width]).tobytes()


def encode_ints(v: np.ndarray) -> tuple[PageEncoding, int, int, int, bytes]:
    """Pick PLAIN, FOR or DELTA for one page of integers: (encoding, width, base, base2, body)."""
    size = v.dtype.itemsize
    if len(v) == 0:
        return PageEncoding.PLAIN, size, 0, 0, b""
    lo, hi = int(v.min()), int(v.max())
    for_width = min(_width_for(hi - lo), size)
    if len(v) > 1 and for_width > 0:
        u = _UNSIGNED[size]
        d = np.diff(v.view(u)).view(_SIGNED[size])  # wrapping differences; decoding wraps back the same way
        delta_width, dlo, packed = pack_for(d)
        if delta_width < for_width:
            return PageEncoding.DELTA, delta_width, int(v[0]), dlo, packed
    if for_width == size:
        return PageEncoding.PLAIN, size, 0, 0, v.tobytes()
    width, base, packed = pack_for(v)
    return PageEncoding.FOR, width, base, 0, packed


def decode_ints(h: PageHeader, body: bytes | memoryview, pos: int, out: np.ndarray) -> None:
    """Decode an integer page's values (starting at byte `pos` of the body) into `out` (its length)."""
    n = len(out)
    u = _UNSIGNED[out.dtype.itemsize]
    out_u = out.view(u)
    try:
        if h.encoding == PageEncoding.PLAIN:
            out[:] = np.frombuffer(body, out.dtype, count=n, offset=pos)
        elif h.encoding == PageEncoding.FOR:
            if h.width == 0:
                out_u[:] = _as_unsigned(h.base, u)
            else:
                np.add(np.frombuffer(body, _UNSIGNED[h.width], count=n, offset=pos), _as_unsigned(h.base, u),
                       out=out_u)
        elif h.encoding == PageEncoding.DELTA:
            out_u[0] = _as_unsigned(h.base, u)
            if n > 1:
                if h.width == 0:
                    steps = np.full(n - 1, _as_unsigned(h.base2, u), dtype=u)
                else:
                    steps = np.frombuffer(body, _UNSIGNED[h.width], count=n - 1, offset=pos).astype(u)
                    steps += _as_unsigned(h.base2, u)
                np.cumsum(steps, dtype=u, out=out_u[1:])
                out_u[1:] += out_u[0]
        else:
            raise CorruptDataError(f"unknown integer page encoding {h.encoding}")
    except ValueError as e:  # frombuffer past the end: a header that lies about its body
        raise CorruptDataError(f"malformed page: {e}") from e


def _fill_nulls(values: np.ndarray, valid: np.ndarray | None) -> np.ndarray:
    """Null slots take the previous valid value (the first valid one at the start)."""
    if valid is None:
        return values
    if not valid.any():
        return np.zeros_like(values)
    idx = np.where(valid, np.arange(len(valid)), 0)
    np.maximum.accumulate(idx, out=idx)
    first = int(np.argmax(valid))
    idx[:first] = first
    return values[idx]


def _validity(arr: pa.Array) -> np.ndarray | None:
    if arr.null_count == 0:
        return None
    return arr.is_valid().to_numpy(zero_copy_only=False)


def _bitmap(valid: np.ndarray | None, start: int, end: int) -> bytes:
    return b"" if valid is None else np.packbits(valid[start:end], bitorder="little").tobytes()


def _bounds(n: int, rows_per_page: int) -> np.ndarray:
    return np.append(np.arange(0, n, rows_per_page, dtype=np.int64), n)


class ColumnEncoder(ABC):
    """Splits one column (a single-chunk Arrow array) into pages and encodes them."""

    dictionary_page: bytes | None = None
    codec = "LZ4"  # the table's page codec (storage.segment.page.CODECS)

    def __init__(self, arr: pa.Array) -> None:
        self.arr = arr
        self.valid = _validity(arr)

    @abstractmethod
    def page_bounds(self) -> np.ndarray:
        ...

    @abstractmethod
    def encode_page(self, start: int, end: int) -> bytes:
        ...

    def _page(self, enc: PageEncoding, start: int, end: int, values: bytes, width: int = 0, base: int = 0,
              base2: int = 0) -> bytes:
        has_nulls = self.valid is not None and not self.valid[start:end].all()
        bitmap = _bitmap(self.valid, start, end) if has_nulls else b""
        return build_page(enc, end - start, bitmap + values, width=width, base=base, base2=base2,
                          has_nulls=has_nulls, codec=self.codec)


class IntColumnEncoder(ColumnEncoder):
    def __init__(self, arr: pa.Array, values: np.ndarray | None = None) -> None:
        super().__init__(arr)
        if values is None:
            dtype = _int_dtype(arr.type)
            if pa.types.is_boolean(arr.type):
                bits = np.frombuffer(arr.buffers()[1], np.uint8)
                values = np.unpackbits(bits, count=arr.offset + len(arr), bitorder="little")[arr.offset:]
            else:
                values = np.frombuffer(arr.buffers()[1], dtype, count=len(arr), offset=arr.offset * dtype.itemsize)
        self.values = _fill_nulls(values, self.valid)

    def page_bounds(self) -> np.ndarray:
        return _bounds(len(self.values), PAGE_TARGET_BYTES // max(self.values.dtype.itemsize, 1))

    def encode_page(self, start: int, end: int) -> bytes:
        enc, width, base, base2, body = encode_ints(self.values[start:end])
        return self._page(enc, start, end, body, width, base, base2)


class FloatColumnEncoder(ColumnEncoder):
    def __init__(self, arr: pa.Array) -> None:
        super().__init__(arr)
        dtype = np.dtype(arr.type.to_pandas_dtype())
        self.values = np.frombuffer(arr.buffers()[1], dtype, count=len(arr), offset=arr.offset * dtype.itemsize)

    def page_bounds(self) -> np.ndarray:
        return _bounds(len(self.values), PAGE_TARGET_BYTES // self.values.dtype.itemsize)

    def encode_page(self, start: int, end: int) -> bytes:
        return self._page(PageEncoding.PLAIN, start, end, self.values[start:end].tobytes())


class DecimalColumnEncoder(ColumnEncoder):
    """Unscaled 128-bit values; a page whose values all fit in int64 is packed as int64."""

    def __init__(self, arr: pa.Array) -> None:
        super().__init__(arr)
        raw = np.frombuffer(arr.buffers()[1], np.int64, count=2 * len(arr), offset=arr.offset * 16)
        self.values = _fill_nulls(raw.reshape(-1, 2), self.valid)

    def page_bounds(self) -> np.ndarray:
        return _bounds(len(self.values), PAGE_TARGET_BYTES // 8)

    def encode_page(self, start: int, end: int) -> bytes:
        page = self.values[start:end]
        low = np.ascontiguousarray(page[:, 0])
        if np.array_equal(page[:, 1], low >> 63):
            enc, width, base, base2, body = encode_ints(low)
            if enc != PageEncoding.PLAIN:
                return self._page(enc, start, end, body, width, base, base2)
        return self._page(PageEncoding.PLAIN, start, end, page.tobytes(), 16)


def _binary_body(offsets: np.ndarray, data: memoryview | bytes, start: int, end: int) -> tuple[int, int, bytes]:
    """(width, base, packed lengths + bytes) for rows [start, end) of a string array's buffers."""
    width, base, packed = pack_for(np.diff(offsets[start:end + 1]))
    return width, base, packed + bytes(data[offsets[start]:offsets[end]])


class BinaryColumnEncoder(ColumnEncoder):
    """Plain: packed lengths then bytes. Pages are cut at ~64 KB of string data + 4 bytes per row."""

    def __init__(self, arr: pa.Array) -> None:
        super().__init__(arr)
        self.offsets = np.frombuffer(arr.buffers()[1], np.int32, count=len(arr) + 1, offset=arr.offset * 4)
        self.data = memoryview(arr.buffers()[2]) if arr.buffers()[2] is not None else memoryview(b"")

    def page_bounds(self) -> np.ndarray:
        n = len(self.offsets) - 1
        if n == 0:
            return np.zeros(1, np.int64)
        before = (self.offsets[:-1] - self.offsets[0]).astype(np.int64) + 4 * np.arange(n, dtype=np.int64)
        group = before // PAGE_TARGET_BYTES
        starts = np.flatnonzero(np.diff(group)) + 1
        return np.concatenate([[0], starts, [n]]).astype(np.int64)

    def encode_page(self, start: int, end: int) -> bytes:
        width, base, body = _binary_body(self.offsets, self.data, start, end)
        return self._page(PageEncoding.PLAIN_BINARY, start, end, body, width, base)


class DictColumnEncoder(IntColumnEncoder):
    """Codes pages (integer encodings) plus one dictionary page shared by the column."""

    def __init__(self, arr: pa.Array, encoded: pa.DictionaryArray) -> None:
        indices = encoded.indices
        codes = np.frombuffer(indices.buffers()[1], np.int32, count=len(indices), offset=indices.offset * 4)
        super().__init__(arr, codes)
        d = encoded.dictionary
        offsets = np.frombuffer(d.buffers()[1], np.int32, count=len(d) + 1, offset=d.offset * 4)
        data = memoryview(d.buffers()[2]) if d.buffers()[2] is not None else memoryview(b"")
        width, base, body = _binary_body(offsets, data, 0, len(d))
        self.dictionary_page = build_page(PageEncoding.PLAIN_BINARY, len(d), body, width=width, base=base)


def _dictionary_pays(arr: pa.Array) -> pa.DictionaryArray | None:
    """Dictionary-encode when the dictionary plus codes are well under half the plain size."""
    n = len(arr)
    if n == 0:
        return None
    plain = arr.buffers()[2].size if arr.buffers()[2] is not None else 0
    sample = arr.slice(0, min(n, 65536))
    # a cheap look at the head first: mostly-distinct strings never pay
    if len(pc.unique(sample)) > 0.5 * len(sample) and n > 1024:
        return None
    encoded = pc.dictionary_encode(arr)
    d = encoded.dictionary
    dict_bytes = (d.buffers()[2].size if d.buffers()[2] is not None else 0) + 4 * len(d)
    if dict_bytes > MAX_DICTIONARY_BYTES:
        return None
    code_bytes = n * max(_width_for(len(d) - 1), 1)
    if dict_bytes + code_bytes > 0.5 * (plain + 4 * n):
        return None
    return encoded


def make_encoder(arr: pa.Array) -> ColumnEncoder:
    t = arr.type
    check_supported(t)
    if pa.types.is_string(t):
        encoded = _dictionary_pays(arr)
        return DictColumnEncoder(arr, encoded) if encoded is not None else BinaryColumnEncoder(arr)
    if pa.types.is_floating(t):
        return FloatColumnEncoder(arr)
    if pa.types.is_decimal128(t):
        return DecimalColumnEncoder(arr)
    return IntColumnEncoder(arr)


# ---------------------------------------------------------------------------------------------- reading


_POOL_MIN_BYTES = 256 * 1024


def _output(shape: int | tuple[int, int], dtype: np.dtype | type) -> np.ndarray:
    """A decoder's output array. Large ones come from Arrow's memory pool (mimalloc / jemalloc), which keeps
    freed memory for the next scan: glibc returns multi-MB blocks freed on the main thread to the OS, and
    every query then page-faults its output arrays in afresh."""
    dt = np.dtype(dtype)
    count = shape if isinstance(shape, int) else shape[0] * shape[1]
    if count * dt.itemsize < _POOL_MIN_BYTES:
        return np.empty(shape, dt)
    return np.frombuffer(pa.allocate_buffer(count * dt.itemsize), dt).reshape(shape)


class ColumnDecoder(ABC):
    """Receives a column's selected pages in row order and builds one Arrow array (or chunked array)."""

    def __init__(self, arrow_type: pa.DataType, total_rows: int) -> None:
        self.type = arrow_type
        self.total = total_rows
        self.pos = 0
        self.valid: np.ndarray | None = None

    def add(self, h: PageHeader, body: bytes | memoryview) -> None:
        n = h.num_rows
        if self.pos + n > self.total:
            raise CorruptDataError("page row counts disagree with the ordinal index")
        start = 0
        if h.has_nulls:
            nbytes = (n + 7) // 8
            if self.valid is None:
                self.valid = np.ones(self.total, dtype=bool)
            bits = np.frombuffer(body, np.uint8, count=nbytes)
            self.valid[self.pos:self.pos + n] = np.unpackbits(bits, count=n, bitorder="little")
            start = nbytes
        self._add_values(h, body, start, self.pos, n)
        self.pos += n

    @abstractmethod
    def _add_values(self, h: PageHeader, body: bytes | memoryview, start: int, row: int, n: int) -> None:
        ...

    def finish(self) -> pa.Array | pa.ChunkedArray:
        if self.pos != self.total:
            raise CorruptDataError("page row counts disagree with the ordinal index")
        return self._finish()

    @abstractmethod
    def _finish(self) -> pa.Array | pa.ChunkedArray:
        ...

    def _validity(self, start: int = 0, end: int | None = None) -> tuple[pa.Buffer | None, int]:
        if self.valid is None:
            return None, 0
        v = self.valid[start:end]
        nulls = len(v) - int(np.count_nonzero(v))
        if nulls == 0:
            return None, 0
        return pa.py_buffer(np.packbits(v, bitorder="little")), nulls


class IntColumnDecoder(ColumnDecoder):
    def __init__(self, arrow_type: pa.DataType, total_rows: int) -> None:
        super().__init__(arrow_type, total_rows)
        self.out = _output(total_rows, _int_dtype(arrow_type))

    def _add_values(self, h, body, start, row, n) -> None:
        decode_ints(h, body, start, self.out[row:row + n])

    def _finish(self) -> pa.Array:
        validity, nulls = self._validity()
        if pa.types.is_boolean(self.type):
            data = pa.py_buffer(np.packbits(self.out.view(bool), bitorder="little"))
        else:
            data = pa.py_buffer(self.out)
        return pa.Array.from_buffers(self.type, self.total, [validity, data], null_count=nulls)


class FloatColumnDecoder(ColumnDecoder):
    def __init__(self, arrow_type: pa.DataType, total_rows: int) -> None:
        super().__init__(arrow_type, total_rows)
        self.out = _output(total_rows, np.dtype(arrow_type.to_pandas_dtype()))

    def _add_values(self, h, body, start, row, n) -> None:
        try:
            self.out[row:row + n] = np.frombuffer(body, self.out.dtype, count=n, offset=start)
        except ValueError as e:
            raise CorruptDataError(f"malformed page: {e}") from e

    def _finish(self) -> pa.Array:
        validity, nulls = self._validity()
        return pa.Array.from_buffers(self.type, self.total, [validity, pa.py_buffer(self.out)], null_count=nulls)


class DecimalColumnDecoder(ColumnDecoder):
    def __init__(self, arrow_type: pa.DataType, total_rows: int) -> None:
        super().__init__(arrow_type, total_rows)
        self.out = _output((total_rows, 2), np.int64)

    def _add_values(self, h, body, start, row, n) -> None:
        page = self.out[row:row + n]
        if h.encoding == PageEncoding.PLAIN and h.width == 16:
            try:
                page[:] = np.frombuffer(body, np.int64, count=2 * n, offset=start).reshape(n, 2)
            except ValueError as e:
                raise CorruptDataError(f"malformed page: {e}") from e
        else:
            low = page[:, 0]
            decode_ints(h, body, start, low)
            np.right_shift(low, 63, out=page[:, 1])

    def _finish(self) -> pa.Array:
        validity, nulls = self._validity()
        return pa.Array.from_buffers(self.type, self.total, [validity, pa.py_buffer(self.out)], null_count=nulls)


def decode_binary(h: PageHeader, body: bytes | memoryview, start: int, lengths: np.ndarray) -> memoryview:
    """Decode a PLAIN_BINARY page's lengths into `lengths`; returns its bytes section."""
    if h.encoding != PageEncoding.PLAIN_BINARY:
        raise CorruptDataError(f"unexpected page encoding {h.encoding} in a string column")
    n = len(lengths)
    decode_ints(PageHeader(PageEncoding.FOR, h.flags, h.width, n, h.raw_size, h.base, 0), body, start, lengths)
    data = memoryview(body)[start + n * h.width:]
    if int(lengths.sum()) != len(data) or (n and int(lengths.min()) < 0):
        raise CorruptDataError("malformed string page")
    return data


class BinaryColumnDecoder(ColumnDecoder):
    def __init__(self, arrow_type: pa.DataType, total_rows: int) -> None:
        super().__init__(arrow_type, total_rows)
        self.lengths = _output(total_rows, np.int32)
        self.parts: list[memoryview] = []
        self.part_rows: list[int] = []

    def _add_values(self, h, body, start, row, n) -> None:
        self.parts.append(decode_binary(h, body, start, self.lengths[row:row + n]))
        self.part_rows.append(n)

    def _build(self, row: int, nrows: int, parts: list[memoryview]) -> pa.Array:
        offsets = np.zeros(nrows + 1, dtype=np.int32)
        np.cumsum(self.lengths[row:row + nrows], out=offsets[1:])
        validity, nulls = self._validity(row, row + nrows)
        return pa.Array.from_buffers(self.type, nrows, [validity, pa.py_buffer(offsets), pa.py_buffer(b"".join(parts))],
                                     null_count=nulls)

    def _finish(self) -> pa.Array | pa.ChunkedArray:
        total_bytes = sum(len(p) for p in self.parts)
        if total_bytes <= MAX_BINARY_CHUNK:
            return self._build(0, self.total, self.parts)
        chunks, row, group, group_rows, group_bytes = [], 0, [], 0, 0
        for part, n in zip(self.parts, self.part_rows, strict=True):
            if group and group_bytes + len(part) > MAX_BINARY_CHUNK:
                chunks.append(self._build(row, group_rows, group))
                row, group, group_rows, group_bytes = row + group_rows, [], 0, 0
            group.append(part)
            group_rows += n
            group_bytes += len(part)
        chunks.append(self._build(row, group_rows, group))
        return pa.chunked_array(chunks, self.type)


class DictColumnDecoder(IntColumnDecoder):
    def __init__(self, arrow_type: pa.DataType, total_rows: int, dictionary: pa.Array) -> None:
        ColumnDecoder.__init__(self, arrow_type, total_rows)
        self.out = _output(total_rows, np.int32)
        self.dictionary = dictionary

    def _finish(self) -> pa.Array:
        # codes under NULL slots are placeholders (an all-NULL column has an empty dictionary)
        codes_in_use = self.out if self.valid is None else self.out[self.valid[: self.total].astype(bool)]
        if codes_in_use.size and (int(codes_in_use.min()) < 0 or int(codes_in_use.max()) >= len(self.dictionary)):
            raise CorruptDataError("dictionary code out of range")
        if not len(self.dictionary):
            self.out[:] = 0
            return pa.nulls(self.total, self.type)
        validity, nulls = self._validity()
        codes = pa.Array.from_buffers(pa.int32(), self.total, [validity, pa.py_buffer(self.out)], null_count=nulls)
        return self.dictionary.take(codes)


def gather_dtype(arrow_type: pa.DataType) -> np.dtype | None:
    """The numpy lane of a column GatherDecoder handles (fixed-width ints, dates, timestamps, floats);
    None for the others (booleans are bit-packed in Arrow, decimals two lanes wide, strings variable)."""
    if pa.types.is_boolean(arrow_type):
        return None
    dt = _int_dtype(arrow_type)
    if dt is not None:
        return dt
    if pa.types.is_floating(arrow_type):
        return np.dtype(arrow_type.to_pandas_dtype())
    return None


class GatherDecoder:
    """A fixed-width column's values at a few positions of each selected page (sparse row ids: a bitmap
    index's hits), without decoding the pages into a buffer as large as the pages: PLAIN, FOR and float
    pages gather straight from the page body; a DELTA page decodes into a page-sized scratch buffer that
    stays in cache. The output has one value per position, in order."""

    def __init__(self, arrow_type: pa.DataType, total: int, max_page_rows: int) -> None:
        dt = gather_dtype(arrow_type)
        if dt is None:
            raise StorageError(f"no gather decoding for {arrow_type}")
        self.type = arrow_type
        self.total = total
        self.pos = 0
        self.out = _output(total, dt)
        self.valid: np.ndarray | None = None
        self.ints = _int_dtype(arrow_type) is not None
        self.scratch = np.empty(max_page_rows if self.ints else 0, dt)

    def add(self, h: PageHeader, body: bytes | memoryview, idx: np.ndarray) -> None:
        """Page `h` / `body`, the sorted positions `idx` within it."""
        n, k = h.num_rows, len(idx)
        if self.pos + k > self.total or (k and int(idx[-1]) >= n):
            raise CorruptDataError("page row counts disagree with the ordinal index")
        start = 0
        try:
            if h.has_nulls:
                nbytes = (n + 7) // 8
                bits = np.unpackbits(np.frombuffer(body, np.uint8, count=nbytes), count=n, bitorder="little")
                if self.valid is None:
                    self.valid = np.ones(self.total, dtype=bool)
                self.valid[self.pos:self.pos + k] = bits[idx]
                start = nbytes
            out = self.out[self.pos:self.pos + k]
            if not self.ints or h.encoding == PageEncoding.PLAIN:  # float pages are always plain
                out[:] = np.frombuffer(body, out.dtype, count=n, offset=start)[idx]
            elif h.encoding == PageEncoding.FOR and h.width:
                u = _UNSIGNED[out.dtype.itemsize]
                packed = np.frombuffer(body, _UNSIGNED[h.width], count=n, offset=start)[idx]
                np.add(packed, _as_unsigned(h.base, u), out=out.view(u))
            else:  # FOR width 0, DELTA: the whole page into the scratch buffer, then the positions
                page = self.scratch[:n]
                decode_ints(h, body, start, page)
                out[:] = page[idx]
        except ValueError as e:  # frombuffer past the end: a header that lies about its body
            raise CorruptDataError(f"malformed page: {e}") from e
        self.pos += k

    def finish(self) -> pa.Array:
        if self.pos != self.total:
            raise CorruptDataError("page row counts disagree with the ordinal index")
        validity, nulls = None, 0
        if self.valid is not None:
            nulls = self.total - int(np.count_nonzero(self.valid))
            if nulls:
                validity = pa.py_buffer(np.packbits(self.valid, bitorder="little"))
        return pa.Array.from_buffers(self.type, self.total, [validity, pa.py_buffer(self.out)], null_count=nulls)


def decode_dictionary(arrow_type: pa.DataType, h: PageHeader, body: bytes | memoryview) -> pa.Array:
    dec = BinaryColumnDecoder(arrow_type, h.num_rows)
    dec.add(h, body)
    return dec.finish()


def make_decoder(arrow_type: pa.DataType, total_rows: int, dictionary: pa.Array | None = None) -> ColumnDecoder:
    if dictionary is not None:
        return DictColumnDecoder(arrow_type, total_rows, dictionary)
    if pa.types.is_string(arrow_type):
        return BinaryColumnDecoder(arrow_type, total_rows)
    if pa.types.is_floating(arrow_type):
        return FloatColumnDecoder(arrow_type, total_rows)
    if pa.types.is_decimal128(arrow_type):
        return DecimalColumnDecoder(arrow_type, total_rows)
    return IntColumnDecoder(arrow_type, total_rows)
