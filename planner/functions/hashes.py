"""Hash functions: md5, sha1 / sha, sha2 (224 / 256 / 384 / 512), crc32, murmur_hash3_32 / murmur_hash3_64
(Doris's seeds, several arguments chained). One hash per distinct value (planner.functions.columnwise)."""

from __future__ import annotations

import hashlib
import zlib
from collections.abc import Callable

import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from planner.expressions import Evaluator, register, register_name
from planner.functions.casts import convert, to_string
from planner.functions.columnwise import per_distinct
from planner.functions.time_units import arguments
from planner.values import Value, broadcast
from sql.errors import analysis_error

MURMUR3_32_SEED = 104729  # Doris's HashUtil::MURMUR3_32_SEED


def _digest(algorithm: str) -> Callable[[str], str]:
    return lambda s: hashlib.new(algorithm, s.encode()).hexdigest()


def _text(v: Value) -> Value:
    return to_string(v)


@register(exp.MD5)
@register_name("md5")
def _md5(ev: Evaluator, e: exp.Expression) -> Value:
    values = [_text(ev.eval(n)) for n in arguments(e, "md5", 1, 1 << 16)]
    return per_distinct(_joined(values), _digest("md5"), pa.string())


@register(exp.SHA)
@register_name("sha1", "sha")
def _sha1(ev: Evaluator, e: exp.Expression) -> Value:
    (node,) = arguments(e, "sha1", 1, 1)
    return per_distinct(_text(ev.eval(node)), _digest("sha1"), pa.string())


@register(exp.SHA2)
def _sha2(ev: Evaluator, e: exp.SHA2) -> Value:
    v = _text(ev.eval(e.this))
    length_node = e.args.get("length")
    bits = ev.eval(length_node) if length_node is not None else pa.scalar(256)
    if not isinstance(bits, pa.Scalar):
        raise analysis_error("the second argument of sha2 must be a literal")
    n = convert(bits, pa.int64()).as_py()
    if n not in (224, 256, 384, 512):
        raise analysis_error(f"sha2 functions only support digest length of [224, 256, 384, 512], got {n}")
    return per_distinct(v, _digest(f"sha{n}"), pa.string())


@register_name("crc32")
def _crc32(ev: Evaluator, e: exp.Expression) -> Value:
    (node,) = arguments(e, "crc32", 1, 1)
    return per_distinct(_text(ev.eval(node)), lambda s: zlib.crc32(s.encode()), pa.int64())


def _joined(values: list[Value]) -> Value:
    """md5(a, b, ...) hashes the concatenation (NULL when any argument is NULL)."""
    if len(values) == 1:
        return values[0]
    return pc.binary_join_element_wise(*values, "")


# -- MurmurHash3 ---------------------------------------------------------------------------------------

_M32 = 0xFFFFFFFF
_M64 = 0xFFFFFFFFFFFFFFFF


def _rotl32(x: int, r: int) -> int:
    return ((x << r) | (x >> (32 - r))) & _M32


def murmur3_32(data: bytes, seed: int) -> int:
    """MurmurHash3_x86_32 as a signed 32-bit integer."""
    c1, c2 = 0xCC9E2D51, 0x1B873593
    h = seed & _M32
    n = len(data) // 4 * 4
    for i in range(0, n, 4):
        k = int.from_bytes(data[i: i + 4], "little")
        k = (_rotl32((k * c1) & _M32, 15) * c2) & _M32
        h = (_rotl32(h ^ k, 13) * 5 + 0xE6546B64) & _M32
    tail = data[n:]
    if tail:
        k = int.from_bytes(tail, "little")
        h ^= (_rotl32((k * c1) & _M32, 15) * c2) & _M32
    h ^= len(data)
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & _M32
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & _M32
    h ^= h >> 16
    return h - (1 << 32) if h >= 1 << 31 else h


def _rotl64(x: int, r: int) -> int:
    return ((x << r) | (x >> (64 - r))) & _M64


def _fmix64(k: int) -> int:
    k ^= k >> 33
    k = (k * 0xFF51AFD7ED558CCD) & _M64
    k ^= k >> 33
    k = (k * 0xC4CEB9FE1A85EC53) & _M64
    return k ^ (k >> 33)


def murmur3_64(data: bytes, seed: int) -> int:
    """Doris's murmur_hash3_x64_64: MurmurHash3's 64-bit mixing over 8-byte blocks, signed."""
    c1, c2 = 0x87C37B91114253D5, 0x4CF5AD432745937F
    h = seed & _M64
    n = len(data) // 8 * 8
    for i in range(0, n, 8):
        k = int.from_bytes(data[i: i + 8], "little")
        h ^= (_rotl64((k * c1) & _M64, 31) * c2) & _M64
        h = (_rotl64(h, 27) * 5 + 0x52DCE729) & _M64
    tail = data[n:]
    if tail:
        k = int.from_bytes(tail, "little")
        h ^= (_rotl64((k * c1) & _M64, 31) * c2) & _M64
    h = _fmix64(h ^ len(data))
    return h - (1 << 64) if h >= 1 << 63 else h


def _murmur(name: str, fn: Callable[[bytes, int], int], seed: int, out: pa.DataType):  # noqa: ANN202
    def handler(ev: Evaluator, e: exp.Expression) -> Value:
        values = [_text(ev.eval(n)) for n in arguments(e, name, 1, 1 << 16)]
        h: Value = per_distinct(values[0], lambda s: fn(s.encode(), seed), out)
        for v in values[1:]:  # each further argument is hashed with the previous hash as its seed
            scalar = isinstance(h, pa.Scalar) and isinstance(v, pa.Scalar)
            n = 1 if scalar else max(len(x) for x in (h, v) if not isinstance(x, pa.Scalar))
            key = pc.binary_join_element_wise(pc.cast(broadcast(h, n), pa.string()), broadcast(v, n), "\x00")
            h = per_distinct(key, lambda k: fn(k.split("\x00", 1)[1].encode(), int(k.split("\x00", 1)[0])), out)
            h = h[0] if scalar else h
        return h

    return handler


register_name("murmur_hash3_32")(_murmur("murmur_hash3_32", murmur3_32, MURMUR3_32_SEED, pa.int32()))
register_name("murmur_hash3_64")(_murmur("murmur_hash3_64", murmur3_64, 0, pa.int64()))
