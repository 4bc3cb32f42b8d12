"""The page: the unit of I/O, checksum and compression in a segment file.

Layout (little-endian):  crc32 u32 | encoding u8 | flags u8 | width u8 | pad u8 | num_rows u32 |
raw_size u32 | base i64 | base2 i64 | body.  The crc covers everything after itself, so a flipped
bit anywhere in the page is caught before any byte of it is interpreted. The body is LZ4 (block format)
(or the table's `compression` codec: ZSTD, ZLIB, SNAPPY, none) when that saves space; `raw_size` is its
decompressed length. `encoding`, `width`, `base` and `base2`
belong to the page's encoder (encoding.py) or, for index pages, to the index that owns them.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass
from enum import IntEnum

import lz4.block
import pyarrow as pa

from storage.errors import CorruptDataError

HEADER = struct.Struct("<IBBBBIIqq")
HEADER_SIZE = HEADER.size

FLAG_HAS_NULLS = 1  # body starts with an Arrow-style (LSB first) validity bitmap
FLAG_COMPRESSED = 2  # LZ4 block
FLAG_ZSTD = 4
FLAG_ZLIB = 8
FLAG_SNAPPY = 16

# Doris's `compression` table property -> the page codec (LZ4F / LZ4HC are LZ4 here: one block format)
CODECS = {"LZ4": "LZ4", "LZ4F": "LZ4", "LZ4HC": "LZ4", "ZSTD": "ZSTD", "ZLIB": "ZLIB", "SNAPPY": "SNAPPY",
          "NO_COMPRESSION": "NONE"}
_ARROW_CODECS = {FLAG_ZSTD: pa.Codec("zstd"), FLAG_SNAPPY: pa.Codec("snappy")}


def _compress(body: bytes, codec: str) -> tuple[bytes, int]:
    if codec == "ZSTD":
        return _ARROW_CODECS[FLAG_ZSTD].compress(body, asbytes=True), FLAG_ZSTD
    if codec == "ZLIB":
        return zlib.compress(body), FLAG_ZLIB
    if codec == "SNAPPY":
        return _ARROW_CODECS[FLAG_SNAPPY].compress(body, asbytes=True), FLAG_SNAPPY
    return lz4.block.compress(body, store_size=False), FLAG_COMPRESSED


class PageEncoding(IntEnum):
    PLAIN = 0  # fixed-width values exactly as Arrow lays them out
    FOR = 1  # frame of reference: value - base packed into `width` bytes (0 = all values equal base)
    DELTA = 2  # base = first value, base2 = min difference, differences - base2 packed into `width` bytes
    PLAIN_BINARY = 3  # FOR-packed lengths (min length in base), then the concatenated bytes
    INDEX = 4  # an index page; its owner parses the body


@dataclass(frozen=True, slots=True)
class PageHeader:
    encoding: int
    flags: int
    width: int
    num_rows: int
    raw_size: int
    base: int
    base2: int

    @property
    def has_nulls(self) -> bool:
        return bool(self.flags & FLAG_HAS_NULLS)


def build_page(encoding: PageEncoding, num_rows: int, body: bytes, *, width: int = 0, base: int = 0,
               base2: int = 0, has_nulls: bool = False, codec: str = "LZ4") -> bytes:
    flags = FLAG_HAS_NULLS if has_nulls else 0
    stored = body
    if len(body) >= 64 and codec != "NONE":
        packed, flag = _compress(body, codec)
        # incompressible pages (random strings) are kept raw: reading them then costs no decompression
        if len(packed) < len(body) - len(body) // 16:
            stored, flags = packed, flags | flag
    header = HEADER.pack(0, encoding, flags, width, 0, num_rows, len(body), base, base2)
    crc = zlib.crc32(stored, zlib.crc32(memoryview(header)[4:]))
    return struct.pack("<I", crc) + header[4:] + stored


def read_page(buf: memoryview, where: str) -> tuple[PageHeader, bytes | memoryview]:
    """Verify and decompress one page held in `buf`; `where` names the file and part for the error."""
    if len(buf) < HEADER_SIZE:
        raise CorruptDataError(f"corrupt segment {where}: truncated page")
    crc, encoding, flags, width, _, num_rows, raw_size, base, base2 = HEADER.unpack_from(buf)
    if zlib.crc32(buf[4:]) != crc:
        raise CorruptDataError(f"corrupt segment {where}: page checksum mismatch")
    body = buf[HEADER_SIZE:]
    if flags & FLAG_COMPRESSED:
        try:
            body = lz4.block.decompress(body, uncompressed_size=raw_size)
        except lz4.block.LZ4BlockError as e:
            raise CorruptDataError(f"corrupt segment {where}: {e}") from e
    elif flags & (FLAG_ZSTD | FLAG_SNAPPY):
        try:
            body = memoryview(_ARROW_CODECS[flags & (FLAG_ZSTD | FLAG_SNAPPY)].decompress(
                body, decompressed_size=raw_size))
        except (OSError, pa.ArrowException) as e:
            raise CorruptDataError(f"corrupt segment {where}: {e}") from e
    elif flags & FLAG_ZLIB:
        try:
            body = zlib.decompress(body)
        except zlib.error as e:
            raise CorruptDataError(f"corrupt segment {where}: {e}") from e
    if len(body) != raw_size:
        raise CorruptDataError(f"corrupt segment {where}: page size mismatch")
    return PageHeader(encoding, flags, width, num_rows, raw_size, base, base2), body
