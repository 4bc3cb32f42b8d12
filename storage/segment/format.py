"""Segment file layout and its footer.

    MAGIC (8 bytes)
    per column: data pages (contiguous, row order) | ordinal index page | zone map page | [dictionary page]
                | [bloom filter index page] | [bitmap index pages, meta page last]
    [short key index page]
    footer: schema_len u32 | Arrow IPC schema (types, nullability, metadata) | JSON (counts, part locations)
    footer_len u32 | footer crc32 u32 | MAGIC

The footer locates every part; each part is a page with its own crc (page.py), and the footer has one
too, so any flipped byte is reported as corruption before it can become a wrong value.
"""

from __future__ import annotations

import json
import struct
import zlib
from dataclasses import dataclass
from typing import BinaryIO

import pyarrow as pa

from storage.errors import CorruptDataError

MAGIC = b"DLSEG\x00\x01\n"
TRAILER = struct.Struct("<II")
TAIL_SIZE = TRAILER.size + len(MAGIC)
FORMAT_VERSION = 1


@dataclass(frozen=True)
class PagePointer:
    offset: int
    size: int

    @property
    def end(self) -> int:
        return self.offset + self.size


@dataclass(frozen=True)
class ColumnMeta:
    name: str
    num_pages: int
    data: PagePointer  # the run of data pages, described page by page by the ordinal index
    ordinal_index: PagePointer
    zone_map: PagePointer
    dictionary: PagePointer | None = None
    bloom_filter: PagePointer | None = None  # per-page bloom filters (bloom_filter.py), when configured
    bitmap_index: PagePointer | None = None  # the bitmap index's meta page (bitmap_index.py), when configured


_OPTIONAL_INDEXES = ("bloom_filter", "bitmap_index")  # written only when present: older files lack the keys


def _pointer_json(p: PagePointer | None) -> dict | None:
    return None if p is None else {"offset": p.offset, "size": p.size}


def _column_json(c: ColumnMeta) -> dict:
    # by hand: dataclasses.asdict deep-copies every field (a tenth of a small load's write time)
    d = {"name": c.name, "num_pages": c.num_pages, "data": _pointer_json(c.data),
         "ordinal_index": _pointer_json(c.ordinal_index), "zone_map": _pointer_json(c.zone_map),
         "dictionary": _pointer_json(c.dictionary), "bloom_filter": _pointer_json(c.bloom_filter),
         "bitmap_index": _pointer_json(c.bitmap_index)}
    for key in _OPTIONAL_INDEXES:
        if d[key] is None:
            del d[key]
    return d


@dataclass(frozen=True)
class Footer:
    schema: pa.Schema
    num_rows: int
    num_key_columns: int
    num_short_key_columns: int  # as requested by the table's schema
    short_key_columns: int  # how many the index encodes (a string ends it, a float stops before)
    short_key_index: PagePointer | None
    columns: list[ColumnMeta]

    def encode(self) -> bytes:
        schema = self.schema.serialize().to_pybytes()
        meta = {
            "version": FORMAT_VERSION,
            "num_rows": self.num_rows,
            "num_key_columns": self.num_key_columns,
            "num_short_key_columns": self.num_short_key_columns,
            "short_key_columns": self.short_key_columns,
            "short_key_index": _pointer_json(self.short_key_index),
            "columns": [_column_json(c) for c in self.columns],
        }
        return struct.pack("<I", len(schema)) + schema + json.dumps(meta, separators=(",", ":")).encode()

    @classmethod
    def decode(cls, buf: bytes, data_end: int) -> Footer:
        try:
            (schema_len,) = struct.unpack_from("<I", buf)
            schema = pa.ipc.read_schema(pa.py_buffer(buf[4:4 + schema_len]))
            meta = json.loads(buf[4 + schema_len:])
            if meta["version"] != FORMAT_VERSION:
                raise CorruptDataError(f"unsupported segment format version {meta['version']}")

            def ptr(d: dict | None) -> PagePointer | None:
                if d is None:
                    return None
                p = PagePointer(int(d["offset"]), int(d["size"]))
                if p.offset < len(MAGIC) or p.size < 0 or p.end > data_end:
                    raise CorruptDataError("footer points outside the file")
                return p

            columns = [ColumnMeta(c["name"], int(c["num_pages"]), ptr(c["data"]), ptr(c["ordinal_index"]),
                                  ptr(c["zone_map"]), ptr(c["dictionary"]), ptr(c.get("bloom_filter")),
                                  ptr(c.get("bitmap_index"))) for c in meta["columns"]]
            footer = cls(schema, int(meta["num_rows"]), int(meta["num_key_columns"]),
                         int(meta["num_short_key_columns"]), int(meta["short_key_columns"]),
                         ptr(meta["short_key_index"]), columns)
        except CorruptDataError:
            raise
        except (struct.error, pa.ArrowException, ValueError, KeyError, TypeError) as e:
            raise CorruptDataError(f"malformed footer: {e}") from e
        if [c.name for c in footer.columns] != footer.schema.names or footer.num_rows <= 0:
            raise CorruptDataError("footer does not match its schema")
        return footer


def write_tail(f: BinaryIO, footer: Footer) -> int:
    body = footer.encode()
    tail = body + TRAILER.pack(len(body), zlib.crc32(body)) + MAGIC
    f.write(tail)
    return len(tail)


def read_footer(f: BinaryIO, file_size: int, name: str) -> Footer:
    if file_size < len(MAGIC) + TAIL_SIZE:
        raise CorruptDataError(f"corrupt segment {name}: file too short")
    f.seek(0)
    head = f.read(len(MAGIC))
    f.seek(file_size - TAIL_SIZE)
    tail = f.read(TAIL_SIZE)
    if head != MAGIC or tail[TRAILER.size:] != MAGIC:
        raise CorruptDataError(f"corrupt segment {name}: bad magic")
    footer_len, crc = TRAILER.unpack_from(tail)
    footer_start = file_size - TAIL_SIZE - footer_len
    if footer_start < len(MAGIC):
        raise CorruptDataError(f"corrupt segment {name}: bad footer length")
    f.seek(footer_start)
    body = f.read(footer_len)
    if zlib.crc32(body) != crc:
        raise CorruptDataError(f"corrupt segment {name}: footer checksum mismatch")
    try:
        return Footer.decode(body, footer_start)
    except CorruptDataError as e:
        raise CorruptDataError(f"corrupt segment {name}: {e.message}") from e
