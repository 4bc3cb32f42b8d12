"""The query log of OLAP scans the rollup advisor reads (server/rollup_advisor.py): what each scan needed of its
table (the filters pushed into it with their operators and values, the GROUP BY columns and aggregates above it,
the columns it read), what it read (index, rows) and how long it took, and the statement it belonged to.

Bounded: the last `LOG_SIZE` scans, in memory (a restart starts it empty); information_schema.rollup_candidates
shows it. A scan costs the log one append; the texts are made when it is read.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass

from storage.predicate import ColumnPredicate

LOG_SIZE = 10_000
MAX_STATEMENT = 4000  # characters of the statement kept

# the text of the statement running in this thread / task (set by the server's session)
STATEMENT: ContextVar[str] = ContextVar("statement", default="")


@dataclass(frozen=True)
class ScanShape:
    """What the query above a scan asks of it, in the table's column names (decided with the rollup)."""

    group_by: tuple[str, ...] = ()
    aggregates: tuple[tuple[str, str], ...] = ()  # (function, column); column "*" for count(*)
    aggregated: bool = False  # an aggregate sits right above the scan


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
        self._records: deque[ScanRecord] = deque(maxlen=size)  # appends are atomic: no lock

    def record(self, record: ScanRecord) -> None:
        self._records.append(record)

    def records(self, table_id: int | None = None) -> Iterator[ScanRecord]:
        """Oldest first; those of one table when `table_id` is given."""
        for r in list(self._records):
            if table_id is None or r.table_id == table_id:
                yield r

    def clear(self) -> None:
        self._records.clear()


SCAN_LOG = ScanLog()
