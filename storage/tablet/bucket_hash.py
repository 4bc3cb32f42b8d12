"""The one bucket function: bucket = pmod(Spark's murmur3 hash(cols...; seed 42), n_buckets).

Spark's `repartition(n, *cols)` puts a row in partition `pmod(hash(cols), n)`; computing exactly the same
number here lets the Spark load path, the in-process load path and bucket pruning agree on where a row
lives (DESIGN.md "Bucket hash"). Everything is vectorized over Arrow buffers with numpy uint32 arithmetic
(which wraps like Java ints).

Per-type rules follow Spark's `HashExpression` (Murmur3Hash):
  bool -> hashInt(0/1); int8/16/32, date32 -> hashInt; int64, timestamp (as micros) -> hashLong;
  float -> hashInt(floatToIntBits) with -0.0 as 0; double -> hashLong(doubleToLongBits) with -0.0 as 0;
  decimal p <= 18 -> hashLong(unscaled); decimal p > 18 -> hashUnsafeBytes(BigInteger.toByteArray);
  string/binary -> hashUnsafeBytes(utf8 bytes); NULL -> running hash unchanged.
"""

from __future__ import annotations

import decimal
from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from storage.int128 import values_array

SPARK_HASH_SEED = 42

_C1 = np.uint32(0xCC9E2D51)
_C2 = np.uint32(0x1B873593)
_M5 = np.uint32(0xE6546B64)
_F1 = np.uint32(0x85EBCA6B)
_F2 = np.uint32(0xC2B2AE35)


def _rotl(x: np.ndarray, r: int) -> np.ndarray:
    return (x << np.uint32(r)) | (x >> np.uint32(32 - r))


def _mix_k1(k1: np.ndarray) -> np.ndarray:
    k1 = k1 * _C1
    k1 = _rotl(k1, 15)
    return k1 * _C2


def _mix_h1(h1: np.ndarray, k1: np.ndarray) -> np.ndarray:
    h1 = h1 ^ k1
    h1 = _rotl(h1, 13)
    return h1 * np.uint32(5) + _M5


def _fmix(h1: np.ndarray, length: np.ndarray | int) -> np.ndarray:
    h1 = h1 ^ np.asarray(length).astype(np.uint32)
    h1 = h1 ^ (h1 >> np.uint32(16))
    h1 = h1 * _F1
    h1 = h1 ^ (h1 >> np.uint32(13))
    h1 = h1 * _F2
    return h1 ^ (h1 >> np.uint32(16))


def _hash_int(values: np.ndarray, seed: np.ndarray) -> np.ndarray:
    """Murmur3_x86_32.hashInt: values int32-like, seed uint32 per row."""
    k1 = _mix_k1(values.astype(np.int32).view(np.uint32))
    return _fmix(_mix_h1(seed, k1), 4)


def _hash_long(values: np.ndarray, seed: np.ndarray) -> np.ndarray:
    """Murmur3_x86_32.hashLong: low word then high word."""
    v = values.astype(np.int64).view(np.uint64)
    low = (v & np.uint64(0xFFFFFFFF)).astype(np.uint32)
    high = (v >> np.uint64(32)).astype(np.uint32)
    h1 = _mix_h1(seed, _mix_k1(low))
    h1 = _mix_h1(h1, _mix_k1(high))
    return _fmix(h1, 8)


def _hash_bytes(data: np.ndarray, starts: np.ndarray, lengths: np.ndarray, seed: np.ndarray) -> np.ndarray:
    """Spark's hashUnsafeBytes: little-endian 4-byte words, then each tail byte (sign-extended) as a
    full mixK1/mixH1 round — unlike standard murmur3's tail. Vectorized by word position: rows are
    processed longest-first so each word round works on a prefix of the (sorted) rows."""
    n = len(lengths)
    h1 = seed.copy()
    if n == 0:
        return h1
    data = np.concatenate([data.astype(np.uint8, copy=False), np.zeros(4, np.uint8)])  # safe over-read
    n_words = lengths // 4
    order = np.argsort(-n_words, kind="stable")
    sorted_words = n_words[order]
    sorted_starts = starts[order].astype(np.int64)
    h_sorted = h1[order]
    max_words = int(sorted_words[0]) if n else 0
    # count of rows having more than j words, for each j: a prefix of the sorted rows
    active_counts = np.searchsorted(-sorted_words, -np.arange(max_words), side="left")
    for j in range(max_words):
        m = int(active_counts[j])
        pos = sorted_starts[:m] + 4 * j
        word = (
            data[pos].astype(np.uint32)
            | (data[pos + 1].astype(np.uint32) << np.uint32(8))
            | (data[pos + 2].astype(np.uint32) << np.uint32(16))
            | (data[pos + 3].astype(np.uint32) << np.uint32(24))
        )
        h_sorted[:m] = _mix_h1(h_sorted[:m], _mix_k1(word))
    h1[order] = h_sorted
    tails = lengths % 4
    aligned = starts.astype(np.int64) + n_words.astype(np.int64) * 4
    for t in range(3):
        idx = np.nonzero(tails > t)[0]
        if len(idx) == 0:
            break
        byte = data[aligned[idx] + t].view(np.int8).astype(np.int32).view(np.uint32)  # Java byte is signed
        h1[idx] = _mix_h1(h1[idx], _mix_k1(byte))
    return _fmix(h1, lengths)


def _binary_parts(arr: pa.Array) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(data bytes, start offsets, lengths) of a string/binary array, honouring the array's slice offset."""
    if pa.types.is_large_string(arr.type) or pa.types.is_large_binary(arr.type):
        off_type = np.int64
    else:
        off_type = np.int32
    buffers = arr.buffers()
    offsets = np.frombuffer(buffers[1], dtype=off_type)[arr.offset : arr.offset + len(arr) + 1]
    data = np.frombuffer(buffers[2], dtype=np.uint8) if buffers[2] is not None else np.zeros(0, np.uint8)
    starts = offsets[:-1].astype(np.int64)
    lengths = (offsets[1:] - offsets[:-1]).astype(np.int64)
    return data, starts, lengths


def _decimal_words(arr: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(low int64 as uint64, high int64) of each decimal128 value."""
    raw = np.frombuffer(arr.buffers()[1], dtype=np.uint64)[2 * arr.offset : 2 * (arr.offset + len(arr))]
    raw = raw.reshape(-1, 2)
    return raw[:, 0].copy(), raw[:, 1].view(np.int64).copy()


def _hash_big_decimal(arr: pa.Array, seed: np.ndarray) -> np.ndarray:
    """Spark hashes a wide decimal as hashUnsafeBytes(unscaledValue().toByteArray()):
    the minimal big-endian two's complement bytes of the 128-bit unscaled value."""
    low, high = _decimal_words(arr)
    # bit length of the value in two's complement sense: of x for x >= 0, of ~x for x < 0
    neg = high < 0
    mag_low = np.where(neg, ~low, low)
    mag_high = np.where(neg, ~high, high).view(np.uint64)
    bitlen = np.where(
        mag_high != 0,
        64 + _bit_length_u64(mag_high),
        _bit_length_u64(mag_low),
    )
    nbytes = bitlen // 8 + 1
    # 16 big-endian bytes per value, then take the last nbytes of each
    be = np.empty((len(low), 16), dtype=np.uint8)
    be[:, :8] = high.view(np.uint64).astype(">u8").view(np.uint8).reshape(-1, 8)
    be[:, 8:] = low.astype(">u8").view(np.uint8).reshape(-1, 8)
    starts = np.arange(len(low), dtype=np.int64) * 16 + (16 - nbytes)
    return _hash_bytes(be.reshape(-1), starts, nbytes.astype(np.int64), seed)


def _bit_length_u64(x: np.ndarray) -> np.ndarray:
    out = np.zeros(len(x), dtype=np.int64)
    v = x.copy()
    for shift in (32, 16, 8, 4, 2, 1):
        big = v >= (np.uint64(1) << np.uint64(shift))
        out += np.where(big, shift, 0)
        v = np.where(big, v >> np.uint64(shift), v)
    return out + (v > 0).astype(np.int64)


def _hash_array(arr: pa.Array, seed: np.ndarray) -> np.ndarray:
    """Hash one column into the running seeds (uint32 per row); NULL rows keep their seed."""
    t = arr.type
    if pa.types.is_dictionary(t):
        arr = arr.cast(t.value_type)
        t = arr.type
    if pa.types.is_null(t):
        return seed
    valid = None
    if arr.null_count:
        valid = np.asarray(arr.is_valid())
        arr = arr.fill_null(_zero_of(t))
    if pa.types.is_boolean(t):
        out = _hash_int(np.asarray(arr, dtype=np.int32), seed)
    elif pa.types.is_int8(t) or pa.types.is_int16(t) or pa.types.is_int32(t):
        out = _hash_int(np.asarray(arr).astype(np.int32), seed)
    elif pa.types.is_uint8(t) or pa.types.is_uint16(t):
        out = _hash_int(np.asarray(arr).astype(np.int32), seed)
    elif pa.types.is_int64(t) or pa.types.is_uint32(t) or pa.types.is_uint64(t):
        out = _hash_long(np.asarray(arr).astype(np.int64), seed)
    elif pa.types.is_date32(t):
        out = _hash_int(np.asarray(arr.view(pa.int32())), seed)
    elif pa.types.is_date64(t):
        out = _hash_int(np.asarray(arr.cast(pa.date32()).view(pa.int32())), seed)
    elif pa.types.is_timestamp(t):
        micros = arr.cast(pa.timestamp("us", t.tz), safe=False).view(pa.int64())
        out = _hash_long(np.asarray(micros), seed)
    elif pa.types.is_float32(t) or pa.types.is_float16(t):
        f = np.asarray(arr).astype(np.float32)
        f = np.where(f == 0, np.float32(0), f)  # -0.0 == 0.0: both hash as 0
        bits = f.view(np.int32)
        bits = np.where(np.isnan(f), np.int32(0x7FC00000), bits)  # Java's canonical NaN
        out = _hash_int(bits, seed)
    elif pa.types.is_float64(t):
        d = np.asarray(arr).astype(np.float64)
        d = np.where(d == 0, 0.0, d)
        bits = d.view(np.int64)
        bits = np.where(np.isnan(d), np.int64(0x7FF8000000000000), bits)
        out = _hash_long(bits, seed)
    elif pa.types.is_decimal128(t):
        if t.precision <= 18:
            low, _ = _decimal_words(arr)
            out = _hash_long(low.view(np.int64), seed)
        else:
            out = _hash_big_decimal(arr, seed)
    elif pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t) or pa.types.is_large_binary(t):
        data, starts, lengths = _binary_parts(arr)
        out = _hash_bytes(data, starts, lengths, seed)
    else:
        raise TypeError(f"bucket hash does not support Arrow type {t}")
    return out if valid is None else np.where(valid, out, seed)


def _zero_of(t: pa.DataType) -> pa.Scalar:
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return pa.scalar("", t)
    if pa.types.is_binary(t) or pa.types.is_large_binary(t):
        return pa.scalar(b"", t)
    if pa.types.is_boolean(t):
        return pa.scalar(False)
    if pa.types.is_decimal(t):
        return pa.scalar(decimal.Decimal(0), t)
    if pa.types.is_date32(t):
        return pa.scalar(0, pa.int32()).cast(t)
    if pa.types.is_date64(t) or pa.types.is_timestamp(t):
        return pa.scalar(0, pa.int64()).cast(t)
    return pa.scalar(0).cast(t)


def _combine(col: pa.Array | pa.ChunkedArray) -> pa.Array:
    if isinstance(col, pa.ChunkedArray):
        return col.combine_chunks() if col.num_chunks != 1 else col.chunk(0)
    return col


def spark_hash(columns: Sequence[pa.Array | pa.ChunkedArray], seed: int = SPARK_HASH_SEED) -> np.ndarray:
    """Spark's `hash(c1, c2, ...)` as int32: each column's hash is the seed of the next."""
    if not columns:
        raise ValueError("spark_hash needs at least one column")
    n = len(columns[0])
    h = np.full(n, np.uint32(seed & 0xFFFFFFFF), dtype=np.uint32)
    for col in columns:
        h = _hash_array(_combine(col), h)
    return h.view(np.int32)


_M32 = 0xFFFFFFFF
# integer types hashed as Java ints / longs, with the range of values each holds
_INT_WIDTH = {pa.int8(): (4, -(1 << 7), 1 << 7), pa.int16(): (4, -(1 << 15), 1 << 15),
              pa.int32(): (4, -(1 << 31), 1 << 31), pa.uint8(): (4, 0, 1 << 8), pa.uint16(): (4, 0, 1 << 16),
              pa.int64(): (8, -(1 << 63), 1 << 63), pa.uint32(): (8, 0, 1 << 32), pa.uint64(): (8, 0, 1 << 64)}
_SCALAR_MAX_ROWS = 8  # up to here Python ints beat ~25 numpy calls on tiny arrays (~3 us vs ~45 per value)


def _scalar_round(h1: int, k1: int) -> int:
    """mixK1 then mixH1 of Murmur3_x86_32 on Python ints (the numpy _mix_k1 / _mix_h1 above)."""
    k1 = (k1 * 0xCC9E2D51) & _M32
    k1 = ((k1 << 15) | (k1 >> 17)) & _M32
    k1 = (k1 * 0x1B873593) & _M32
    h1 ^= k1
    h1 = ((h1 << 13) | (h1 >> 19)) & _M32
    return (h1 * 5 + 0xE6546B64) & _M32


def _scalar_fmix(h1: int, length: int) -> int:
    h1 ^= length
    h1 ^= h1 >> 16
    h1 = (h1 * 0x85EBCA6B) & _M32
    h1 ^= h1 >> 13
    h1 = (h1 * 0xC2B2AE35) & _M32
    return h1 ^ (h1 >> 16)


def spark_hash_values(rows: Sequence[tuple], types: Sequence[pa.DataType]) -> np.ndarray:
    """spark_hash of value tuples (bucket pruning's `k = 5`, `k IN (...)`). A few tuples of integers are
    hashed on Python ints, the same rounds as _hash_int / _hash_long (tests compare both on every integer
    type); anything else through Arrow arrays."""
    widths = [w for w in map(_INT_WIDTH.get, types) if w is not None]
    if len(rows) <= _SCALAR_MAX_ROWS and len(widths) == len(types) and all(
            v is None or (type(v) is int and lo <= v < hi) for row in rows
            for v, (_, lo, hi) in zip(row, widths, strict=True)):
        out = []
        for row in rows:
            h1 = SPARK_HASH_SEED
            for v, (width, _, _) in zip(row, widths, strict=True):
                if v is None:  # NULL leaves the running hash as it is
                    continue
                if width == 4:
                    h1 = _scalar_fmix(_scalar_round(h1, v & _M32), 4)
                else:
                    v &= 0xFFFFFFFFFFFFFFFF
                    h1 = _scalar_fmix(_scalar_round(_scalar_round(h1, v & _M32), v >> 32), 8)
            out.append(h1)
        return np.array(out, dtype=np.uint32).view(np.int32)
    return spark_hash([values_array([row[i] for row in rows], t) for i, t in enumerate(types)])


def pmod(hashes: np.ndarray, n_buckets: int) -> np.ndarray:
    """Spark's pmod: non-negative remainder (numpy's % already takes the divisor's sign)."""
    return (hashes.astype(np.int64) % n_buckets).astype(np.int32)


def hash_buckets(table: pa.Table, columns: Sequence[str], n_buckets: int) -> np.ndarray:
    """Bucket of each row of `table` for DISTRIBUTED BY HASH(columns) BUCKETS n_buckets."""
    return pmod(spark_hash([table.column(c) for c in columns]), n_buckets)


def random_buckets(num_rows: int, n_buckets: int, rng: np.random.Generator | None = None) -> np.ndarray:
    """DISTRIBUTED BY RANDOM: round-robin from a random start, so a load spreads evenly."""
    rng = rng or np.random.default_rng()
    start = int(rng.integers(0, n_buckets))
    return ((np.arange(num_rows, dtype=np.int64) + start) % n_buckets).astype(np.int32)


def literal_bucket(values: Sequence[object], types: Sequence[pa.DataType], n_buckets: int) -> int:
    """Bucket of one tuple of literal values (bucket pruning for `k = literal` predicates)."""
    arrays = [_literal_array(v, t) for v, t in zip(values, types, strict=True)]
    return int(pmod(spark_hash(arrays), n_buckets)[0])


def _literal_array(value: object, t: pa.DataType) -> pa.Array:
    if isinstance(value, pa.Scalar):
        value = value.as_py()
    try:
        return pa.array([value], type=t)
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError):
        return pc.cast(pa.array([value]), t)
