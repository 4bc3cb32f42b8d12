"""128-bit integers in decimal128(38, 0) arrays (how LARGEINT is stored: Arrow has no int128).

The 16 bytes of a decimal128 hold every int128, and Arrow's compare, sort, min / max and cast-to-text kernels
work on the raw value; only building one from a Python value checks 38 digits. These build the 39-digit
values (up to 2^127 - 1) from their two's complement bytes instead.
"""

from __future__ import annotations

import decimal
from collections.abc import Sequence
from typing import Any

import pyarrow as pa

INT128_MAX = (1 << 127) - 1
_MASK = (1 << 128) - 1
INT128 = pa.decimal128(38, 0)


def int128_array(values: Sequence[int | None], arrow_type: pa.DataType = INT128) -> pa.Array:
    """Integers in [-(2^127 - 1), 2^127 - 1] (or None) as a scale-0 decimal128 array."""
    raw = b"".join(((v or 0) & _MASK).to_bytes(16, "little") for v in values)
    valid = pa.array([v is not None for v in values]).buffers()[1] if None in values else None
    return pa.Array.from_buffers(arrow_type, len(values), [valid, pa.py_buffer(raw)])


def as_int128(value: Any, arrow_type: pa.DataType) -> int | None:
    """`value` (a number or its text) as the integer a scale-0 decimal128 column holds, else None."""
    if not (pa.types.is_decimal128(arrow_type) and arrow_type.scale == 0) or isinstance(value, bool):
        return None
    if isinstance(value, str):  # a stored bound or list value
        try:
            value = int(value.strip())
        except ValueError:
            return None
    if isinstance(value, decimal.Decimal) and value.is_finite() and value == value.to_integral_value():
        value = int(value)
    if isinstance(value, int) and abs(value) <= INT128_MAX:
        return value
    return None


def wide_scalar(value: Any, arrow_type: pa.DataType) -> pa.Scalar | None:
    """A 39-digit integer as a scalar of a scale-0 decimal128 type (None for anything else)."""
    v = as_int128(value, arrow_type)
    return None if v is None else int128_array([v], arrow_type)[0]


def values_array(values: Sequence[Any], arrow_type: pa.DataType) -> pa.Array:
    """pa.array(values, arrow_type), also for a LARGEINT column's 39-digit values."""
    try:
        return pa.array(values, type=arrow_type)
    except pa.ArrowInvalid:
        wide = [as_int128(v, arrow_type) for v in values]
        if any(w is None and v is not None for w, v in zip(wide, values, strict=True)):
            raise
        return int128_array(wide, arrow_type)
