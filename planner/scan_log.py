"""The query log of OLAP scans the rollup advisor reads (server/rollup_advisor.py): what each scan needed of its
table (the filters pushed into it with their operators and values, the GROUP BY columns and aggregates above it,
the columns it read), what it read (index, rows) and how long it took, and the statement it belonged to.

Bounded: the last `LOG_SIZE` scans, in memory (a restart starts it empty); information_schema.rollup_candidates
shows it. A scan costs the log one append; the texts are made when it is read.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass

from storage.catalog.model import OlapTable
from storage.predicate import ColumnPredicate

LOG_SIZE = 10_000
MAX_STATEMENT = 4000  # characters of the statement kept

# the text of the statement running in this thread / task (set by the server's session)
STATEMENT: ContextVar[str] = ContextVar("statement", default="")


@dataclass(frozen=True)
class ScanShape:
    """What the query above a scan asks of it, in the table's column names (decided with the rollup)."""

    group_by: tuple[str, ...] = ()
    aggregates: tuple[str, ...] = ()  # as Doris prints them: `sum(v)`, `count(*)`

    @property
    def aggregated(self) -> bool:
        """An aggregate sits right above the scan."""
        return bool(self.group_by or self.aggregates)


NO_SHAPE = ScanShape()


@dataclass(frozen=True)
class ScanRecord:
    at: float  # epoch seconds
    db: str
    table: str
    table_id: int
    index: str  # the index read (base or rollup name)
    predicates: tuple[ColumnPredicate, ...]
    columns: tuple[str, ...]  # read from the index
    shape: ScanShape
    rows_read: int
    seconds: float
    statement: str


class ScanLog:
    def __init__(self, size: int = LOG_SIZE) -> None:
        # plain tuples, made into ScanRecords when read (a point query's scan pays an append, not a dataclass);
        # appends are atomic: no lock
        self._records: deque[tuple] = deque(maxlen=size)

    def record(self, at: float, db: str, table: OlapTable, index_id: int | None, predicates: Sequence[ColumnPredicate],
               columns: Sequence[str], shape: ScanShape | None, rows_read: int, seconds: float, statement: str) -> None:
        self._records.append((at, db, table, index_id, predicates, columns, shape, rows_read, seconds,
                              statement[:MAX_STATEMENT]))  # (a shorter text is the same object, not a copy)

    def records(self, table_id: int | None = None) -> Iterator[ScanRecord]:
        """Oldest first; those of one table when `table_id` is given."""
        for at, db, table, index_id, predicates, columns, shape, rows, seconds, statement in list(self._records):
            if table_id is not None and table.table_id != table_id:
                continue
            index = table.base_index if index_id is None else next(
                (i for i in table.indexes if i.index_id == index_id), table.base_index)
            yield ScanRecord(at, db, table.name, table.table_id, index.name, tuple(predicates), tuple(columns),
                             shape or NO_SHAPE, rows, seconds, statement)


SCAN_LOG = ScanLog()
