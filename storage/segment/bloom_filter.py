"""Bloom filter index: one block-split bloom filter per data page of a column (Doris BloomFilterIndex).

Filter (Doris BlockSplitBloomFilter): `num_blocks` blocks of 32 bytes = 8 little-endian u32 words, then one
trailing byte, the "has null" flag. A value's 64-bit hash picks the block with its high 32 bits
(`(h >> 32) & (num_blocks - 1)`) and sets one bit per word from its low 32 bits `key`:
word i gets bit `(key * SALT[i]) >> 27` (u32 arithmetic). Size: `-n·ln(fpp)/ln(2)²` bits for n distinct
values, clamped to [32 B, 128 MB] and rounded up to a power of two, so the block index is a mask.

Hash: MurmurHash3 x64 (the 128-bit algorithm's first 64-bit word, what `mmh3.hash64(b, seed, True)[0]`
returns) with Doris's seed, over the value's bytes: fixed-width types as Arrow holds them (ints, dates
as days, timestamps as ticks, decimals as 16-byte two's complement, all little-endian), strings as UTF-8.
`hash64` runs column-wise over 16-byte blocks in numpy, never one Python call per value (except the rare
string longer than `_LONG_STRING_BLOCKS` blocks, which mmh3 hashes faster than a padded column would).

On disk: one INDEX page per column (page.py, crc32) whose body is
    num_filters u32 | hash_strategy u32 | end offsets u32[num_filters] | the filters' bytes, in page order.
Only `=`, `IN` and `IS NULL` can use it; any other predicate keeps every page.
"""

from __future__ import annotations

import functools
import math
import struct
from dataclasses import dataclass

import mmh3
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from storage.errors import CorruptDataError
from storage.predicate import ColumnPredicate, Op
from storage.segment.page import PageEncoding, build_page, read_page
from storage.segment.zone_map import to_scalar

SEED = 1575457558  # Doris BloomFilter DEFAULT_SEED
HASH_MURMUR3_X64_64 = 1  # the only hash strategy written; kept in the page so another can be added later
BYTES_PER_BLOCK = 32
BITS_SET_PER_BLOCK = 8
MIN_BYTES = 32
MAX_BYTES = 128 * 1024 * 1024
DEFAULT_FPP = 0.05
MIN_FPP, MAX_FPP = 0.0001, 0.05  # the range Doris accepts for bloom_filter_fpp (checked by the DDL)
SALT = np.array([0x47B6137B, 0x44974D91, 0x8824AD5B, 0xA2B7289D,
                 0x705495C7, 0x2DF1424B, 0x9EFC4947, 0x5C6BFB31], dtype=np.uint32)

_C1 = np.uint64(0x87C37B91114253D5)
_C2 = np.uint64(0x4CF5AD432745937F)
_LONG_STRING_BLOCKS = 32  # strings over 512 bytes go to mmh3 one by one
_INDEX_HEAD = struct.Struct("<II")
_WORD_INDEXES = np.arange(BITS_SET_PER_BLOCK)
_PROBE_PAIRS = 1 << 16  # (value, page) pairs a filter probe tests per numpy step


# ---------------------------------------------------------------------------------------- hashing

def _rotl(x: np.ndarray, r: int) -> np.ndarray:
    return (x << np.uint64(r)) | (x >> np.uint64(64 - r))


def _fmix(k: np.ndarray) -> np.ndarray:
    k = k ^ (k >> np.uint64(33))
    k = k * np.uint64(0xFF51AFD7ED558CCD)
    k = k ^ (k >> np.uint64(33))
    k = k * np.uint64(0xC4CEB9FE1A85EC53)
    return k ^ (k >> np.uint64(33))


def _mix_k1(k1: np.ndarray) -> np.ndarray:
    return _rotl(k1 * _C1, 31) * _C2


def _mix_k2(k2: np.ndarray) -> np.ndarray:
    return _rotl(k2 * _C2, 33) * _C1


def _block(h1: np.ndarray, h2: np.ndarray, kk: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One full 16-byte block; kk is (n, 2) u64 (the block's two little-endian words)."""
    h1 = h1 ^ _mix_k1(kk[:, 0])
    h1 = _rotl(h1, 27) + h2
    h1 = h1 * np.uint64(5) + np.uint64(0x52DCE729)
    h2 = h2 ^ _mix_k2(kk[:, 1])
    h2 = _rotl(h2, 31) + h1
    h2 = h2 * np.uint64(5) + np.uint64(0x38495AB5)
    return h1, h2


def _finish(h1: np.ndarray, h2: np.ndarray, tail: np.ndarray, length: np.ndarray | int) -> np.ndarray:
    """The zero-padded tail block, then finalization. Mixing a zero word is a no-op (0 * c = 0), so the
    reference's `if tail > 8` / `if tail > 0` branches need no per-row condition here."""
    h2 = h2 ^ _mix_k2(tail[:, 1])
    h1 = h1 ^ _mix_k1(tail[:, 0])
    n = np.asarray(length, dtype=np.uint64)
    h1 = h1 ^ n
    h2 = h2 ^ n
    h1 = h1 + h2
    h2 = h2 + h1
    h1 = _fmix(h1)
    h2 = _fmix(h2)
    return h1 + h2


def _hash_fixed(raw: np.ndarray, seed: int) -> np.ndarray:
    """raw: (n, w) uint8, one row per value."""
    n, w = raw.shape
    nblocks = w // 16
    padded = np.zeros((n, (nblocks + 1) * 16), np.uint8)
    padded[:, :w] = raw
    words = padded.view("<u8")  # (n, 2 * (nblocks + 1))
    h1 = np.full(n, seed, np.uint64)
    h2 = h1.copy()
    for j in range(nblocks):
        h1, h2 = _block(h1, h2, words[:, 2 * j:2 * j + 2])
    return _finish(h1, h2, words[:, 2 * nblocks:], w)


def _hash_binary(arr: pa.Array, seed: int) -> np.ndarray:
    n = len(arr)
    off_type = np.int64 if pa.types.is_large_string(arr.type) or pa.types.is_large_binary(arr.type) else np.int32
    offs = np.frombuffer(arr.buffers()[1], off_type, count=n + 1, offset=arr.offset * np.dtype(off_type).itemsize)
    offs = offs.astype(np.int64)
    lengths = np.diff(offs)
    data_buf = arr.buffers()[2]
    data = np.frombuffer(data_buf, np.uint8) if data_buf is not None and n else np.zeros(0, np.uint8)
    base = int(offs[0]) if n else 0
    # 16 zero bytes after the last value keep every tail gather in bounds
    data = np.concatenate([data[base:int(offs[-1]) if n else 0], np.zeros(16, np.uint8)])
    starts = offs[:-1] - base
    nb = lengths // 16
    out = np.empty(n, np.uint64)
    long_rows = np.flatnonzero(nb > _LONG_STRING_BLOCKS)
    for r in long_rows.tolist():
        s = int(starts[r])
        out[r] = mmh3.hash64(data[s:s + int(lengths[r])].tobytes(), seed, True, signed=False)[0]
    rows = np.flatnonzero(nb <= _LONG_STRING_BLOCKS)
    # rows sorted by block count, most first: the rows still in their body at block j are a prefix
    rows = rows[np.argsort(-nb[rows], kind="stable")]
    s_starts, s_len, s_nb = starts[rows], lengths[rows], nb[rows]
    h1 = np.full(len(rows), seed, np.uint64)
    h2 = h1.copy()
    lanes = np.arange(16, dtype=np.int64)
    neg_nb = -s_nb
    for j in range(int(s_nb[0]) if len(rows) else 0):
        c = int(np.searchsorted(neg_nb, -j, side="left"))  # rows with nb > j
        blk = data[s_starts[:c, None] + (16 * j + lanes)[None, :]].view("<u8")
        h1[:c], h2[:c] = _block(h1[:c], h2[:c], blk)
    tail_start = s_starts + 16 * s_nb
    tail = data[tail_start[:, None] + lanes[None, :]]
    tail[lanes[None, :] >= (s_len - 16 * s_nb)[:, None]] = 0
    out[rows] = _finish(h1, h2, tail.view("<u8"), s_len)
    return out


def hash64(values: pa.Array | pa.ChunkedArray, seed: int = SEED) -> np.ndarray:
    """MurmurHash3 x64 64-bit hash of every value (uint64). Null slots hash whatever their slot holds:
    callers drop nulls first (the filter keeps a separate null flag)."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    t = values.type
    if pa.types.is_dictionary(t):
        return hash64(values.dictionary_decode(), seed)
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t) or pa.types.is_large_binary(t):
        return _hash_binary(values, seed)
    n = len(values)
    if pa.types.is_boolean(t):
        raw = pc.fill_null(values, False).to_numpy(zero_copy_only=False).astype(np.uint8).reshape(n, 1)
        return _hash_fixed(raw, seed)
    try:
        w = t.byte_width
    except ValueError:
        raise TypeError(f"cannot hash values of type {t}") from None
    buf = values.buffers()[1]
    raw = np.frombuffer(buf, np.uint8, count=n * w, offset=values.offset * w) if n else np.zeros(0, np.uint8)
    if pa.types.is_floating(t) and n:
        # -0.0 == 0.0 must hash alike (no false negatives); bloom filters on floats are refused by DDL anyway
        f = raw.view(t.to_pandas_dtype()).copy()
        f[f == 0] = 0
        raw = f.view(np.uint8)
    return _hash_fixed(raw.reshape(n, w), seed)


# ---------------------------------------------------------------------------------------- filter

def optimal_num_bytes(num_distinct: int, fpp: float) -> int:
    """Filter size in bytes (without the null flag) for `num_distinct` values at false-positive rate `fpp`."""
    if not 0 < fpp < 1:
        raise ValueError(f"bloom filter fpp must be in (0, 1), got {fpp}")
    bits = int(-num_distinct * math.log(fpp) / (math.log(2) ** 2))
    bits = min(max(bits, MIN_BYTES * 8), MAX_BYTES * 8)
    bits = 1 << (bits - 1).bit_length()  # next power of two: the block index is a mask
    return bits // 8


def _block_and_masks(hashes: np.ndarray, num_blocks: int) -> tuple[np.ndarray, np.ndarray]:
    block = ((hashes >> np.uint64(32)) & np.uint64(num_blocks - 1)).astype(np.intp)
    key = hashes.astype(np.uint32)  # low 32 bits
    masks = np.left_shift(np.uint32(1), (key[:, None] * SALT[None, :]) >> np.uint32(27))
    return block, masks.astype(np.uint32)


@dataclass
class BloomFilter:
    words: np.ndarray  # uint32, num_blocks * 8, block b = words[8b:8b+8]
    has_null: bool = False

    @classmethod
    def empty(cls, num_distinct: int, fpp: float = DEFAULT_FPP) -> BloomFilter:
        return cls(np.zeros(optimal_num_bytes(num_distinct, fpp) // 4, np.uint32))

    @classmethod
    def build(cls, values: pa.Array, fpp: float = DEFAULT_FPP) -> BloomFilter:
        """The filter of one data page, sized from the page's distinct non-null values (as Doris does)."""
        non_null = pc.drop_null(values) if values.null_count else values
        hashes = hash64(non_null)
        bf = cls.empty(len(np.unique(hashes)), fpp)
        bf.add_hashes(hashes)
        bf.has_null = values.null_count > 0
        return bf

    @property
    def num_blocks(self) -> int:
        return len(self.words) // 8

    @property
    def num_bytes(self) -> int:
        return len(self.words) * 4

    def add_hashes(self, hashes: np.ndarray) -> None:
        if not len(hashes):
            return
        block, masks = _block_and_masks(hashes, self.num_blocks)
        np.bitwise_or.at(self.words.reshape(-1, 8), (block[:, None], np.arange(8)[None, :]), masks)

    def add(self, values: pa.Array) -> None:
        if values.null_count:
            self.has_null = True
            values = pc.drop_null(values)
        self.add_hashes(hash64(values))

    def test_hashes(self, hashes: np.ndarray) -> np.ndarray:
        if not len(hashes):
            return np.zeros(0, bool)
        block, masks = _block_and_masks(hashes, self.num_blocks)
        return ((self.words.reshape(-1, 8)[block] & masks) == masks).all(axis=1)

    def might_contain(self, values: pa.Array) -> np.ndarray:
        """Per value: False when it is certainly not in the filter (a null probe answers the null flag)."""
        out = self.test_hashes(hash64(values))
        if values.null_count:
            out[values.is_null().to_numpy(zero_copy_only=False)] = self.has_null
        return out

    def to_bytes(self) -> bytes:
        return self.words.astype("<u4").tobytes() + (b"\x01" if self.has_null else b"\x00")

    @classmethod
    def from_bytes(cls, buf: bytes | memoryview) -> BloomFilter:
        size = len(buf) - 1
        if size < MIN_BYTES or size > MAX_BYTES or size & (size - 1) or buf[-1] not in (0, 1):
            raise CorruptDataError("malformed bloom filter")
        words = np.frombuffer(buf, "<u4", count=size // 4).astype(np.uint32)
        return cls(words, bool(buf[-1]))


# ---------------------------------------------------------------------------------------- per-page index

class BloomFilterIndexWriter:
    """Collects one filter per data page of a column, in page order; `finish` gives the INDEX page."""

    def __init__(self, fpp: float = DEFAULT_FPP) -> None:
        optimal_num_bytes(0, fpp)  # validates fpp
        self.fpp = fpp
        self._filters: list[bytes] = []

    def add_page(self, values: pa.Array) -> None:
        self._filters.append(BloomFilter.build(values, self.fpp).to_bytes())

    def add_column(self, arr: pa.Array, bounds: np.ndarray) -> None:
        """Filters of the pages [bounds[i], bounds[i+1]) of `arr` (the data pages' row bounds)."""
        for s, e in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
            self.add_page(arr.slice(s, e - s))

    def finish(self) -> bytes:
        ends = np.cumsum([len(f) for f in self._filters], dtype=np.int64)
        if len(ends) and ends[-1] >= 1 << 32:
            raise ValueError("bloom filter index larger than 4 GB")
        body = (_INDEX_HEAD.pack(len(self._filters), HASH_MURMUR3_X64_64) + ends.astype("<u4").tobytes()
                + b"".join(self._filters))
        return build_page(PageEncoding.INDEX, len(self._filters), body)


@functools.lru_cache(maxsize=256)
def _probe_bits(arrow_type: pa.DataType, values: tuple, kinds: tuple) -> tuple[np.ndarray, np.ndarray] | None:
    """Per distinct value of a predicate, in the column's type: the high 32 bits of its hash (which pick the
    block) and the 8 word masks (from the low 32 bits); None when one value does not convert exactly.
    Memoised (keyed with the values' Python types: 1 and 1.0 hash alike yet need not convert alike): a scan
    probes the same values against every segment's filters."""
    scalars = [to_scalar(v, arrow_type) for v in values]
    if any(s is None for s in scalars):
        return None
    hashes = np.unique(hash64(pa.array(scalars, type=arrow_type)))
    _, masks = _block_and_masks(hashes, 1)
    high = hashes >> np.uint64(32)
    high.flags.writeable = False
    masks.flags.writeable = False
    return high, masks


class BloomFilterIndexReader:
    """A column's per-page filters as loaded from its index page (the body, after read_page)."""

    def __init__(self, body: bytes | memoryview, arrow_type: pa.DataType, num_pages: int) -> None:
        body = memoryview(body)
        if len(body) < _INDEX_HEAD.size:
            raise CorruptDataError("malformed bloom filter index: truncated")
        count, strategy = _INDEX_HEAD.unpack_from(body)
        if count != num_pages or strategy != HASH_MURMUR3_X64_64:
            raise CorruptDataError("bloom filter index does not match the column")
        table_end = _INDEX_HEAD.size + 4 * count
        if len(body) < table_end:
            raise CorruptDataError("malformed bloom filter index: truncated")
        ends = np.frombuffer(body, "<u4", count=count, offset=_INDEX_HEAD.size).astype(np.int64)
        starts = np.concatenate([[0], ends[:-1]]).astype(np.int64)
        if count and (np.any(ends < starts) or int(ends[-1]) != len(body) - table_end):
            raise CorruptDataError("malformed bloom filter index: bad offsets")
        self.type = arrow_type
        filters = [BloomFilter.from_bytes(body[table_end + s:table_end + e])
                   for s, e in zip(starts.tolist(), ends.tolist(), strict=True)]
        # all pages' words back to back, so one probe tests every page at once (no Python loop per page)
        sizes = np.array([len(f.words) for f in filters], dtype=np.int64)
        self._words = np.concatenate([f.words for f in filters]) if filters else np.zeros(0, np.uint32)
        self._word_offsets = np.cumsum(sizes) - sizes
        self._block_masks = (sizes // 8 - 1).astype(np.uint64)
        self._has_null = np.array([f.has_null for f in filters], dtype=bool)
        # pages of similar distinct counts get filters of one size (a power of two): then a probe's block is
        # the same in every page, and the words to test are one strided slice instead of a gather. Runs of
        # consecutive pages of one size (typically all pages but a short last one), as views of _words
        self._uniform = (self._words.reshape(count, int(sizes[0]) // 8, 8)
                         if count and bool(np.all(sizes == sizes[0])) else None)
        self._runs: list[tuple[int, int, np.ndarray]] | None = None
        if count:
            cuts = [0, *(np.flatnonzero(sizes[1:] != sizes[:-1]) + 1).tolist(), count]
            if len(cuts) <= 5:
                self._runs = []
                for a, b in zip(cuts[:-1], cuts[1:], strict=True):
                    off, size = int(self._word_offsets[a]), int(sizes[a])
                    self._runs.append((a, b, self._words[off:off + (b - a) * size].reshape(b - a, size // 8, 8)))

    @classmethod
    def from_page(cls, page: bytes | memoryview, arrow_type: pa.DataType, num_pages: int,
                  where: str = "bloom filter index") -> BloomFilterIndexReader:
        header, body = read_page(memoryview(page), where)
        if header.encoding != PageEncoding.INDEX or header.num_rows != num_pages:
            raise CorruptDataError(f"corrupt segment {where}: unexpected page")
        return cls(body, arrow_type, num_pages)

    @property
    def num_pages(self) -> int:
        return len(self._has_null)

    @staticmethod
    def can_use(pred: ColumnPredicate) -> bool:
        return pred.op in (Op.EQ, Op.IN, Op.IS_NULL)

    def may_match(self, pred: ColumnPredicate) -> np.ndarray:
        """Per page: False when no row of the page can satisfy `pred` (True for unusable predicates)."""
        everything = np.ones(self.num_pages, bool)
        if pred.op == Op.IS_NULL:
            return self._has_null.copy()
        if pred.op not in (Op.EQ, Op.IN):
            return everything
        values = [v for v in pred.values if v is not None]  # `= NULL` / `IN (NULL)` match nothing
        if not values:
            return ~everything
        values = tuple(values)
        try:
            bits = _probe_bits(self.type, values, tuple(map(type, values)))
        except TypeError:  # an unhashable value: not memoised
            bits = _probe_bits.__wrapped__(self.type, values, ())
        if bits is None:
            return everything  # a value the column cannot hold exactly: leave the decision to the filter
        high, masks = bits
        uniform = self._uniform
        if uniform is not None and len(high) == 1:  # one value, filters of one size: a strided slice
            block = int(high[0] & np.uint64(uniform.shape[1] - 1))
            words, m = uniform[:, block, :], masks[0]
            return ((words & m) == m).all(axis=1)
        if self._runs is not None and len(high) == 1:  # the same, per run of pages of one size
            h, m = int(high[0]), masks[0]
            out = np.empty(self.num_pages, bool)
            for a, b, run in self._runs:
                words = run[:, h & (run.shape[1] - 1), :]
                out[a:b] = ((words & m) == m).all(axis=1)
            return out
        # (value, page) pairs at once, a bounded number per step (a long IN list against thousands of pages):
        # the block of each value in each page's filter, its 8 words against the value's masks
        out = None
        step = max(1, _PROBE_PAIRS // max(1, self.num_pages))
        for i in range(0, len(high), step):
            h, m = high[i:i + step], masks[i:i + step]
            if uniform is not None:
                words = uniform[:, (h & np.uint64(uniform.shape[1] - 1)).astype(np.intp), :]  # (pages, values, 8)
                hit = ((words & m[None, :, :]) == m[None, :, :]).all(axis=2).any(axis=1)
            else:
                blocks = (h[:, None] & self._block_masks[None, :]).astype(np.int64)
                words = self._words[(self._word_offsets[None, :] + blocks * 8)[:, :, None] + _WORD_INDEXES]
                hit = ((words & m[:, None, :]) == m[:, None, :]).all(axis=2).any(axis=0)
            out = hit if out is None else out | hit
        return out if out is not None else ~everything

    def pages(self, pred: ColumnPredicate) -> np.ndarray:
        """Indexes of the pages that may hold a row satisfying `pred`."""
        return np.flatnonzero(self.may_match(pred))
