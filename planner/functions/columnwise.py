"""Helpers for functions Arrow has no kernel for: one Python call per *distinct* value (hashes, base64,
URL parsing), and byte-level rewrites of a string column's data buffer with numpy (masks, initcap, hex)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from planner.functions.casts import to_string
from planner.values import Value, broadcast


def per_distinct(v: Value, fn: Callable[[Any], Any], out_type: pa.DataType) -> Value:
    """fn over each distinct non-NULL value of v (a column is dictionary-encoded first); fn may return None."""
    if isinstance(v, pa.Scalar):
        return pa.scalar(fn(v.as_py()) if v.is_valid else None, out_type)
    arr = v.combine_chunks() if isinstance(v, pa.ChunkedArray) else v
    if pa.types.is_null(arr.type):
        return pa.nulls(len(arr), out_type)
    encoded = pc.dictionary_encode(arr)
    results = pa.array([fn(x) for x in encoded.dictionary.to_pylist()], out_type)
    return results.take(encoded.indices)


def string_array(v: Value) -> pa.Array:
    """A string column (or a scalar as a one-row column) as one utf8 array."""
    s = to_string(v)
    if isinstance(s, pa.Scalar):
        s = pa.array([s.as_py()], pa.string())
    if isinstance(s, pa.ChunkedArray):
        s = s.combine_chunks()
    if pa.types.is_large_string(s.type):
        s = s.cast(pa.string())
    return s


def byte_layout(arr: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(offsets of each row into the data buffer (n + 1), the data buffer as uint8)."""
    buffers = arr.buffers()
    offsets = np.frombuffer(buffers[1], dtype=np.int32)[arr.offset: arr.offset + len(arr) + 1].astype(np.int64)
    data = np.frombuffer(buffers[2], dtype=np.uint8) if buffers[2] is not None else np.zeros(0, np.uint8)
    return offsets, data


def position_in_row(offsets: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """For every byte of the data buffer: (its row, its byte position within the row); bytes outside all
    rows get row -1."""
    idx = np.arange(size, dtype=np.int64)
    row = np.searchsorted(offsets, idx, side="right") - 1
    inside = (idx >= offsets[0]) & (idx < offsets[-1])
    row = np.where(inside, np.clip(row, 0, len(offsets) - 2), -1)
    return row, idx - offsets[np.clip(row, 0, len(offsets) - 1)]


def with_data(arr: pa.Array, data: np.ndarray) -> pa.Array:
    """arr with its data buffer replaced by `data` (same length in bytes: offsets stay valid)."""
    buffers = arr.buffers()
    return pa.Array.from_buffers(pa.string(), len(arr), [buffers[0], buffers[1], pa.py_buffer(data.tobytes())],
                                 null_count=arr.null_count, offset=arr.offset)


def like_input(v: Value, out: pa.Array) -> Value:
    """out back as a scalar when v was one."""
    return out[0] if isinstance(v, pa.Scalar) else out


# distinct parameter tuples above which a kernel call per tuple (~0.1 ms each: a LIKE pattern's compilation)
# costs more than a plain Python call per row
PER_ROW_ABOVE = 256


def by_distinct(parameters: list[Value], run: Callable[[np.ndarray | None, list[pa.Scalar]], Value],
                out_type: pa.DataType, per_row: Callable[[], Value] | None = None) -> Value:
    """A kernel whose parameters Arrow takes only as scalars (a LIKE pattern, a delimiter, a part index), over
    parameters that are columns: the rows are grouped by their distinct parameter tuple (a stable numpy sort of
    the dictionary codes) and `run(rows, scalars)` computes each group with the group's parameters as scalars,
    once per distinct tuple rather than once per row. `rows` is None when every parameter is a scalar.
    `per_row` computes the whole column in one Python pass: taken when nearly every row has a parameter of its
    own (PER_ROW_ABOVE distinct tuples and more than one in 16 rows)."""
    if all(isinstance(p, pa.Scalar) for p in parameters):
        return run(None, list(parameters))
    arrays = [p.combine_chunks() if isinstance(p, pa.ChunkedArray) else p for p in parameters
              if not isinstance(p, pa.Scalar)]
    n = len(arrays[0])
    code = np.zeros(n, np.int64)
    for a in arrays:
        if pa.types.is_null(a.type):
            continue
        encoded = pc.dictionary_encode(a, null_encoding="encode")
        part = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
        _, code = np.unique(code * (len(encoded.dictionary) + 1) + part, return_inverse=True)
        code = code.astype(np.int64).reshape(-1)
    distinct = int(code.max()) + 1 if n else 0
    if per_row is not None and distinct > PER_ROW_ABOVE and distinct * 16 > n:
        out = per_row()
        return out.cast(out_type) if out.type != out_type else out
    order = np.argsort(code, kind="stable")
    starts = np.flatnonzero(np.r_[True, code[order][1:] != code[order][:-1]]) if n else np.zeros(0, np.int64)
    ends = np.r_[starts[1:], n]
    pieces = []
    for start, end in zip(starts, ends, strict=True):
        rows = order[start:end]
        scalars = [p if isinstance(p, pa.Scalar) else p[int(rows[0])] for p in parameters]
        piece = run(rows, scalars)
        piece = broadcast(piece, len(rows))
        pieces.append(piece.cast(out_type) if piece.type != out_type else piece)
    if not pieces:
        return pa.array([], out_type)
    inverse = np.empty(n, np.int64)
    inverse[order] = np.arange(n)
    return pa.concat_arrays(pieces).take(pa.array(inverse))


def rows_of(v: Value, rows: np.ndarray | None) -> Value:
    """v's values at `rows` (v itself when it is a scalar or rows is None)."""
    if rows is None or isinstance(v, pa.Scalar):
        return v
    return v.take(pa.array(rows, pa.int64()))


def affix_match(v: Value, affix: Value, at_end: bool) -> Value:
    """starts_with / ends_with with a per-row affix, over the UTF-8 bytes with numpy (a prefix of the bytes is a
    prefix of the characters): every affix byte is compared with the text byte it lines up with."""
    n = max(len(x) for x in (v, affix) if not isinstance(x, pa.Scalar))
    text, fix = string_array(broadcast(v, n)), string_array(broadcast(affix, n))
    t_off, t_data = byte_layout(text)
    a_off, a_data = byte_layout(fix)
    t_len, a_len = np.diff(t_off), np.diff(a_off)
    fits = a_len <= t_len
    size = np.where(fits, a_len, 0)
    total = int(size.sum())
    row = np.repeat(np.arange(n), size)
    within = np.arange(total) - np.repeat(np.cumsum(size) - size, size)
    start = t_off[:-1] + (t_len - a_len if at_end else 0)
    differ = t_data[start[row] + within] != a_data[a_off[:-1][row] + within] if total else np.zeros(0, bool)
    mismatched = np.bincount(row[differ], minlength=n) > 0 if total else np.zeros(n, bool)
    valid = pc.and_(pc.is_valid(text), pc.is_valid(fix)).to_numpy(zero_copy_only=False)
    return pa.array(fits & ~mismatched, pa.bool_(), mask=~valid)
