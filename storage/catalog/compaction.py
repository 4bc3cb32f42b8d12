"""The catalog side of compaction: publishing a compaction's output and the stale rowsets it leaves.

A compaction of a tablet's rowsets [a-a] .. [b-b] publishes ONE rowset [a-b] in one commit. Its inputs stay
in `rowsets` and are listed in `stale_rowsets`: the version visibility rule (store.visible_rowsets) prefers
the widest rowset, so a reader at version >= b reads the output, and a reader whose snapshot is older
(< b) still finds the inputs. storage/compaction/readers.py removes stale rowsets once nothing reads them.

`CompactionCatalog` is a mixin of `storage.catalog.store.Catalog`.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from storage.catalog.model import Rowset
from storage.errors import StorageError

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

COMPACTION_SCHEMA = """
CREATE TABLE IF NOT EXISTS stale_rowsets (
    rowset_id TEXT PRIMARY KEY, tablet_id INTEGER NOT NULL, output_rowset_id TEXT NOT NULL,
    stale_time REAL NOT NULL);
CREATE INDEX IF NOT EXISTS stale_rowsets_by_tablet ON stale_rowsets (tablet_id)
"""


class CompactionConflict(StorageError):
    """The compaction's inputs changed before its output could be published (a truncate, a dropped
    partition or table, a concurrent swap): nothing was changed."""


@dataclass(frozen=True)
class StaleRowset:
    rowset: Rowset
    output_rowset_id: str
    stale_time: float  # epoch seconds


class CompactionCatalog:
    """Compaction outputs and stale rowsets (mixed into Catalog)."""

    if TYPE_CHECKING:  # provided by Catalog
        def _write(self, scoped: bool = False) -> AbstractContextManager[sqlite3.Connection]: ...
        def _read(self) -> AbstractContextManager[sqlite3.Connection]: ...
        def _touch(self, tables: Iterable[int] = (), added: Iterable[Rowset] = (),
                   removed: Iterable[str] = ()) -> None: ...

    def publish_compaction(self, input_ids: Sequence[str], output: Rowset) -> None:
        """In one commit: add `output` (its versions already [a-b]) and mark every input stale. Fails with
        CompactionConflict, changing nothing, if an input is gone or already stale, or the tablet is gone.
        The partition's data size and (for the base index) row count follow the visible data."""
        from storage.catalog.store import _rowset_from

        with self._write(scoped=True) as c:
            tablet = c.execute("SELECT t.partition_id, t.index_id, t.table_id, b.base_index_id FROM tablets t "
                               "JOIN tables b ON b.table_id = t.table_id WHERE t.tablet_id = ?",
                               (output.tablet_id,)).fetchone()
            if tablet is None:
                raise CompactionConflict(f"tablet {output.tablet_id} no longer exists")
            inputs: list[Rowset] = []
            for rid in input_ids:
                r = c.execute("SELECT * FROM rowsets WHERE rowset_id = ?", (rid,)).fetchone()
                if r is None or r["tablet_id"] != output.tablet_id:
                    raise CompactionConflict(f"rowset {rid} of tablet {output.tablet_id} no longer exists")
                if c.execute("SELECT 1 FROM stale_rowsets WHERE rowset_id = ?", (rid,)).fetchone():
                    raise CompactionConflict(f"rowset {rid} of tablet {output.tablet_id} was already compacted")
                inputs.append(_rowset_from(r))
            c.execute("INSERT INTO rowsets VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                      (output.rowset_id, output.tablet_id, output.start_version, output.end_version,
                       output.num_rows, output.num_segments, output.data_size, output.txn_id, output.kind,
                       output.delete_predicate, int(output.overlapping), output.created_at))
            self._touch(tables=[tablet["table_id"]], added=[output])
            now = time.time()
            c.executemany("INSERT INTO stale_rowsets VALUES (?, ?, ?, ?)",
                          [(rs.rowset_id, rs.tablet_id, output.rowset_id, now) for rs in inputs])
            size_delta = output.data_size - sum(rs.data_size for rs in inputs)
            rows_delta = output.num_rows - sum(rs.num_rows for rs in inputs) \
                if tablet["index_id"] == tablet["base_index_id"] else 0
            c.execute("UPDATE partitions SET data_size = MAX(0, data_size + ?), row_count = MAX(0, row_count + ?) "
                      "WHERE partition_id = ?", (size_delta, rows_delta, tablet["partition_id"]))

    def stale_rowsets(self, tablet_id: int | None = None) -> list[StaleRowset]:
        """Stale rowsets still in the catalog (of one tablet, or all), oldest first."""
        from storage.catalog.store import _rowset_from

        sql = ("SELECT r.*, s.output_rowset_id, s.stale_time FROM stale_rowsets s "
               "JOIN rowsets r ON r.rowset_id = s.rowset_id")
        args: tuple = ()
        if tablet_id is not None:
            sql, args = sql + " WHERE s.tablet_id = ?", (tablet_id,)
        with self._read() as c:
            rows = c.execute(sql + " ORDER BY s.stale_time, r.start_version", args).fetchall()
        return [StaleRowset(_rowset_from(r), r["output_rowset_id"], r["stale_time"]) for r in rows]

    def remove_stale_rowsets(self, rowset_ids: Sequence[str] | None = None) -> list[Rowset]:
        """Delete stale rowsets from the catalog (the given ones, or all); returns those that existed, so
        the caller deletes their files. Stale marks whose rowset is already gone (a dropped tablet) go too."""
        from storage.catalog.store import _rowset_from

        with self._write(scoped=True) as c:
            if rowset_ids is None:
                rowset_ids = [r[0] for r in c.execute("SELECT rowset_id FROM stale_rowsets")]
            removed: list[Rowset] = []
            for rid in rowset_ids:
                stale = c.execute("SELECT 1 FROM stale_rowsets WHERE rowset_id = ?", (rid,)).fetchone()
                if stale is None:
                    continue  # never stale: not ours to delete
                r = c.execute("SELECT * FROM rowsets WHERE rowset_id = ?", (rid,)).fetchone()
                if r is not None:
                    removed.append(_rowset_from(r))
                    self._touch(removed=[rid])
                    c.execute("DELETE FROM rowsets WHERE rowset_id = ?", (rid,))
                c.execute("DELETE FROM stale_rowsets WHERE rowset_id = ?", (rid,))
            return removed
