"""Segment reader: index-driven row narrowing (short key, zone maps, page bloom filters, then bitmap
indexes: Doris's order) and page-level column reads.

Opening reads and verifies only the footer; ordinal indexes, zone maps, dictionaries, the short key
index, bloom filters and bitmap index meta pages are loaded on first use and cached (the file is
immutable). No file handle is kept open between
calls, so thousands of readers cost no descriptors.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pyarrow as pa

from storage.errors import CorruptDataError, StorageError
from storage.predicate import ColumnPredicate, Op
from storage.segment.bitmap_index import BitmapIndexReader
from storage.segment.bloom_filter import BloomFilterIndexReader
from storage.segment.column_cache import COLUMNS
from storage.segment.encoding import (
    ColumnDecoder,
    GatherDecoder,
    decode_dictionary,
    gather_dtype,
    make_decoder,
)
from storage.segment.format import ColumnMeta, PagePointer, read_footer
from storage.segment.ordinal_index import OrdinalIndex
from storage.segment.page import PageEncoding, read_page
from storage.segment.row_ranges import RowRanges
from storage.segment.short_key_index import ShortKeyIndex
from storage.segment.zone_map import ZoneMap, ZoneMapIndex, plain_int
from storage.stats import ScanStats
from storage.tablet.predicate_filter import predicate_mask

# Columns decode in parallel: LZ4, crc32 and numpy release the GIL, so two cores give ~1.6x on scans.
_POOL = ThreadPoolExecutor(max_workers=max(2, min(8, os.cpu_count() or 2)), thread_name_prefix="segread")
_PARALLEL_MIN_ROWS = 64 * 1024
FEW_PAGES = 8  # a key range over at most this many pages has their zone maps checked one by one
_READ_BYTES = 2 * 1024 * 1024
_CACHE_SIZE = 4096
_POOL_READ_MIN = 256 * 1024
_GATHER_SPARSITY = 8  # row ids at most 1 in 8 of their pages' rows: gathered per page (see _read_column_rows)
_cache: OrderedDict[str, SegmentReader] = OrderedDict()
_cache_lock = threading.Lock()
# index narrowing's answer: row ranges, the exact row ids a bitmap index gave within them (or None), and the
# predicates those ids answer exactly
Narrowed = tuple[RowRanges, "np.ndarray | None", list[ColumnPredicate]]
_BITMAP_OPS = frozenset({Op.EQ, Op.NE, Op.LT, Op.LE, Op.GT, Op.GE, Op.IN, Op.NOT_IN, Op.IS_NULL, Op.IS_NOT_NULL})


def rows_only(n: int) -> pa.Table:
    """A table of `n` rows and no columns (COUNT(*) reads no column; Arrow has no other way to say it)."""
    return pa.table({"_": pa.nulls(n)}).drop_columns(["_"])


def open_segment(path: str | os.PathLike[str]) -> SegmentReader:
    """A reader of `path`, shared across scans (LRU of 4,096): a segment file is immutable and its name
    (<rowset id>_<n>.dat, a fresh uuid per load, compaction output or index rewrite) is never reused, so its
    footer and the indexes a reader loads on first use (ordinal, zone map, dictionary, short key) stay valid
    without even a stat per query, and a repeated query does not re-read and re-decode them for every
    segment. A file of an old snapshot that a compaction deleted simply stops being asked for."""
    key = os.fspath(path)
    with _cache_lock:
        reader = _cache.get(key)
        if reader is not None:
            _cache.move_to_end(key)
            return reader
    reader = SegmentReader(key)
    with _cache_lock:
        _cache[key] = reader
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return reader


def forget_segments(paths: Iterable[str | os.PathLike[str]]) -> None:
    """Drop the shared readers of `paths` (files being deleted or rewritten at the same name)."""
    names = {os.fspath(p) for p in paths}
    with _cache_lock:
        for p in names:
            _cache.pop(p, None)
    COLUMNS.forget(names)


def take_sorted(arr: pa.Array | pa.ChunkedArray, positions: np.ndarray) -> pa.Array | pa.ChunkedArray:
    """`arr` at ascending `positions`: a slice when they are one run (a point lookup's row), which costs a
    microsecond where a take costs ~15."""
    lo = int(positions[0])
    if int(positions[-1]) - lo + 1 == len(positions):
        return arr.slice(lo, len(positions))
    return arr.take(pa.array(positions))


def _pread(fd: int, offset: int, size: int) -> bytes | memoryview:
    """`size` bytes at `offset` (fewer at the end of a truncated file: page checks then fail on them).
    Large reads land in a buffer of Arrow's memory pool: fresh multi-MB `bytes` come from glibc malloc,
    which on the main thread hands the memory back to the OS after each query and page-faults it in again
    on the next (3-4x slower full-column scans than on a scan thread)."""
    if size < _POOL_READ_MIN:
        return os.pread(fd, size, offset)
    buf = pa.allocate_buffer(size)
    got = os.preadv(fd, [buf], offset)
    return memoryview(buf)[:got]


def _open_fd(path: str) -> int:
    return os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))


# a comparison's rows in a sorted column: (searchsorted side of the first row, of the row after the last)
_SEEK_SIDES = {Op.EQ: ("left", "right"), Op.GE: ("left", None), Op.GT: ("right", None), Op.LE: (None, "right"),
               Op.LT: (None, "left")}
DENSE_KEEP_DIVISOR = 8  # a predicate keeping at least 7/8 of the rows filters the whole columns


class SegmentReader:
    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._file = os.fspath(path)
        self.name = self.path.name
        with open(self._file, "rb") as f:
            self.file_size = os.fstat(f.fileno()).st_size
            self.footer = read_footer(f, self.file_size, self.name)
        self.num_rows: int = self.footer.num_rows
        self.schema: pa.Schema = self.footer.schema
        self.num_key_columns = self.footer.num_key_columns
        self._columns: dict[str, ColumnMeta] = {c.name: c for c in self.footer.columns}
        self._ordinal: dict[str, OrdinalIndex] = {}
        self._zone_maps: dict[str, ZoneMapIndex] = {}
        self._dictionaries: dict[str, pa.Array] = {}
        self._short_key: ShortKeyIndex | None = None
        self._bloom_filters: dict[str, BloomFilterIndexReader] = {}
        self._bitmap_indexes: dict[str, BitmapIndexReader] = {}
        self._outputs: dict[tuple[str, ...], tuple[pa.Schema, pa.Table]] = {}
        self._types: dict[str, pa.DataType] = {f.name: f.type for f in self.schema}
        # per-query narrowing looks these up on every segment: computed once per reader
        self._full = RowRanges.full(self.num_rows)
        self._first_short_key = (self.schema.names[0] if self.footer.short_key_index is not None
                                 and self.footer.short_key_columns > 0 else None)
        self._bloom_columns = frozenset(c.name for c in self.footer.columns if c.bloom_filter is not None)
        self._bitmap_columns = frozenset(c.name for c in self.footer.columns if c.bitmap_index is not None)

    # ------------------------------------------------------------------ index loading

    def _read_range(self, ptr: PagePointer) -> bytes | memoryview:
        """The bytes of `ptr`: one open + pread + close. No descriptor outlives a call, so thousands of
        cached readers hold none, and a buffered file object (which costs several times more) is not needed
        for a single read."""
        fd = _open_fd(self._file)
        try:
            return _pread(fd, ptr.offset, ptr.size)
        finally:
            os.close(fd)

    def _index_page(self, ptr: PagePointer, what: str):
        header, body = read_page(memoryview(self._read_range(ptr)), f"{self.name} ({what})")
        if header.encoding not in (PageEncoding.INDEX, PageEncoding.PLAIN_BINARY):
            raise CorruptDataError(f"corrupt segment {self.name} ({what}): unexpected page type")
        return header, body

    def _meta(self, column: str) -> ColumnMeta:
        try:
            return self._columns[column]
        except KeyError:
            raise StorageError(f"segment {self.name} has no column {column}") from None

    def _ordinal_index(self, column: str) -> OrdinalIndex:
        oi = self._ordinal.get(column)
        if oi is None:
            meta = self._meta(column)
            _, body = self._index_page(meta.ordinal_index, f"ordinal index of {column}")
            try:
                oi = OrdinalIndex.decode(body, meta.num_pages, self.num_rows, meta.data.offset, meta.data.end)
            except CorruptDataError as e:
                raise CorruptDataError(f"corrupt segment {self.name}: {e.message}") from e
            self._ordinal[column] = oi
        return oi

    def _zone_map_index(self, column: str) -> ZoneMapIndex:
        zm = self._zone_maps.get(column)
        if zm is None:
            meta = self._meta(column)
            _, body = self._index_page(meta.zone_map, f"zone map of {column}")
            try:
                zm = ZoneMapIndex(body, self.schema.field(column).type, meta.num_pages)
            except CorruptDataError as e:
                raise CorruptDataError(f"corrupt segment {self.name}: {e.message}") from e
            self._zone_maps[column] = zm
        return zm

    def _dictionary(self, column: str) -> pa.Array | None:
        meta = self._meta(column)
        if meta.dictionary is None:
            return None
        d = self._dictionaries.get(column)
        if d is None:
            header, body = self._index_page(meta.dictionary, f"dictionary of {column}")
            try:
                d = decode_dictionary(self.schema.field(column).type, header, body)
            except CorruptDataError as e:
                raise CorruptDataError(f"corrupt segment {self.name}: {e.message}") from e
            self._dictionaries[column] = d
        return d

    def _short_key_index(self) -> ShortKeyIndex | None:
        ptr = self.footer.short_key_index
        if ptr is None:
            return None
        if self._short_key is None:
            header, body = self._index_page(ptr, "short key index")
            fields = list(self.schema)[:self.footer.short_key_columns]
            try:
                self._short_key = ShortKeyIndex.decode(body, header.num_rows, fields, self.num_rows)
            except CorruptDataError as e:
                raise CorruptDataError(f"corrupt segment {self.name}: {e.message}") from e
        return self._short_key

    def _bloom_filter(self, column: str) -> BloomFilterIndexReader | None:
        meta = self._meta(column)
        if meta.bloom_filter is None:
            return None
        bf = self._bloom_filters.get(column)
        if bf is None:
            page = self._read_range(meta.bloom_filter)
            try:
                bf = BloomFilterIndexReader.from_page(page, self.schema.field(column).type, meta.num_pages,
                                                      f"{self.name} (bloom filter of {column})")
            except CorruptDataError as e:
                raise CorruptDataError(f"corrupt segment {self.name}: {e.message}") from e
            self._bloom_filters[column] = bf
        return bf

    def _bitmap_index(self, column: str) -> BitmapIndexReader | None:
        meta = self._meta(column)
        if meta.bitmap_index is None:
            return None
        bi = self._bitmap_indexes.get(column)
        if bi is None:
            bi = BitmapIndexReader(self._read_range, meta.bitmap_index, self.schema.field(column).type,
                                   f"{self.name} (bitmap index of {column})")
            self._bitmap_indexes[column] = bi
        return bi

    def _bloom_filter_ranges(self, preds: Sequence[ColumnPredicate], ranges: RowRanges) -> RowRanges:
        """Drop the pages whose bloom filter rules out an `=`, `IN` or `IS NULL` predicate."""
        for p in preds:
            if ranges.is_empty:
                break
            if not BloomFilterIndexReader.can_use(p):
                continue
            bf = self._bloom_filter(p.column)
            if bf is None:
                continue
            keep = bf.may_match(p)
            if not keep.all():
                ranges = ranges.intersect(self._ordinal_index(p.column).ranges_of(keep))
        return ranges

    def _bitmap_index_rows(self, preds: Sequence[ColumnPredicate]) -> tuple[np.ndarray | None, list[int]]:
        """The exact row ids (sorted int64) the bitmap indexes give for the AND of their columns'
        predicates, and the positions in `preds` of the predicates those ids answer exactly (a value the
        index cannot evaluate gives all rows and leaves its predicate to the exact filter)."""
        usable = [(i, p, bi) for i, p in enumerate(preds) if p.op in _BITMAP_OPS
                  and (bi := self._bitmap_index(p.column)) is not None]
        if len(usable) == 1:  # the usual case: straight to sorted ids (a range skips the roaring union)
            i, p, bi = usable[0]
            exact = p.op in (Op.IS_NULL, Op.IS_NOT_NULL) or bi.can_evaluate(p)
            return bi.row_ids(p, exact), [i] if exact else []
        rows = None
        answered: list[int] = []
        for i, p, bi in usable:
            got = bi.rows(p)
            if p.op in (Op.IS_NULL, Op.IS_NOT_NULL) or bi.can_evaluate(p):
                answered.append(i)
            rows = got if rows is None else rows & got
            if not rows:
                return np.empty(0, np.int64), answered
        if rows is None:
            return None, []
        return np.frombuffer(rows.to_array(), dtype=np.uint32).astype(np.int64), answered

    @staticmethod
    def _ids_in(ids: np.ndarray, ranges: RowRanges) -> np.ndarray:
        """The ids (sorted) that lie within `ranges`."""
        if len(ranges) == 1:
            lo, hi = np.searchsorted(ids, [ranges.starts[0], ranges.ends[0]])
            return ids[lo:hi]
        k = np.searchsorted(ranges.starts, ids, side="right") - 1
        ok = k >= 0
        ok[ok] &= ids[ok] < ranges.ends[k[ok]]
        return ids[ok]

    @staticmethod
    def _ranges_of_ids(ids: np.ndarray) -> RowRanges:
        if len(ids) == 0:
            return RowRanges.empty()
        breaks = np.flatnonzero(np.diff(ids) != 1) + 1
        starts = ids[np.concatenate([[0], breaks])]
        ends = ids[np.concatenate([breaks - 1, [len(ids) - 1]])] + 1
        return RowRanges(starts, ends)

    # ------------------------------------------------------------------ public API

    def zone_map(self, column: str) -> ZoneMap:
        return self._zone_map_index(column).segment

    def may_contain(self, predicates: Sequence[ColumnPredicate]) -> bool:
        """False when a segment zone map rules out one of `predicates` for every row."""
        columns = self._columns
        return all(self._zone_map_index(p.column).segment_may_match(p) for p in predicates if p.column in columns)

    def row_ranges(self, predicates: Sequence[ColumnPredicate], stats: ScanStats | None = None) -> RowRanges:
        """A superset of the rows satisfying the AND of `predicates` (callers still filter exactly)."""
        ranges, ids, _ = self.narrow(predicates, stats)
        return ranges if ids is None else self._ranges_of_ids(ids)

    def narrow(self, predicates: Sequence[ColumnPredicate], stats: ScanStats | None,
               segment_checked: bool = False) -> Narrowed:
        """Index narrowing: row ranges (short key, zone maps, bloom filters), then, when a bitmap index
        applies, the exact row ids within them and the predicates those ids answer exactly.
        `segment_checked`: the caller already asked may_contain (true), so the segment-level zone maps are
        not compared again."""
        ranges = self._full
        columns = self._columns
        preds = [p for p in predicates if p.column in columns]
        if not preds:
            return ranges, None, []
        sought: list[ColumnPredicate] = []  # the predicates the key seek answered exactly
        if any(p.column == self._first_short_key for p in preds):  # else the short key index cannot help
            # the segment's rows are sorted by its keys: the first one's comparisons are sought in the whole
            # column at once when it can be; else the short key index finds their blocks and the seek runs there
            seek = self._first_key_seek(preds, stats)
            narrowed, sought = self._seek_first_key(*seek, ranges) if seek is not None else (ranges, [])
            if not sought:
                sk = self._short_key_index()
                found = sk.row_ranges(preds) if sk is not None else None
                if found is not None:
                    narrowed = ranges.intersect(found)
                    if seek is not None:
                        narrowed, sought = self._seek_first_key(*seek, narrowed)
            if stats is not None:
                stats.rows_key_range_filtered += ranges.count() - narrowed.count()
            ranges = narrowed
        before = ranges.count()
        if sought:
            preds = [p for p in preds if not any(p is a for a in sought)]
        if not ranges.is_empty and preds:
            # segment-level zone maps first: one comparison can drop everything
            zone_maps = [self._zone_map_index(p.column) for p in preds]
            if not segment_checked and not all(zm.segment_may_match(p) for zm, p in zip(zone_maps, preds,
                                                                                        strict=True)):
                ranges = RowRanges.empty()
            for zm, p in zip(zone_maps, preds, strict=True):
                if ranges.is_empty:
                    break
                if zm.pages_all_match(p):  # the usual answer, from precomputed bounds in plain Python
                    continue
                ordinal = self._ordinal_index(p.column)
                keep = self._few_pages_kept(zm, p, ordinal, ranges)
                if keep is None:
                    keep = zm.may_match(p)[1:]
                if not keep.all():
                    ranges = ranges.intersect(ordinal.ranges_of(keep))
        if stats is not None:
            stats.rows_stats_filtered += before - ranges.count()
        if ranges.is_empty:
            return ranges, None, []
        if self._bloom_columns and any(p.column in self._bloom_columns for p in preds):
            before = ranges.count()
            ranges = self._bloom_filter_ranges(preds, ranges)
            if stats is not None:
                stats.rows_bloom_filter_filtered += before - ranges.count()
        if not ranges.is_empty and self._bitmap_columns and any(p.column in self._bitmap_columns for p in preds):
            ids, answered = self._bitmap_index_rows(preds)
            if ids is not None:
                before = ranges.count()
                if ranges is not self._full:  # nothing narrowed before: every id is within
                    ids = self._ids_in(ids, ranges)
                if stats is not None:
                    stats.rows_bitmap_index_filtered += before - len(ids)
                return ranges, ids, sought + [preds[i] for i in answered]
        return ranges, None, sought

    def _first_key_seek(self, preds: Sequence[ColumnPredicate], stats: ScanStats | None
                        ) -> tuple[list[ColumnPredicate], pa.Array] | None:
        """The first key column's comparisons a binary search can answer and that column, decoded whole in the
        column cache by the rule of the scan's own reads; None when there are none (an integer column only)."""
        column = self._first_short_key
        t = self._types.get(column)
        keyed = [p for p in preds if p.column == column and p.op in _SEEK_SIDES and len(p.values) == 1]
        if not keyed or t is None or not pa.types.is_integer(t) or not all(plain_int(p.value, t) for p in keyed):
            return None
        cached = self._cached_column(column, stats if stats is not None else ScanStats(), fill=False)
        return (keyed, cached) if isinstance(cached, pa.Array) else None

    @staticmethod
    def _seek_first_key(keyed: list[ColumnPredicate], cached: pa.Array, ranges: RowRanges
                        ) -> tuple[RowRanges, list[ColumnPredicate]]:
        """Within one range (the segment, or the short key index's), the rows of the first key column's
        comparisons `keyed` found by binary search in the sorted column, as Doris seeks a key range's ends in the
        segment's rows (its short key index only finds the 1024-row blocks holding them): exact rows, so those
        predicates are not evaluated again. Not when the range holds NULLs (then the scan's filter answers)."""
        if len(ranges) != 1:
            return ranges, []
        start, end = int(ranges.starts[0]), int(ranges.ends[0])
        # (a slice counts its NULLs again; the whole column's count is kept with it)
        part = cached if end - start == len(cached) else cached.slice(start, end - start)
        if part.null_count:
            return ranges, []
        values = part.to_numpy(zero_copy_only=True)
        lo, hi = 0, len(values)
        for p in keyed:
            low_side, high_side = _SEEK_SIDES[p.op]
            if low_side is not None:
                lo = max(lo, int(np.searchsorted(values, p.value, low_side)))
            if high_side is not None:
                hi = min(hi, int(np.searchsorted(values, p.value, high_side)))
        if lo >= hi:
            return RowRanges.empty(), keyed
        return RowRanges._trusted(np.array([start + lo], np.int64), np.array([start + hi], np.int64), hi - lo), keyed

    @staticmethod
    def _few_pages_kept(zm: ZoneMapIndex, p: ColumnPredicate, ordinal: OrdinalIndex, ranges: RowRanges
                        ) -> np.ndarray | None:
        """The zone maps' verdict per page when `ranges` (a key range) touch a few pages: those pages checked one
        by one (the others hold no row of `ranges`: left as kept); None when that does not apply (then every
        page is compared at once)."""
        if len(ranges) > FEW_PAGES:
            return None
        pages = ordinal.pages_for(ranges).tolist()
        if len(pages) > FEW_PAGES:
            return None
        keep = np.ones(ordinal.num_pages, bool)
        for page in pages:
            verdict = zm.page_may_match(p, page)
            if verdict is None:
                return None
            keep[page] = verdict
        return keep

    def scan(self, columns: Sequence[str], predicates: Sequence[ColumnPredicate],
             exact: Sequence[ColumnPredicate], stats: ScanStats, narrowed: Narrowed | None = None) -> pa.Table:
        """The rows satisfying the AND of `exact`, narrowed by the indexes over `predicates`, with late
        materialisation: the index-surviving rows (exact bitmap row ids are taken as they are, and the
        predicates they answer are not evaluated again) have their predicate columns read and filtered
        first; the other columns are read only from the pages that still hold surviving rows."""
        schema, empty = self._output(columns)
        ranges, ids, answered = narrowed if narrowed is not None else self.narrow(predicates, stats)
        todo = [p for p in exact if not any(p is a for a in answered)] if answered else exact
        n = len(ids) if ids is not None else ranges.count()
        stats.raw_rows_read += n
        if n == 0:
            return empty
        pred_cols = list(dict.fromkeys(p.column for p in todo))
        got: dict[str, pa.Array | pa.ChunkedArray] = {}
        if pred_cols:
            arrays = self._read_columns(pred_cols, ranges, ids, stats)
            mask = predicate_mask(pa.Table.from_arrays(arrays, names=pred_cols), todo)
            kept = int(np.count_nonzero(mask))
            stats.rows_vector_pred_filtered += n - kept
            if kept == 0:
                return empty
            if kept < n and ids is None and kept * DENSE_KEEP_DIVISOR >= n * (DENSE_KEEP_DIVISOR - 1):
                # nearly every row passes: read the other columns whole and filter them, a gather of almost
                # all rows by position costs more than the rows it skips
                keep = pa.array(mask)
                rest = [c for c in columns if c not in pred_cols]
                got = dict(zip(pred_cols, arrays, strict=True))
                if rest:
                    got.update(zip(rest, self._read_columns(rest, ranges, None, stats), strict=True))
                table = pa.Table.from_arrays([got[c] for c in columns], schema=schema) if columns else None
                if table is None:
                    return rows_only(kept)
                return table.filter(keep)
            if kept < n:
                pos = np.flatnonzero(mask)
                ids = ids[pos] if ids is not None else ranges.rows_at(pos)
                arrays = [take_sorted(a, pos) for a in arrays]
            n = kept
            got = dict(zip(pred_cols, arrays, strict=True))
        if not columns:  # a row count without columns (COUNT(*))
            return rows_only(n)
        rest = [c for c in columns if c not in got]
        if rest:
            got.update(zip(rest, self._read_columns(rest, ranges, ids, stats), strict=True))
        return pa.Table.from_arrays([got[c] for c in columns], schema=schema)

    def _output(self, columns: Sequence[str]) -> tuple[pa.Schema, pa.Table]:
        """The schema of a scan of `columns` and its empty table, built once per column list: most segments
        a selective scan visits return nothing, and building either costs several us (empty_table ~12)."""
        key = tuple(columns)
        got = self._outputs.get(key)
        if got is None:
            fields = [self.schema.field(self._meta(c).name) for c in columns]
            schema = pa.schema(fields, metadata=self.schema.metadata)
            if len(self._outputs) >= 64:  # bounded: a reader lives long in the shared cache
                self._outputs.clear()
            got = self._outputs[key] = (schema, schema.empty_table())
        return got

    def _read_columns(self, columns: Sequence[str], ranges: RowRanges, ids: np.ndarray | None,
                      stats: ScanStats) -> list:
        """Columns for the rows `ids` (sorted) when given, else for `ranges`."""
        total = len(ids) if ids is not None else ranges.count()
        if ids is not None:
            fn, arg = self._read_column_rows, ids
        else:
            fn, arg = self._read_column, ranges
        if len(columns) > 1 and total >= _PARALLEL_MIN_ROWS:
            col_stats = [ScanStats() for _ in columns]  # one per thread, added up after
            arrays = list(_POOL.map(fn, columns, [arg] * len(columns), col_stats))
            for s in col_stats:
                stats.merge(s)
            return arrays
        return [fn(c, arg, stats) for c in columns]

    def read(self, columns: Sequence[str], row_ranges: RowRanges | None = None,
             stats: ScanStats | None = None) -> pa.Table:
        """The listed columns for the rows in `row_ranges` (all rows when None), in row order."""
        schema, empty = self._output(columns)
        ranges = RowRanges.full(self.num_rows) if row_ranges is None else row_ranges.clip(self.num_rows)
        total = ranges.count()
        if stats is not None:
            stats.raw_rows_read += total
        if total == 0:  # (a merge's segments of small loads mostly hold none of a point query's rows)
            return empty
        if not columns:  # a row count without columns (COUNT(*))
            return rows_only(total)
        col_stats = [ScanStats() for _ in columns]
        if len(columns) > 1 and total >= _PARALLEL_MIN_ROWS:
            arrays = list(_POOL.map(self._read_column, columns, [ranges] * len(columns), col_stats))
        else:
            arrays = [self._read_column(c, ranges, s) for c, s in zip(columns, col_stats, strict=True)]
        if stats is not None:
            for s in col_stats:
                stats.merge(s)
        return pa.Table.from_arrays(arrays, schema=schema)

    def _decode_pages(self, column: str, pages: np.ndarray | None, stats: ScanStats,
                      positions: list[np.ndarray] | None = None
                      ) -> tuple[pa.Array | pa.ChunkedArray, np.ndarray, np.ndarray]:
        """Pages `pages` (ascending; None = all) of `column` decoded back to back, with their first rows
        and row counts. `positions` (a fixed-width column, see gather_dtype): only the values at these
        positions of each page, in order."""
        oi = self._ordinal_index(column)
        dictionary = self._dictionary(column)
        if pages is None:
            pages = np.arange(oi.num_pages)
            page_starts, page_rows = oi.first_rows, oi.page_rows
        else:
            page_starts, page_rows = oi.first_rows[pages], oi.page_rows[pages]
        decoder: ColumnDecoder | GatherDecoder
        if positions is None:
            decoder = make_decoder(self._types[column], int(page_rows.sum()), dictionary)
        else:
            decoder = GatherDecoder(self._types[column], sum(len(p) for p in positions), int(page_rows.max()))
        where = f"{self.name} (column {column})"
        fd = _open_fd(self._file)
        k = 0
        try:
            for start, end, parts in self._read_runs(oi, pages):
                buf = memoryview(_pread(fd, start, end - start))
                stats.bytes_read += len(buf)
                for off, size, rows in parts:
                    header, body = read_page(buf[off:off + size], where)
                    if header.num_rows != rows:
                        raise CorruptDataError(f"corrupt segment {where}: page row count mismatch")
                    try:
                        if positions is None:
                            decoder.add(header, body)  # type: ignore[call-arg]
                        else:
                            decoder.add(header, body, positions[k])  # type: ignore[call-arg]
                    except (CorruptDataError, ValueError) as e:
                        raise CorruptDataError(f"corrupt segment {where}: {e}") from e
                    k += 1
        finally:
            os.close(fd)
        stats.pages_read += len(pages)
        stats.pages_skipped += oi.num_pages - len(pages)
        try:
            arr = decoder.finish()
        except CorruptDataError as e:
            raise CorruptDataError(f"corrupt segment {where}: {e.message}") from e
        return arr, page_starts, page_rows

    @staticmethod
    def _read_runs(oi: OrdinalIndex, pages: np.ndarray) -> list[tuple[int, int, list[tuple[int, int, int]]]]:
        """One read per run of consecutive pages, cut every ~_READ_BYTES (one huge read of a big segment's
        column costs fresh memory that smaller reads reuse; 2x on a 5M-row column): (file start, file end,
        [(offset in the read, size, rows) per page])."""
        if len(pages) <= 64:  # a few pages (point lookups, bloom survivors): plain Python, no numpy per page
            offsets, sizes, rows = oi.lists
            runs: list[tuple[int, int, list[tuple[int, int, int]]]] = []
            prev = -2
            for p in pages.tolist():
                off, size = offsets[p], sizes[p]
                if p == prev + 1 and off + size - runs[-1][0] <= _READ_BYTES:
                    start, _, parts = runs[-1]
                    parts.append((off - start, size, rows[p]))
                    runs[-1] = (start, off + size, parts)
                else:
                    runs.append((off, off + size, [(0, size, rows[p])]))
                prev = p
            return runs
        offsets, sizes, rows = oi.offsets[pages], oi.sizes[pages], oi.page_rows[pages]
        run_breaks = np.flatnonzero(np.diff(pages) != 1) + 1
        if int(sizes.sum()) > _READ_BYTES:
            chunk = (np.cumsum(sizes) - sizes) // _READ_BYTES
            run_breaks = np.union1d(run_breaks, np.flatnonzero(np.diff(chunk) != 0) + 1)
        bounds = [0, *run_breaks.tolist(), len(pages)]
        out = []
        for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
            start = int(offsets[lo])
            out.append((start, int(offsets[hi - 1] + sizes[hi - 1]),
                        list(zip((offsets[lo:hi] - start).tolist(), sizes[lo:hi].tolist(), rows[lo:hi].tolist(),
                                 strict=True))))
        return out

    def _read_column_rows(self, column: str, ids: np.ndarray, stats: ScanStats) -> pa.Array | pa.ChunkedArray:
        """`column` at the sorted row ids: only the pages holding them are read and decoded."""
        if len(ids) == 0:
            return pa.array([], self._types[column])
        cached = self._cached_column(column, stats, fill=len(ids) * _GATHER_SPARSITY >= self.num_rows)
        if cached is not None:
            oi = self._ordinal_index(column)
            page_of = np.searchsorted(oi.first_rows, ids, side="right")  # ids are sorted: count the changes
            used = int(np.count_nonzero(page_of[1:] != page_of[:-1])) + 1
            stats.pages_read += used
            stats.pages_skipped += oi.num_pages - used
            return take_sorted(cached, ids)
        oi = self._ordinal_index(column)
        page_of = np.searchsorted(oi.first_rows, ids, side="right") - 1
        if len(ids) == 1:
            pages = page_of
        else:  # ids are sorted, so their pages are too: the distinct ones without np.unique's sort
            first = np.empty(len(page_of), bool)
            first[0] = True
            np.not_equal(page_of[1:], page_of[:-1], out=first[1:])
            pages = page_of[first]
        full = len(pages) == oi.num_pages
        if (len(ids) > 1 and self._dictionaries.get(column) is None and self._meta(column).dictionary is None
                and gather_dtype(self._types[column]) is not None
                and len(ids) * _GATHER_SPARSITY < int(oi.page_rows[pages].sum())):
            # a few rows per page (bitmap hits spread over the segment): gather them page by page instead
            # of decoding every selected page into one big buffer and taking from it
            bounds = np.flatnonzero(first).tolist() + [len(ids)]
            local = ids - oi.first_rows[page_of]
            positions = [local[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
            return self._decode_pages(column, pages, stats, positions)[0]
        arr, page_starts, page_rows = self._decode_pages(column, None if full else pages, stats)
        if len(ids) == len(arr):
            return arr
        if full:
            local = ids
        else:
            local_offsets = np.cumsum(page_rows) - page_rows
            k = np.searchsorted(pages, page_of)
            local = ids - page_starts[k] + local_offsets[k]
        return take_sorted(arr, local)

    def _cached_column(self, column: str, stats: ScanStats, fill: bool) -> pa.Array | pa.ChunkedArray | None:
        """The whole decoded column from the column cache; on a miss, with `fill` (the read covers most of the
        segment), decoded whole and kept. None: the cache is off, or a narrow read missed it (then only the
        pages it needs are decoded: decoding whole columns for narrow reads would thrash a full cache)."""
        if not COLUMNS.limit:
            return None
        cached = COLUMNS.get(self._file, column)
        # a narrow read fills the cache only while it has room (a point lookup's columns, kept for the next):
        # in a full cache it would evict others for a column it barely reads
        if cached is None and (fill or COLUMNS.used_bytes + self.num_rows * 16 <= COLUMNS.limit):
            def decode() -> pa.Array:
                decoding = ScanStats()  # the bytes come off the disk; the pages are counted by the read using them
                whole = self._decode_pages(column, None, decoding)[0]
                stats.bytes_read += decoding.bytes_read
                return whole.combine_chunks() if isinstance(whole, pa.ChunkedArray) else whole

            cached = COLUMNS.fill(self._file, column, decode)
        return cached

    def _read_column(self, column: str, ranges: RowRanges, stats: ScanStats) -> pa.Array | pa.ChunkedArray:
        full = ranges.count() == self.num_rows
        cached = self._cached_column(column, stats, fill=ranges.count() * 2 >= self.num_rows)
        if cached is not None:  # the whole column decoded: the ranges are its row positions
            oi = self._ordinal_index(column)
            used = oi.num_pages if full else oi.count_pages(ranges)
            stats.pages_read += used  # the pages the read covers, served from the cache
            stats.pages_skipped += oi.num_pages - used
            if full:
                return cached
            if len(ranges) == 1:
                return cached.slice(int(ranges.starts[0]), int(ranges.ends[0] - ranges.starts[0]))
            if ranges.count() * _GATHER_SPARSITY < self.num_rows:  # few rows: take them, no segment-wide mask
                return cached.take(pa.array(ranges.to_indices()))
            return cached.filter(pa.array(ranges.to_mask(self.num_rows)))
        oi = self._ordinal_index(column)
        arr, page_starts, page_rows = self._decode_pages(column, None if full else oi.pages_for(ranges), stats)
        if full or ranges.count() == len(arr):
            return arr
        # map the wanted global rows onto positions in the decoded pages (selected pages are contiguous
        # in the decoded output, and every range lies within selected pages)
        local_offsets = np.cumsum(page_rows) - page_rows
        k = np.searchsorted(page_starts, ranges.starts, side="right") - 1
        local_starts = ranges.starts - page_starts[k] + local_offsets[k]
        local = RowRanges(local_starts, local_starts + (ranges.ends - ranges.starts))
        if len(local) == 1:
            return arr.slice(int(local.starts[0]), int(local.ends[0] - local.starts[0]))
        return arr.filter(pa.array(local.to_mask(len(arr))))
