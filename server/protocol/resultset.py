"""Arrow tables to MySQL result sets, column by column.

Each column becomes one Arrow binary array of ready-made wire cells (length-encoded text, or the binary
protocol's fixed-width values); rows are then joined and framed by pyarrow kernels, so no Python code
runs per value on the common types. Wire types come from `sql.types.mysql_column`.
"""

from __future__ import annotations

import functools
import json
import struct
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from server.protocol.constants import MAX_PAYLOAD
from server.protocol.packets import eof_packet, lenenc_int, lenenc_str
from server.results import ResultSet
from sql.types import UNSIGNED_FLAG, MysqlType, mysql_column

BATCH_ROWS = 8192


@dataclass(frozen=True)
class WireColumn:
    name: str
    type: MysqlType
    length: int
    decimals: int
    flags: int
    charset: int


def _whole_seconds(column: pa.ChunkedArray | pa.Array) -> bool:
    """True when no value of a sub-second timestamp column has a fractional part."""
    per_second = {"ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}[column.type.unit]
    ticks = pc.cast(column, pa.int64())
    return not pc.any(pc.not_equal(pc.subtract(ticks, pc.multiply(pc.divide(ticks, per_second), per_second)),
                                   0)).as_py()


def wire_columns(schema: pa.Schema, extra_flags: dict[str, int] | None = None,
                 table: pa.Table | None = None) -> list[WireColumn]:
    out = []
    for i, f in enumerate(schema):
        mtype, length, decimals, flags, charset = mysql_column(f.type)
        # computed DATETIMEs (now(), date_add ...) are microsecond-typed: like Doris's DATETIME(0) results
        # they print without a fraction unless a value has one
        if (table is not None and pa.types.is_timestamp(f.type) and f.type.unit == "us"
                and _whole_seconds(table.column(i))):
            length, decimals = 19, 0
        flags |= (extra_flags or {}).get(f.name, 0)
        out.append(WireColumn(f.name, mtype, length, decimals, flags, charset))
    return out


def result_columns(rs: ResultSet) -> tuple[list[WireColumn], tuple[bytes, ...]]:
    """A result set's wire columns and their definition packets. Memoised by schema and flags, but for a
    microsecond DATETIME column, whose definition depends on its values: a point query sends the same
    header every time (building it was a twentieth of the server's time)."""
    schema = rs.table.schema
    if any(pa.types.is_timestamp(f.type) and f.type.unit == "us" for f in schema):
        columns = wire_columns(schema, rs.column_flags, rs.table)
        return columns, tuple(column_definition(c) for c in columns)
    columns, definitions = _result_columns(schema, tuple(sorted(rs.column_flags.items())))
    return list(columns), definitions


@functools.lru_cache(maxsize=512)
def _result_columns(schema: pa.Schema, flags: tuple[tuple[str, int], ...]
                    ) -> tuple[tuple[WireColumn, ...], tuple[bytes, ...]]:
    columns = wire_columns(schema, dict(flags))
    return tuple(columns), tuple(column_definition(c) for c in columns)


@functools.lru_cache(maxsize=1024)
def framed_header(definitions: tuple[bytes, ...], status: int, first_seq: int) -> bytes | None:
    """A result set's opening packets framed from sequence id `first_seq`: the column count, the column
    definitions and the EOF after them (len(definitions) + 2 packets; a point query's is the same every time,
    and framing its packets one by one was ~20 us). None when a definition needs splitting (a 16 MiB name)."""
    packets = [lenenc_int(len(definitions)), *definitions, eof_packet(status)]
    if any(len(p) >= MAX_PAYLOAD for p in packets):
        return None
    return b"".join(len(p).to_bytes(3, "little") + bytes(((first_seq + i) & 0xFF,)) + p
                    for i, p in enumerate(packets))


def column_definition(col: WireColumn, table: str = "", schema: str = "", field_list: bool = False) -> bytes:
    name, tbl, db = col.name.encode(), table.encode(), schema.encode()
    body = b"".join((
        lenenc_str(b"def"), lenenc_str(db), lenenc_str(tbl), lenenc_str(tbl), lenenc_str(name), lenenc_str(name),
        b"\x0c", struct.pack("<HIBHB", col.charset, min(col.length, 0xFFFFFFFF), col.type, col.flags & 0xFFFF,
                             col.decimals), b"\x00\x00",
    ))
    # COM_FIELD_LIST answers carry a default value after the definition; NULL here
    return body + b"\xfb" if field_list else body


# -- text protocol ------------------------------------------------------------------------------------

def text_values(arr: pa.Array, col: WireColumn) -> pa.Array:
    """The column as text (binary array, nulls kept): what the text protocol sends per value."""
    t = arr.type
    if pa.types.is_dictionary(t):
        arr, t = arr.dictionary_decode(), t.value_type
    if pa.types.is_null(t):
        return pa.nulls(len(arr), pa.binary())
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
        return arr.cast(pa.binary())
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return arr.cast(pa.string()).cast(pa.binary())
    if pa.types.is_boolean(t):
        arr = arr.cast(pa.int8())
    if pa.types.is_timestamp(t):
        # 'YYYY-MM-DD HH:MM:SS' plus exactly the column's fractional digits
        width = 19 + (col.decimals + 1 if col.decimals else 0)
        return pc.utf8_slice_codeunits(arr.cast(pa.string()), 0, width).cast(pa.binary())
    if pa.types.is_nested(t):
        return _python_text(arr)
    if pa.types.is_floating(t):
        return _float_text(arr)
    try:
        return arr.cast(pa.string()).cast(pa.binary())
    except (pa.ArrowNotImplementedError, pa.ArrowInvalid):
        return _python_text(arr)


def _float_text(arr: pa.Array) -> pa.Array:
    """Doubles as Doris prints them (fmt's shortest round-trip text, as Python's repr: exponent below 1e-4 and
    from 1e16, no trailing '.0'); NaN as NULL. Arrow's text is the same digits but switches to an exponent
    on its own rules: those values (few) are formatted again."""
    arr = pc.if_else(pc.is_nan(arr), pa.scalar(None, arr.type), arr)
    text = arr.cast(pa.string())
    magnitude = pc.abs(arr)
    redo = pc.or_(pc.match_substring(text, "e"), pc.and_(pc.less(magnitude, 1e-4), pc.not_equal(magnitude, 0)))
    if not pc.any(redo).as_py():
        return text.cast(pa.binary())
    idx = pc.indices_nonzero(redo.fill_null(False))
    single = pa.types.is_float32(arr.type)
    fixed = [(str(np.float32(v)) if single else repr(v)).removesuffix(".0")
             for v in pc.take(arr, idx).to_pylist()]
    mask = np.zeros(len(arr), bool)
    mask[idx.to_numpy()] = True
    return pc.replace_with_mask(text, pa.array(mask), pa.array(fixed, pa.string())).cast(pa.binary())


def _python_text(arr: pa.Array) -> pa.Array:
    """Fallback for types Arrow cannot cast to text (arrays, maps, structs): Doris-like JSON-ish text."""
    def fmt(v: object) -> bytes:
        if isinstance(v, list | dict):
            return json.dumps(v, default=str, ensure_ascii=False).encode()
        return str(v).encode()
    return pa.array([None if v is None else fmt(v) for v in arr.to_pylist()], pa.binary())


def _lenenc_prefixes(lengths: np.ndarray) -> pa.Array:
    """Length-encoded integer prefixes for a vector of lengths, as one binary array."""
    n = len(lengths)
    lengths = lengths.astype(np.uint64)
    size = np.where(lengths < 251, 1, np.where(lengths < 1 << 16, 3, np.where(lengths < 1 << 24, 4, 9)))
    offsets = np.zeros(n + 1, np.int32)
    np.cumsum(size, out=offsets[1:])
    data = np.zeros(int(offsets[-1]), np.uint8)
    start = offsets[:-1]
    small = size == 1
    data[start[small]] = lengths[small]
    for width, marker in ((3, 0xFC), (4, 0xFD), (9, 0xFE)):
        m = size == width
        if m.any():
            s, v = start[m], lengths[m]
            data[s] = marker
            for k in range(width - 1):
                data[s + 1 + k] = (v >> np.uint64(8 * k)) & np.uint64(0xFF)
    return pa.Array.from_buffers(pa.binary(), n, [None, pa.py_buffer(offsets), pa.py_buffer(data)])


def _lenenc_cells(values: pa.Array) -> pa.Array:
    lengths = pc.binary_length(values).fill_null(0).to_numpy(zero_copy_only=False)
    return pc.binary_join_element_wise(_lenenc_prefixes(lengths), values, b"")


def small_text_rows(batch: pa.RecordBatch, columns: list[WireColumn]) -> list[bytes]:
    """text_rows of a small batch, built in Python: each Arrow compute call costs ~30 us, and the vectorized path
    makes a dozen per column. Integers and strings are written here (their text is the same); other types take
    text_values' rules."""
    cells: list[list[bytes | None]] = []
    for i, col in enumerate(columns):
        arr = batch.column(i)
        t = arr.type
        if pa.types.is_integer(t):
            cells.append([None if v is None else b"%d" % v for v in arr.to_pylist()])
        elif pa.types.is_string(t) or pa.types.is_large_string(t):
            cells.append([None if v is None else v.encode() for v in arr.to_pylist()])
        else:
            cells.append(text_values(arr, col).to_pylist())
    return [b"".join(b"\xfb" if v is None else lenenc_str(v) for v in row) for row in zip(*cells, strict=True)]


def text_rows(batch: pa.RecordBatch, columns: list[WireColumn]) -> pa.Array:
    """One binary value per row: the payload of a text-protocol row packet."""
    cells = [pc.fill_null(_lenenc_cells(text_values(batch.column(i), c)), b"\xfb") for i, c in enumerate(columns)]
    return pc.binary_join_element_wise(*cells, b"")


# -- binary protocol ----------------------------------------------------------------------------------

_FIXED = {
    MysqlType.TINY: "i1", MysqlType.SHORT: "<i2", MysqlType.YEAR: "<i2", MysqlType.LONG: "<i4",
    MysqlType.INT24: "<i4", MysqlType.LONGLONG: "<i8", MysqlType.FLOAT: "<f4", MysqlType.DOUBLE: "<f8",
}


def _fixed_cells(values: np.ndarray, dtype: np.dtype) -> pa.Array:
    raw = np.ascontiguousarray(values, dtype=dtype)
    fixed = pa.Array.from_buffers(pa.binary(raw.dtype.itemsize), len(raw), [None, pa.py_buffer(raw.tobytes())])
    return fixed.cast(pa.binary())


def _binary_cells(arr: pa.Array, col: WireColumn) -> pa.Array:
    t = arr.type
    if pa.types.is_dictionary(t):
        arr, t = arr.dictionary_decode(), t.value_type
    if col.type in _FIXED and (pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_boolean(t)):
        dtype = np.dtype(_FIXED[col.type])
        if dtype.kind == "i" and (col.flags & UNSIGNED_FLAG or pa.types.is_unsigned_integer(t)):
            dtype = np.dtype(dtype.str.replace("i", "u"))
        filled = arr.fill_null(False if pa.types.is_boolean(t) else 0).to_numpy(zero_copy_only=False)
        return _fixed_cells(filled.astype(dtype, copy=False), dtype)
    if col.type == MysqlType.DATE and pa.types.is_date(t):
        d = arr.fill_null(0)
        rec = np.zeros(len(d), np.dtype([("n", "u1"), ("y", "<u2"), ("m", "u1"), ("d", "u1")]))
        rec["n"] = 4
        rec["y"], rec["m"], rec["d"] = (pc.year(d).to_numpy(), pc.month(d).to_numpy(), pc.day(d).to_numpy())
        return _fixed_cells(rec.view(f"V{rec.dtype.itemsize}"), np.dtype(f"V{rec.dtype.itemsize}"))
    if col.type == MysqlType.DATETIME and pa.types.is_timestamp(t):
        d = arr.fill_null(0)
        fields = [("n", "u1"), ("y", "<u2"), ("mo", "u1"), ("d", "u1"), ("h", "u1"), ("mi", "u1"), ("s", "u1")]
        if col.decimals:
            fields.append(("us", "<u4"))
        rec = np.zeros(len(d), np.dtype(fields))
        rec["n"] = rec.dtype.itemsize - 1
        for name, fn in (("y", pc.year), ("mo", pc.month), ("d", pc.day), ("h", pc.hour), ("mi", pc.minute),
                         ("s", pc.second)):
            rec[name] = fn(d).to_numpy()
        if col.decimals:
            micros = pc.add(pc.multiply(pc.millisecond(d), 1000), pc.microsecond(d)).to_numpy()
            step = 10 ** (6 - min(col.decimals, 6))
            rec["us"] = micros - micros % step
        return _fixed_cells(rec.view(f"V{rec.dtype.itemsize}"), np.dtype(f"V{rec.dtype.itemsize}"))
    return _lenenc_cells(text_values(arr, col))


def binary_rows(batch: pa.RecordBatch, columns: list[WireColumn]) -> pa.Array:
    """One binary value per row: 0x00, the NULL bitmap (offset 2), then the non-NULL values."""
    n, ncols = batch.num_rows, len(columns)
    nulls = np.zeros((n, ncols + 2), bool)
    cells = []
    for i, col in enumerate(columns):
        arr = batch.column(i)
        is_null = arr.is_null().to_numpy(zero_copy_only=False)
        nulls[:, i + 2] = is_null
        c = _binary_cells(arr, col)
        cells.append(pc.if_else(pa.array(is_null), pa.scalar(None, pa.binary()), c) if is_null.any() else c)
    bitmap = np.packbits(nulls, axis=1, bitorder="little")
    head = np.concatenate([np.zeros((n, 1), np.uint8), bitmap], axis=1)
    head_arr = _fixed_cells(head.view(f"V{head.shape[1]}").reshape(n), np.dtype(f"V{head.shape[1]}"))
    return pc.binary_join_element_wise(head_arr, *cells, b"", null_handling="skip")


# -- framing ------------------------------------------------------------------------------------------

def frame_rows(rows: pa.Array, first_seq: int) -> memoryview | None:
    """Wire bytes of one packet per row, sequence ids from `first_seq`; None if a row needs splitting."""
    n = len(rows)
    lengths = pc.binary_length(rows).to_numpy(zero_copy_only=False).astype(np.uint32)
    if n and int(lengths.max()) >= MAX_PAYLOAD:
        return None
    seqs = ((first_seq + np.arange(n, dtype=np.uint32)) & 0xFF) << 24
    headers = _fixed_cells(lengths | seqs, np.dtype("<u4"))
    framed = pc.binary_join_element_wise(headers, rows, b"")
    offsets = np.frombuffer(framed.buffers()[1], np.int32, n + 1, framed.offset * 4)
    return memoryview(framed.buffers()[2])[offsets[0]:offsets[-1]] if n else memoryview(b"")


def batches(rs: ResultSet) -> Iterator[pa.RecordBatch]:
    yield from rs.table.to_batches(max_chunksize=BATCH_ROWS)
