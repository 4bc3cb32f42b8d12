"""The catalog side of DELETE: finished delete jobs, kept for SHOW DELETE (Doris's DeleteInfo).

A predicate DELETE publishes its DELETE rowsets and its record in ONE catalog commit (`publish_delete`),
so after a crash either both exist or neither. `DeleteCatalog` is a mixin of
`storage.catalog.store.Catalog` (it uses its connection and `publish`).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING

from storage.catalog.model import Rowset

if TYPE_CHECKING:
    from collections.abc import Callable
    from contextlib import AbstractContextManager

DELETE_SCHEMA = """
CREATE TABLE IF NOT EXISTS delete_jobs (
    txn_id INTEGER PRIMARY KEY, db_id INTEGER NOT NULL, table_id INTEGER NOT NULL, create_time REAL NOT NULL,
    record TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS delete_jobs_by_db ON delete_jobs (db_id, create_time)
"""


@dataclass(frozen=True)
class DeleteInfo:
    """One finished DELETE as SHOW DELETE lists it."""

    db_id: int
    table_id: int
    table_name: str
    label: str
    partition_names: tuple[str, ...]  # the partitions it applied to
    no_partition_specified: bool  # no PARTITION clause: SHOW DELETE prints `*`
    conditions: tuple[str, ...]  # Doris's text of each condition, e.g. `k1 EQ "1"`
    create_time: float
    txn_id: int = 0


def _info_from(text: str) -> DeleteInfo:
    d = json.loads(text)
    return DeleteInfo(**{**d, "partition_names": tuple(d["partition_names"]), "conditions": tuple(d["conditions"])})


class DeleteCatalog:
    """Delete jobs (mixed into Catalog)."""

    if TYPE_CHECKING:  # provided by Catalog
        def _read(self) -> AbstractContextManager[sqlite3.Connection]: ...
        def publish(self, txn_id: int, rowsets: Sequence[Rowset], partition_ids: Iterable[int],
                    also: Callable[[sqlite3.Connection], None] | None = None) -> dict[int, int]: ...

    def publish_delete(self, txn_id: int, rowsets: Sequence[Rowset], partition_ids: Iterable[int],
                       info: DeleteInfo) -> dict[int, int]:
        """Publish a DELETE's rowsets (one new version per partition) and record the job, in one commit."""
        record = replace(info, txn_id=txn_id)

        def save(c: sqlite3.Connection) -> None:
            c.execute("INSERT INTO delete_jobs VALUES (?, ?, ?, ?, ?)",
                      (txn_id, record.db_id, record.table_id, record.create_time,
                       json.dumps(asdict(record), ensure_ascii=False, separators=(",", ":"))))

        return self.publish(txn_id, rowsets, partition_ids, also=save)

    def delete_infos(self, db_id: int) -> list[DeleteInfo]:
        """A database's finished delete jobs, oldest first."""
        with self._read() as c:
            rows = c.execute("SELECT record FROM delete_jobs WHERE db_id = ? ORDER BY create_time, txn_id",
                             (db_id,)).fetchall()
        return [_info_from(r[0]) for r in rows]
