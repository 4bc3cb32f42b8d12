"""Table versions: what a table looked like after each publish, the catalog side of time travel.

A table version is one publish (a load, a DELETE, an INSERT OVERWRITE) of the table, or one change of its
partitions' data (TRUNCATE, REPLACE PARTITION, DROP PARTITION): its number counts them from 1, and it records when it became visible, its label and transaction, the rows it
added and every partition's visible version right after it. Reading the table at those partition versions
reads it as it was then, as long as the rowsets those versions need are still on disk: compaction keeps its
inputs (stale rowsets) for the table property `time_travel_retention` (storage/compaction/readers.py), which
also starts a RETENTION version, the table as it was when the retention was switched on.

`TableVersionCatalog` is a mixin of `storage.catalog.store.Catalog`.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    from storage.catalog.model import Rowset

TABLE_VERSIONS_SCHEMA = """
CREATE TABLE IF NOT EXISTS table_versions (
    table_id INTEGER NOT NULL, version INTEGER NOT NULL, published_at REAL NOT NULL, txn_id INTEGER,
    label TEXT NOT NULL, kind TEXT NOT NULL, rows INTEGER NOT NULL, partitions TEXT NOT NULL,
    PRIMARY KEY (table_id, version));
CREATE INDEX IF NOT EXISTS table_versions_by_time ON table_versions (table_id, published_at);
CREATE INDEX IF NOT EXISTS table_versions_by_kind ON table_versions (table_id, kind, published_at)
"""

RETENTION_PROPERTY = "time_travel_retention"
MAX_RETENTION_SECONDS = 366 * 86400
KEEP_LISTED = 1000  # versions older than the retention window still listed per table (SHOW TABLE VERSIONS)
_PRUNE_EVERY = 100  # publishes between two prunings of a table's list

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_DURATION = re.compile(r"\s*(\d+)\s*([smhd]?)\s*", re.IGNORECASE)


def parse_retention(text: str) -> float | None:
    """Seconds of `time_travel_retention` text ("7d", "12h", "30m", "90s", "3600"; "0" or "off": none); None
    when the text is not a duration."""
    if text.strip().lower() in ("", "off", "false"):
        return 0.0
    match = _DURATION.fullmatch(text)
    if match is None:
        return None
    return float(int(match.group(1)) * _UNITS[(match.group(2) or "s").lower()])


def retention_seconds(props: Mapping[str, str]) -> float:
    """The table's time travel retention in seconds (0: off)."""
    return parse_retention(props.get(RETENTION_PROPERTY, "")) or 0.0


@dataclass(frozen=True)
class TableVersion:
    table_id: int
    version: int
    published_at: float  # epoch seconds
    txn_id: int | None
    label: str
    # LOAD, DELETE, OVERWRITE; TRUNCATE, REPLACE PARTITION, DROP PARTITION (partitions changed); or RETENTION
    # (time travel switched on: no data changed)
    kind: str
    rows: int  # rows the publish added to the base index
    partitions: dict[int, int]  # partition_id -> visible version right after it


def _version_from(row: sqlite3.Row) -> TableVersion:
    return TableVersion(row["table_id"], row["version"], row["published_at"], row["txn_id"], row["label"],
                        row["kind"], row["rows"], {int(k): v for k, v in json.loads(row["partitions"]).items()})


class TableVersionCatalog:
    """The table version list (mixed into Catalog)."""

    if TYPE_CHECKING:  # provided by Catalog
        def _write(self, scoped: bool = False) -> AbstractContextManager[sqlite3.Connection]: ...
        def _read(self) -> AbstractContextManager[sqlite3.Connection]: ...

    @staticmethod
    def _record_table_version(c: sqlite3.Connection, table_id: int, now: float, txn_id: int | None, label: str,
                              kind: str, rows: int) -> int:
        """Append the table's next version (inside the publishing transaction); returns its number. Every
        _PRUNE_EVERY versions the list drops what is older than both the retention window and the last
        KEEP_LISTED versions."""
        partitions = {str(pid): v for pid, v in c.execute(
            "SELECT partition_id, visible_version FROM partitions WHERE table_id = ? AND temp = 0", (table_id,))}
        last = c.execute("SELECT max(version) FROM table_versions WHERE table_id = ?", (table_id,)).fetchone()[0]
        version = (last or 0) + 1
        c.execute("INSERT INTO table_versions VALUES (?, ?, ?, ?, ?, ?, ?, ?)",  # (times to the microsecond shown)
                  (table_id, version, round(now, 6), txn_id, label, kind, rows, json.dumps(partitions)))
        if version % _PRUNE_EVERY == 0:
            props = c.execute("SELECT properties FROM tables WHERE table_id = ?", (table_id,)).fetchone()
            retention = retention_seconds(dict(json.loads(props[0]))) if props else 0.0
            c.execute("DELETE FROM table_versions WHERE table_id = ? AND version <= ? AND published_at < ?",
                      (table_id, version - KEEP_LISTED, now - retention))
        return version

    @staticmethod
    def _publish_kind(rowsets: Iterable[Rowset], overwrite: bool) -> str:
        if overwrite:
            return "OVERWRITE"
        return "DELETE" if any(rs.kind == "DELETE" for rs in rowsets) else "LOAD"

    def table_versions(self, table_id: int) -> list[TableVersion]:
        """The table's listed versions, oldest first."""
        with self._read() as c:
            return [_version_from(r) for r in c.execute(
                "SELECT * FROM table_versions WHERE table_id = ? ORDER BY version", (table_id,))]

    def latest_table_version(self, table_id: int) -> int | None:
        with self._read() as c:
            return c.execute("SELECT max(version) FROM table_versions WHERE table_id = ?", (table_id,)).fetchone()[0]

    def table_version(self, table_id: int, version: int) -> TableVersion | None:
        with self._read() as c:
            row = c.execute("SELECT * FROM table_versions WHERE table_id = ? AND version = ?",
                            (table_id, version)).fetchone()
        return None if row is None else _version_from(row)

    def table_version_at(self, table_id: int, when: float) -> TableVersion | None:
        """The version visible at `when` (epoch seconds): the last one published then or before."""
        with self._read() as c:
            row = c.execute("SELECT * FROM table_versions WHERE table_id = ? AND published_at <= ? "
                            "ORDER BY published_at DESC, version DESC LIMIT 1", (table_id, when)).fetchone()
        return None if row is None else _version_from(row)

    def next_table_version(self, table_id: int, version: int) -> TableVersion | None:
        """The version after `version` (when `version` stopped being the table's current one)."""
        with self._read() as c:
            row = c.execute("SELECT * FROM table_versions WHERE table_id = ? AND version > ? ORDER BY version "
                            "LIMIT 1", (table_id, version)).fetchone()
        return None if row is None else _version_from(row)

    def tablet_retentions(self, tablet_ids: Iterable[int]) -> dict[int, float]:
        """tablet_id -> the time travel retention of its table (seconds, 0: none; a tablet gone: absent)."""
        ids = sorted(set(tablet_ids))
        out: dict[int, float] = {}
        with self._read() as c:
            for k in range(0, len(ids), 500):
                chunk = ids[k:k + 500]
                for tablet_id, props in c.execute(
                        "SELECT b.tablet_id, t.properties FROM tables t JOIN tablets b ON b.table_id = t.table_id "
                        f"WHERE b.tablet_id IN ({','.join('?' * len(chunk))})", chunk):
                    out[tablet_id] = retention_seconds(dict(json.loads(props)))
        return out

    def retained_bytes(self, table_id: int) -> dict[int, int]:
        """index_id -> bytes of the table's stale rowsets: compaction inputs and replaced data kept for older
        versions (time travel, scans still reading them) until they are swept."""
        with self._read() as c:
            return {r[0]: r[1] for r in c.execute(
                "SELECT b.index_id, sum(r.data_size) FROM stale_rowsets s JOIN rowsets r ON r.rowset_id = s.rowset_id "
                "JOIN tablets b ON b.tablet_id = r.tablet_id WHERE b.table_id = ? GROUP BY b.index_id", (table_id,))}

    def retention_started(self, table_id: int) -> float | None:
        """When time travel was last switched on for the table (its newest RETENTION version)."""
        with self._read() as c:
            row = c.execute("SELECT max(published_at) FROM table_versions WHERE table_id = ? AND kind = 'RETENTION'",
                            (table_id,)).fetchone()
        return None if row is None or row[0] is None else float(row[0])
