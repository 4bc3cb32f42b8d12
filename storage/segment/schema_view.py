"""A segment read through the table's current schema (light schema change).

Segments are immutable: a column added, dropped, renamed or widened after a segment was written changes only
the catalog. Each segment names its columns' unique ids (field metadata `uid`, written from the catalog's
Column.unique_id), so a reader finds a column by id whatever it is called now; a column the segment predates
reads as its default; a widened column is cast as it is read. Segments written before ids existed are matched
by name.

`segment_for(reader, columns)` returns the reader itself when the segment already has the schema asked for
(the usual case, no cost) and a SegmentView otherwise. The view answers the calls the scan, compaction and
index rewrite make (may_contain, narrow, row_ranges, scan, read) in current names.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass

import pyarrow as pa

from storage.predicate import ColumnPredicate
from storage.segment.reader import Narrowed, SegmentReader, rows_only
from storage.segment.row_ranges import RowRanges
from storage.stats import ScanStats
from storage.tablet.predicate_filter import predicate_mask

UID_KEY = b"uid"


@dataclass(frozen=True)
class WantedColumn:
    """A column as the reader's caller knows it now."""

    name: str
    uid: int
    type: pa.DataType
    default: pa.Scalar  # what rows written before the column existed hold


@dataclass(frozen=True)
class _Source:
    physical: str | None  # the segment's name for it; None: the segment predates the column
    cast: bool  # stored narrower (a widened column): cast on read


def field_uid(field: pa.Field) -> int | None:
    meta = field.metadata
    if not meta or UID_KEY not in meta:
        return None
    return int(meta[UID_KEY])


def with_uids(table: pa.Table, uids: dict[str, int]) -> pa.Table:
    """`table` with each column's unique id as field metadata (no copy of the data)."""
    if not uids:
        return table
    fields = [f.with_metadata({UID_KEY: str(uids[f.name]).encode()}) if f.name in uids else f for f in table.schema]
    return table.cast(pa.schema(fields, metadata=table.schema.metadata))


# (segment file, id of the column tuple) -> (that tuple, the reader or its view). The engine hands the same tuple
# object for an index until its schema changes, so the key costs no hashing of columns per segment per scan.
_VIEWS: dict[tuple[str, int], tuple[Sequence[WantedColumn], SegmentReader | SegmentView]] = {}
_LOCK = threading.Lock()


def segment_for(reader: SegmentReader, columns: Sequence[WantedColumn]) -> SegmentReader | SegmentView:
    """`reader` seen with `columns` (every column of the index, current names): itself when it matches."""
    key = (reader._file, id(columns))
    hit = _VIEWS.get(key)
    if hit is not None and hit[0] is columns:
        got = hit[1]
        if got is reader or (isinstance(got, SegmentView) and got.reader is reader):
            return got
    sources = _sources(reader, columns)
    plain = all(s.physical == c.name and not s.cast for c, s in zip(columns, sources, strict=True))
    got = reader if plain else SegmentView(reader, list(columns), sources)
    with _LOCK:
        if len(_VIEWS) > 8192:
            _VIEWS.clear()
        _VIEWS[key] = (columns, got)
    return got


def _sources(reader: SegmentReader, columns: Sequence[WantedColumn]) -> list[_Source]:
    by_uid = {u: f for f in reader.schema if (u := field_uid(f)) is not None}
    out = []
    for c in columns:
        f = by_uid.get(c.uid) if by_uid else (reader.schema.field(c.name) if c.name in reader.schema.names else None)
        out.append(_Source(None, False) if f is None else _Source(f.name, f.type != c.type))
    return out


class SegmentView:
    def __init__(self, reader: SegmentReader, columns: list[WantedColumn], sources: list[_Source]) -> None:
        self.reader = reader
        self.name = reader.name
        self.path = reader.path
        self.num_rows = reader.num_rows
        self._wanted = {c.name: c for c in columns}
        self._sources = {c.name: s for c, s in zip(columns, sources, strict=True)}
        self.schema = pa.schema([pa.field(c.name, c.type) for c in columns])

    # -- predicates -----------------------------------------------------------------------------------------
    def _split(self, predicates: Sequence[ColumnPredicate]) -> tuple[list[ColumnPredicate], bool]:
        """The predicates the segment's indexes can test (in its names), and whether some predicate on a
        column the segment predates is false for its default (then no row of it matches)."""
        direct = []
        for p in predicates:
            source = self._sources.get(p.column)
            if source is None:
                continue
            if source.physical is None:
                if not self._default_matches(p):
                    return [], True
            elif not source.cast:
                direct.append(ColumnPredicate(source.physical, p.op, p.values))
        return direct, False

    def _default_matches(self, p: ColumnPredicate) -> bool:
        c = self._wanted[p.column]
        one = pa.table({p.column: pa.array([c.default.as_py()], c.type)})
        return bool(predicate_mask(one, [p])[0])

    def may_contain(self, predicates: Sequence[ColumnPredicate]) -> bool:
        direct, none = self._split(predicates)
        return not none and self.reader.may_contain(direct)

    def narrow(self, predicates: Sequence[ColumnPredicate], stats: ScanStats | None,
               segment_checked: bool = False) -> Narrowed:
        direct, none = self._split(predicates)
        if none:
            return RowRanges.empty(), None, []
        ranges, ids, answered = self.reader.narrow(direct, stats, segment_checked)
        # the predicates the bitmap answered are the translated ones: the scan re-tests what it cannot match
        return ranges, ids, []

    def row_ranges(self, predicates: Sequence[ColumnPredicate], stats: ScanStats | None = None) -> RowRanges:
        direct, none = self._split(predicates)
        return RowRanges.empty() if none else self.reader.row_ranges(direct, stats)

    # -- reads ----------------------------------------------------------------------------------------------
    def _complete(self, part: pa.Table, columns: Sequence[str]) -> pa.Table:
        """`part` (the stored columns, in the segment's names) as `columns` in current names and types."""
        arrays = []
        for name in columns:
            c, source = self._wanted[name], self._sources[name]
            if source.physical is None:
                arrays.append(pa.repeat(c.default, part.num_rows) if c.default.is_valid
                              else pa.nulls(part.num_rows, c.type))
            else:
                column = part.column(source.physical)
                arrays.append(column.cast(c.type) if source.cast else column)
        return pa.Table.from_arrays(arrays, schema=pa.schema([pa.field(n, self._wanted[n].type) for n in columns]))

    def _stored(self, columns: Sequence[str]) -> list[str]:
        return list(dict.fromkeys(p for c in columns if (p := self._sources[c].physical) is not None))

    def read(self, columns: Sequence[str], row_ranges: RowRanges | None = None,
             stats: ScanStats | None = None) -> pa.Table:
        stored = self._stored(columns)
        ranges = RowRanges.full(self.num_rows) if row_ranges is None else row_ranges.clip(self.num_rows)
        part = self.reader.read(stored, ranges, stats) if stored else rows_only(ranges.count())
        return self._complete(part, columns)

    def scan(self, columns: Sequence[str], predicates: Sequence[ColumnPredicate],
             exact: Sequence[ColumnPredicate], stats: ScanStats, narrowed: Narrowed | None = None) -> pa.Table:
        """As SegmentReader.scan: the indexes narrow by the predicates the segment can test, the exact
        predicates are evaluated on the rows in current names and types."""
        ranges, ids, _ = narrowed if narrowed is not None else self.narrow(predicates, stats)
        wanted = list(dict.fromkeys([*columns, *(p.column for p in exact)]))
        if ids is not None:
            ranges = self.reader._ranges_of_ids(ids)
        table = self.read(wanted, ranges, stats)
        if exact and table.num_rows:
            before = table.num_rows
            table = table.filter(pa.array(predicate_mask(table, list(exact))))
            stats.rows_vector_pred_filtered += before - table.num_rows
        return table.select(list(columns)) if columns else table.select([])
