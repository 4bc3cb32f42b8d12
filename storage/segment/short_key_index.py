"""Short key (prefix) index: a sparse index holding, every 1024 rows, the first row's short-key prefix
encoded so that byte order equals key order (Doris short_key_index).

Field encoding, concatenated over the short-key columns:
  NULL      -> 0x01                        (Doris KEY_NULL_FIRST_MARKER: NULL sorts first)
  non-NULL  -> 0x02 + value bytes          (KEY_NORMAL_MARKER)
  integers, dates, timestamps, booleans: big-endian, sign bit flipped, at the type's storage width;
  DECIMAL(p, s): the unscaled integer the same way, 4 / 8 / 16 bytes for p <= 9 / 18 / 38 (DECIMAL32/64/128);
  VARCHAR / CHAR: the first 20 bytes (Doris's varchar index length). A string column ends the prefix
  (Doris rule), so its bytes are the last thing in an entry and need no escaping or terminator.
FLOAT / DOUBLE cannot be keys; one ends the prefix before it. Truncation keeps the encoding monotone
(a <= b implies enc(a) <= enc(b)), which is all a superset search needs.

On disk: one INDEX page; body = offsets uint32[n + 1] | concatenated entries.
"""

from __future__ import annotations

import bisect
import functools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from storage.errors import CorruptDataError
from storage.predicate import ColumnPredicate, Op
from storage.segment.page import PageEncoding, build_page
from storage.segment.row_ranges import RowRanges
from storage.segment.zone_map import INT_RANGES, plain_int, to_scalar

ROWS_PER_ENTRY = 1024
VARCHAR_PREFIX_BYTES = 20
NULL_MARKER = b"\x01"
NORMAL_MARKER = 0x02
MAX_KEY_RANGES = 1024  # IN lists multiply; beyond this the later columns are not used


def _is_fixed(t: pa.DataType) -> bool:
    return (pa.types.is_integer(t) or pa.types.is_date32(t) or pa.types.is_timestamp(t)
            or pa.types.is_boolean(t) or pa.types.is_decimal128(t))


def short_key_columns(schema: pa.Schema, num_key_columns: int, num_short_key_columns: int) -> int:
    """How many leading columns the index really encodes: stops before a float, after a string."""
    count = 0
    for f in list(schema)[:min(num_short_key_columns, num_key_columns)]:
        if pa.types.is_string(f.type):
            return count + 1
        if not _is_fixed(f.type):
            break
        count += 1
    return count


def _decimal_width(t: pa.Decimal128Type) -> int:
    return 4 if t.precision <= 9 else 8 if t.precision <= 18 else 16


def _big_endian_flipped(v: np.ndarray, width: int) -> np.ndarray:
    """(n, width) uint8 rows whose byte order equals the signed order of v."""
    u = v.astype(f"<i{width}").view(f"<u{width}") ^ np.array(1 << (8 * width - 1), f"<u{width}")
    return u.astype(f">u{width}").view(np.uint8).reshape(len(v), width)


def _field_bytes(arr: pa.Array) -> list[bytes]:
    """The encoded field (marker + value) of each row of a small array (the sampled rows)."""
    t = arr.type
    n = len(arr)
    if pa.types.is_string(t):
        values = [None if v is None else v.encode()[:VARCHAR_PREFIX_BYTES] for v in arr.to_pylist()]
        return [NULL_MARKER if v is None else bytes([NORMAL_MARKER]) + v for v in values]
    nulls = arr.is_null().to_numpy(zero_copy_only=False) if arr.null_count else None
    if pa.types.is_boolean(t):
        body = np.asarray(arr.fill_null(False).to_numpy(zero_copy_only=False), np.uint8).reshape(n, 1)
    elif pa.types.is_decimal128(t):
        raw = np.frombuffer(arr.buffers()[1], np.int64, count=2 * n, offset=arr.offset * 16).reshape(n, 2)
        width = _decimal_width(t)
        if width < 16:
            body = _big_endian_flipped(raw[:, 0], width)
        else:
            high = _big_endian_flipped(raw[:, 1], 8)
            low = raw[:, 0].view(np.uint64).astype(">u8").view(np.uint8).reshape(n, 8)
            body = np.concatenate([high, low], axis=1)
    else:
        width = t.bit_width // 8
        lane = np.int32 if pa.types.is_date32(t) else np.int64 if pa.types.is_timestamp(t) else None
        v = np.frombuffer(arr.buffers()[1], lane or np.dtype(t.to_pandas_dtype()), count=n,
                          offset=arr.offset * width)
        body = _big_endian_flipped(v, width)
    rows = np.concatenate([np.full((n, 1), NORMAL_MARKER, np.uint8), body], axis=1)
    return [NULL_MARKER if nulls is not None and nulls[i] else rows[i].tobytes() for i in range(n)]


def encode_rows(columns: Sequence[pa.Array]) -> list[bytes]:
    """Encoded short keys of the given rows (same-length arrays, one per short-key column)."""
    if not columns:
        return []
    per_column = [_field_bytes(col) for col in columns]
    return [b"".join(parts) for parts in zip(*per_column, strict=True)]


def encode_value(value: object, arrow_type: pa.DataType) -> bytes | None:
    """One predicate value as an encoded field, or None when it cannot be represented exactly. Memoised
    (keyed with the value's Python type: 1, 1.0 and True hash alike): a scan encodes the same predicate
    values for every segment it narrows."""
    try:
        return _encode_value(value, type(value), arrow_type)
    except TypeError:  # unhashable
        return _encode_value.__wrapped__(value, type(value), arrow_type)


@functools.lru_cache(maxsize=1024)
def _encode_value(value: object, kind: type, arrow_type: pa.DataType) -> bytes | None:
    if plain_int(value, arrow_type):  # a point query's key, without Arrow
        # the sign bit flipped, big-endian: the order of the bytes is the order of the values
        return bytes((NORMAL_MARKER,)) + (value - INT_RANGES[arrow_type][0]).to_bytes(arrow_type.bit_width // 8,
                                                                                       "big")
    s = to_scalar(value, arrow_type)
    if s is None:
        return None
    return _field_bytes(pa.array([s], type=arrow_type))[0]


def build_short_key_page(key_columns: Sequence[pa.Array], num_rows: int) -> bytes | None:
    """The index page for a segment's key columns, or None when the sampled keys are not ascending
    (data sorted with NULLs last, say): a wrong index would drop rows, a missing one only costs time."""
    sample_idx = pa.array(np.arange(0, num_rows, ROWS_PER_ENTRY, dtype=np.int64))
    entries = encode_rows([c.take(sample_idx) for c in key_columns])
    if any(a > b for a, b in zip(entries, entries[1:], strict=False)):
        return None
    offsets = np.zeros(len(entries) + 1, np.uint32)
    np.cumsum([len(e) for e in entries], out=offsets[1:])
    return build_page(PageEncoding.INDEX, len(entries), offsets.tobytes() + b"".join(entries))


@dataclass
class _Bounds:
    eq: set[bytes] | None = None
    lower: bytes | None = None
    upper: bytes | None = None
    usable: bool = True


@dataclass
class ShortKeyIndex:
    entries: list[bytes]
    fields: list[pa.Field]
    num_rows: int

    @classmethod
    def decode(cls, body: bytes | memoryview, num_entries: int, fields: list[pa.Field],
               num_rows: int) -> ShortKeyIndex:
        try:
            offsets = np.frombuffer(body, np.uint32, count=num_entries + 1).astype(np.int64)
        except ValueError as e:
            raise CorruptDataError(f"malformed short key index: {e}") from e
        data = bytes(memoryview(body)[4 * (num_entries + 1):])
        if (num_entries != (num_rows + ROWS_PER_ENTRY - 1) // ROWS_PER_ENTRY or offsets[0] != 0
                or offsets[-1] != len(data) or np.any(np.diff(offsets) < 0)):
            raise CorruptDataError("short key index is inconsistent")
        bounds = offsets.tolist()
        entries = [data[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
        return cls(entries, fields, num_rows)

    def _column_bounds(self, f: pa.Field, preds: list[ColumnPredicate]) -> _Bounds:
        b = _Bounds()
        for p in preds:
            if p.op == Op.IN and len(p.values) > MAX_KEY_RANGES:
                # too many points to seek one by one (and to encode per segment): their span instead
                try:
                    low, high = min(p.values), max(p.values)
                except TypeError:
                    continue
                lo, hi = encode_value(low, f.type), encode_value(high, f.type)
                if lo is not None and hi is not None:
                    b.lower = lo if b.lower is None else max(b.lower, lo)
                    b.upper = hi if b.upper is None else min(b.upper, hi)
            elif p.op in (Op.EQ, Op.IN):
                encoded = [encode_value(v, f.type) for v in p.values]
                if any(e is None for e in encoded):
                    continue
                values = set(encoded)
                b.eq = values if b.eq is None else b.eq & values
            elif p.op in (Op.GT, Op.GE, Op.LT, Op.LE):
                e = encode_value(p.value, f.type)
                if e is None:
                    continue
                # strictness is ignored: the result only has to be a superset
                if p.op in (Op.GT, Op.GE):
                    b.lower = e if b.lower is None else max(b.lower, e)
                else:
                    b.upper = e if b.upper is None else min(b.upper, e)
        return b

    def row_ranges(self, predicates: Sequence[ColumnPredicate]) -> RowRanges | None:
        """Rows that may satisfy the AND of `predicates`, from the prefix columns they constrain;
        None when no predicate constrains the first short-key column."""
        prefixes = [b""]
        lower = upper = None
        used = False
        for f in self.fields:
            b = self._column_bounds(f, [p for p in predicates if p.column == f.name])
            if b.eq is not None:
                if not b.eq:
                    return RowRanges.empty()
                if len(prefixes) * len(b.eq) > MAX_KEY_RANGES:
                    break
                prefixes = [p + e for p in prefixes for e in sorted(b.eq)]
                used = True
                continue
            if b.lower is not None or b.upper is not None:
                lower, upper, used = b.lower, b.upper, True
            break
        if not used:
            return None
        bounds = [self._rows_between(p + (lower or b""), _upper_end(p, upper)) for p in prefixes]
        if len(bounds) == 1:  # one range (a point query's): nothing to sort or merge
            s, e = bounds[0]
            return RowRanges._trusted(np.array([s], np.int64), np.array([e], np.int64), e - s) if e > s \
                else RowRanges.empty()
        return RowRanges([s for s, _ in bounds], [e for _, e in bounds])

    def _rows_between(self, lo: bytes, hi: bytes | None) -> tuple[int, int]:
        # rows before the last entry < lo are all < lo; rows from the first entry > hi on are all > hi
        start = max(bisect.bisect_left(self.entries, lo) - 1, 0) if lo else 0
        end = bisect.bisect_right(self.entries, hi) if hi is not None else len(self.entries)
        return start * ROWS_PER_ENTRY, min(end * ROWS_PER_ENTRY, self.num_rows)


def _upper_end(prefix: bytes, upper: bytes | None) -> bytes | None:
    """The encoded key past every key starting with `prefix` (and at most `upper` after it); None: no end."""
    if upper is not None:
        return prefix + upper + b"\xff"
    return prefix + b"\xff" if prefix else None
