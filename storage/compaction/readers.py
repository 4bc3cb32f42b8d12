"""Which rowsets running scans read, and the deferred deletion of the rowsets a compaction replaced.

A compaction publishes its output [a-b] and keeps its inputs in the catalog as *stale* rowsets
(storage/catalog/compaction.py): a query whose snapshot predates version b still finds them through the
version path, and a query that already looked them up keeps reading their files. They go (catalog rows,
then files) only when

* no in-process scan holds them: `StorageEngine.scan` looks its rowsets up through `ReadHold.lookup`,
  which runs the catalog lookup and records the ids under this registry's lock, and the collector removes
  stale catalog rows under the same lock, so a scan either sees a rowset and holds it, or never sees it;
* and they have been stale for `tablet_rowset_stale_sweep_time_sec` (Doris 2.x's name, default 300): a
  reader in another process (Spark tasks reading a snapshot through the data source) is not in this
  registry, so it is covered by time, as Doris covers queries by the stale version path's lifetime;
* and for their table's `time_travel_retention` (storage/catalog/table_versions.py): time travel reads
  older versions through them.

`collect()` runs after every release and on the compaction producer's rounds.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

from storage.catalog.model import Rowset

log = logging.getLogger(__name__)

DEFAULT_STALE_SWEEP_SECONDS = 300.0


@dataclass(eq=False)  # each scan's hold is its own: two scans of the same rowsets are two holds
class ReadHold:
    """One scan's claim on the rowsets it looked up."""

    registry: RowsetReaders
    rowset_ids: set[str] = field(default_factory=set)

    def lookup(self, find: Callable[[], Mapping[int, Sequence[Rowset]]]) -> Mapping[int, Sequence[Rowset]]:
        """Run the catalog lookup `find` (tablet_id -> rowsets) and hold every rowset it returns, atomically
        with respect to the collector."""
        with self.registry._lock:
            found = find()
            self.rowset_ids.update(rs.rowset_id for rowsets in found.values() for rs in rowsets)
        return found


@dataclass
class _Retired:
    rowsets: list[Rowset]
    stale_at: float  # time.monotonic() when they became stale
    not_before: float  # time.monotonic() after which the sweep delay (or the retention) has passed


class RowsetReaders:
    """The registry of one process's scans and the queue of rowsets waiting to be deleted.

    `remove(rowsets)` is called under the registry lock to drop the stale catalog rows; `unlink(rowsets)` is
    called after it, outside the lock, to delete their files."""

    def __init__(self, remove: Callable[[list[Rowset]], None], unlink: Callable[[list[Rowset]], None],
                 sweep_seconds: Callable[[], float] = lambda: DEFAULT_STALE_SWEEP_SECONDS,
                 retention: Callable[[Sequence[Rowset]], float] = lambda rowsets: 0.0) -> None:
        self._lock = threading.RLock()
        self._holds: list[ReadHold] = []
        self._retired: list[_Retired] = []
        self._next_due = float("inf")  # the earliest not_before queued: before it, collect has nothing to do
        self._remove = remove
        self._unlink = unlink
        self._sweep_seconds = sweep_seconds
        self._retention = retention  # seconds the rowsets' table keeps them for time travel
        self.removed_rowsets = 0  # counters (tests, the benchmark)

    @contextmanager
    def reading(self) -> Iterator[ReadHold]:
        """A scan: what it looks up through the hold stays on disk until it ends."""
        hold = ReadHold(self)
        with self._lock:
            self._holds.append(hold)
        try:
            yield hold
        finally:
            with self._lock:
                self._holds.remove(hold)
            if self._retired:
                self.collect()

    def held(self) -> set[str]:
        with self._lock:
            return {rid for h in self._holds for rid in h.rowset_ids}

    def retire(self, rowsets: Iterable[Rowset], now: float | None = None) -> None:
        """Queue rowsets a compaction replaced (already marked stale in the catalog) for deletion."""
        rowsets = list(rowsets)
        if not rowsets:
            return
        start = time.monotonic() if now is None else now
        with self._lock:
            entry = _Retired(rowsets, start, start + self._delay(rowsets))
            self._retired.append(entry)
            self._next_due = min(self._next_due, entry.not_before)
        self.collect()

    def _delay(self, rowsets: Sequence[Rowset]) -> float:
        return max(0.0, self._sweep_seconds(), self._retention(rowsets))

    def reschedule(self) -> None:
        """Compute every queued rowset's deletion time again (a table's retention changed)."""
        with self._lock:
            for entry in self._retired:
                entry.not_before = entry.stale_at + self._delay(entry.rowsets)
            self._next_due = min((e.not_before for e in self._retired), default=float("inf"))
        self.collect()

    def pending(self) -> int:
        """Rowsets waiting to be deleted."""
        with self._lock:
            return sum(len(r.rowsets) for r in self._retired)

    def collect(self, now: float | None = None) -> int:
        """Delete every retired rowset no scan holds and whose sweep delay has passed; returns how many."""
        now = time.monotonic() if now is None else now
        if now < self._next_due:  # (read without the lock: a retire after it collects itself)
            return 0
        with self._lock:
            held = {rid for h in self._holds for rid in h.rowset_ids}
            free: list[Rowset] = []
            waiting: list[_Retired] = []
            for entry in self._retired:
                if entry.not_before <= now and not any(rs.rowset_id in held for rs in entry.rowsets):
                    free.extend(entry.rowsets)
                else:
                    waiting.append(entry)
            if not free:
                return 0
            try:
                self._remove(free)
            except Exception:  # noqa: BLE001 - keep them queued; the next collect retries
                log.exception("removing %d stale rowsets failed", len(free))
                return 0
            self._retired = waiting
            self._next_due = min((e.not_before for e in waiting), default=float("inf"))
        self._unlink(free)
        self.removed_rowsets += len(free)
        return len(free)
