"""The durable catalog: model objects persisted in SQLite (WAL, synchronous=FULL) at <root>/catalog.db.

One SQLite transaction per DDL or publish, so a crash leaves either the old or the new catalog, never a
half-created table or a half-published load. Every entity with an id has its own table; value objects
inside them (Column, PartitionItem, DistributionInfo, ...) are stored as JSON. All access goes through one
connection guarded by a lock: the server calls in from several threads.

The version visibility rule (which rowsets a reader at version v sees) lives here, in `visible_rowsets`.
"""

from __future__ import annotations

import bisect
import functools
import json
import secrets
import sqlite3
import threading
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from storage.catalog.auth import AUTH_SCHEMA, AuthCatalog
from storage.catalog.compaction import COMPACTION_SCHEMA, CompactionCatalog
from storage.catalog.delete_jobs import DELETE_SCHEMA, DeleteCatalog
from storage.catalog.job_tables import SCHEMA_CHANGE_JOBS, cancel_table_jobs
from storage.catalog.model import (
    INDEX_NORMAL,
    JOB_FINISHED,
    PARTITION_INIT_VERSION,
    Column,
    Database,
    DistributionInfo,
    IndexDef,
    MaterializedIndexMeta,
    OlapTable,
    Partition,
    PartitionInfo,
    PartitionItem,
    Rowset,
    SchemaChangeJob,
    TableSpec,
    Tablet,
)
from storage.catalog.partition_items import (
    cannot_add_partition,
    check_items_match,
    check_new_items,
    duplicate_partition_name,
    sort_items,
)
from storage.catalog.rollup_jobs import ROLLUP_SCHEMA, RollupCatalog
from storage.catalog.schema_change_jobs import SCHEMA_CHANGE_SCHEMA, SchemaChangeCatalog
from storage.catalog.table_versions import TABLE_VERSIONS_SCHEMA, TableVersionCatalog, retention_seconds
from storage.catalog.views import VIEW_SCHEMA, ViewCatalog, name_taken
from storage.errors import StorageError, doris_error
from storage.tablet.delete_filter import rename_delete_columns

FIRST_ID = 10000  # Doris's catalog ids start at 10000
FIRST_TXN_ID = 1000

TXN_PREPARE = "PREPARE"
TXN_VISIBLE = "VISIBLE"
TXN_ABORTED = "ABORTED"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS databases (
    db_id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, create_time REAL NOT NULL, properties TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS tables (
    table_id INTEGER PRIMARY KEY, db_id INTEGER NOT NULL, name TEXT NOT NULL, keys_type TEXT NOT NULL,
    columns TEXT NOT NULL, partition_info TEXT NOT NULL, distribution TEXT NOT NULL,
    base_index_id INTEGER NOT NULL, properties TEXT NOT NULL, index_defs TEXT NOT NULL, comment TEXT NOT NULL,
    create_time REAL NOT NULL, update_time REAL NOT NULL, UNIQUE (db_id, name));
CREATE TABLE IF NOT EXISTS indexes (
    index_id INTEGER PRIMARY KEY, table_id INTEGER NOT NULL, position INTEGER NOT NULL, name TEXT NOT NULL,
    columns TEXT NOT NULL, keys_type TEXT NOT NULL, short_key_column_count INTEGER NOT NULL,
    schema_hash INTEGER NOT NULL, state TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS indexes_by_table ON indexes (table_id);
CREATE TABLE IF NOT EXISTS partitions (
    partition_id INTEGER PRIMARY KEY, table_id INTEGER NOT NULL, position INTEGER NOT NULL, item TEXT NOT NULL,
    buckets INTEGER NOT NULL, visible_version INTEGER NOT NULL, visible_version_time REAL NOT NULL,
    next_version INTEGER NOT NULL, data_size INTEGER NOT NULL, row_count INTEGER NOT NULL,
    temp INTEGER NOT NULL DEFAULT 0);
CREATE INDEX IF NOT EXISTS partitions_by_table ON partitions (table_id);
CREATE TABLE IF NOT EXISTS tablets (
    tablet_id INTEGER PRIMARY KEY, table_id INTEGER NOT NULL, partition_id INTEGER NOT NULL,
    index_id INTEGER NOT NULL, bucket INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS tablets_by_table ON tablets (table_id, partition_id, index_id);
CREATE TABLE IF NOT EXISTS rowsets (
    rowset_id TEXT PRIMARY KEY, tablet_id INTEGER NOT NULL, start_version INTEGER NOT NULL,
    end_version INTEGER NOT NULL, num_rows INTEGER NOT NULL, num_segments INTEGER NOT NULL,
    data_size INTEGER NOT NULL, txn_id INTEGER NOT NULL, kind TEXT NOT NULL, delete_predicate TEXT,
    overlapping INTEGER NOT NULL, created_at REAL NOT NULL);
CREATE INDEX IF NOT EXISTS rowsets_by_tablet ON rowsets (tablet_id, start_version);
CREATE TABLE IF NOT EXISTS transactions (
    txn_id INTEGER PRIMARY KEY, db_id INTEGER NOT NULL, table_id INTEGER NOT NULL, label TEXT NOT NULL,
    status TEXT NOT NULL, created_at REAL NOT NULL, finished_at REAL, reason TEXT);
CREATE INDEX IF NOT EXISTS transactions_by_label ON transactions (db_id, label);
CREATE INDEX IF NOT EXISTS transactions_by_status ON transactions (db_id, status);
""" + ROLLUP_SCHEMA + ";" + SCHEMA_CHANGE_SCHEMA + ";" + COMPACTION_SCHEMA + ";" + DELETE_SCHEMA + ";" + VIEW_SCHEMA \
    + ";" + AUTH_SCHEMA + ";" + TABLE_VERSIONS_SCHEMA


@dataclass(frozen=True)
class Transaction:
    """A load transaction (Doris's TransactionState, reduced to what a single node needs)."""

    txn_id: int
    db_id: int
    table_id: int
    label: str
    status: str  # PREPARE / VISIBLE / ABORTED
    created_at: float
    finished_at: float | None = None
    reason: str | None = None


def new_label() -> str:
    """Doris 2.1's automatic INSERT label: label_<16 hex>_<16 hex>."""
    return f"label_{secrets.token_hex(8)}_{secrets.token_hex(8)}"


def unknown_database(name: str) -> StorageError:
    return doris_error(f"Unknown database '{name}'", 1049, "42000")


# ---------------------------------------------------------------- value objects <-> JSON


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _tuple_or_none(v: list | None) -> tuple | None:
    return None if v is None else tuple(v)


def _pairs(v: list) -> tuple[tuple[str, str], ...]:
    return tuple((a, b) for a, b in v)


def _columns_json(columns: Sequence[Column]) -> str:
    return _dumps([asdict(c) for c in columns])


@functools.lru_cache(maxsize=4096)
def _columns_from(text: str) -> tuple[Column, ...]:
    """The columns of an index row, the same tuple for the same text: a table read again after a load's publish
    keeps its columns, and what is derived from them and kept by identity (Arrow schemas, the columns a
    segment reader is asked for, a tablet's kept scan) stays valid."""
    return tuple(Column(**d) for d in json.loads(text))


def _item_json(item: PartitionItem) -> str:
    return _dumps(asdict(item))


def _item_from(text: str) -> PartitionItem:
    d = json.loads(text)
    return PartitionItem(
        name=d["name"],
        lower=_tuple_or_none(d["lower"]),
        upper=_tuple_or_none(d["upper"]),
        values=None if d["values"] is None else tuple(tuple(v) for v in d["values"]),
        buckets=d["buckets"],
        properties=_pairs(d["properties"]),
    )


def _index_defs_from(text: str) -> tuple[IndexDef, ...]:
    return tuple(
        IndexDef(name=d["name"], columns=tuple(d["columns"]), index_type=d["index_type"], comment=d["comment"],
                 properties=_pairs(d["properties"]))
        for d in json.loads(text)
    )


def _distribution_from(text: str) -> DistributionInfo:
    d = json.loads(text)
    return DistributionInfo(type=d["type"], columns=tuple(d["columns"]), buckets=d["buckets"], auto=d["auto"])


def _partition_info_from(text: str) -> PartitionInfo:
    d = json.loads(text)
    return PartitionInfo(type=d["type"], columns=tuple(d["columns"]))


def _rowset_from(r: sqlite3.Row) -> Rowset:
    return Rowset(
        rowset_id=r["rowset_id"], tablet_id=r["tablet_id"], start_version=r["start_version"],
        end_version=r["end_version"], num_rows=r["num_rows"], num_segments=r["num_segments"],
        data_size=r["data_size"], txn_id=r["txn_id"], kind=r["kind"], delete_predicate=r["delete_predicate"],
        overlapping=bool(r["overlapping"]), created_at=r["created_at"],
    )


def _txn_from(r: sqlite3.Row) -> Transaction:
    return Transaction(
        txn_id=r["txn_id"], db_id=r["db_id"], table_id=r["table_id"], label=r["label"], status=r["status"],
        created_at=r["created_at"], finished_at=r["finished_at"], reason=r["reason"],
    )


def schema_changed_error(txn_id: int) -> StorageError:
    """A load whose table's indexes a schema change swapped while it ran: refused whole, to be run again."""
    return doris_error(f"the schema of the table changed while transaction [{txn_id}] ran (a schema change "
                       "finished); load again")


def visible_rowsets(rowsets: Iterable[Rowset], max_version: int) -> list[Rowset]:
    """The version visibility rule (Doris's consistent version path), in ascending version order.

    Among rowsets ending at or below `max_version`, walk versions upward: at each step take the rowset
    with the smallest start >= the next needed version, preferring the widest one (a compaction output
    [a-b] over the inputs [a-a]..[b-b] it replaced). Versions a tablet never received (a load that wrote
    no rows into it) are simply skipped.
    """
    return visible_path(sorted(rowsets, key=version_order), max_version)


def version_order(r: Rowset) -> tuple[int, int]:
    """The order visible_path walks: by start version, the widest rowset first."""
    return (r.start_version, -r.end_version)


def _start(r: Rowset) -> int:
    return r.start_version


def visible_path(ordered: Sequence[Rowset], max_version: int) -> list[Rowset]:
    """visible_rowsets of rowsets already in version_order: each step bisects to the next needed version, so a
    tablet holding thousands of stale compaction inputs (kept for minutes) costs a few comparisons per rowset
    on the path, not a pass over all of them."""
    path: list[Rowset] = []
    next_needed = -1
    i, n = 0, len(ordered)
    while True:
        i = bisect.bisect_left(ordered, next_needed, lo=i, key=_start)
        while i < n and ordered[i].end_version > max_version:  # past the snapshot: a narrower one or a later start
            i += 1
        if i >= n:
            return path
        r = ordered[i]
        path.append(r)
        next_needed = r.end_version + 1
        i += 1


# ---------------------------------------------------------------- the store


DEFAULT_MAX_BUCKETS = 768


def check_bucket_limit(buckets: int, limit: int) -> None:
    if limit > 0 and buckets > limit:
        raise doris_error(f"Number of buckets ({buckets}) exceeds the maximum allowed value ({limit}); the FE config "
                          "max_bucket_num_per_partition sets it")


@dataclass
class _Touched:
    tables: set[int] = field(default_factory=set)
    added: list[Rowset] = field(default_factory=list)  # rows the write inserts into `rowsets`
    removed: set[str] = field(default_factory=set)  # rowset ids it deletes from `rowsets`


class Catalog(RollupCatalog, SchemaChangeCatalog, CompactionCatalog, DeleteCatalog, ViewCatalog, AuthCatalog,
              TableVersionCatalog):
    """Databases, tables, partitions, indexes, tablets, rowsets, transactions and ALTER jobs, persisted in
    SQLite."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self.path = self.root / "catalog.db"
        self._lock = threading.RLock()
        self._conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self._conn.row_factory = sqlite3.Row
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=FULL")
        self._conn.execute("PRAGMA foreign_keys=OFF")
        self._tablet_drop_listeners: list[Callable[[list[int]], None]] = []
        # read caches, emptied by every write transaction (this process is the catalog's only writer; a
        # read-only Catalog next to a running server turns them off)
        self._init_caches(caching=True)
        # FE config max_bucket_num_per_partition (0: no limit), set by the server: checked before any tablet is made
        self.max_buckets_per_partition = DEFAULT_MAX_BUCKETS
        self.max_running_txn_num_per_db = 1000  # FE config: loads in flight per database (0: no limit)
        with self._write() as c:
            for stmt in _SCHEMA.split(";"):
                if stmt.strip():
                    c.execute(stmt)
            if "temp" not in {r[1] for r in c.execute("PRAGMA table_info(partitions)")}:  # a root from before
                c.execute("ALTER TABLE partitions ADD COLUMN temp INTEGER NOT NULL DEFAULT 0")
            c.execute("INSERT OR IGNORE INTO counters VALUES ('id', ?)", (FIRST_ID,))
            c.execute("INSERT OR IGNORE INTO counters VALUES ('txn', ?)", (FIRST_TXN_ID,))

    def _init_caches(self, caching: bool) -> None:
        self._caching = caching
        self._table_cache: dict[int, OlapTable] = {}
        self._tablet_cache: dict[tuple[int, int | None, int | None], list[Tablet]] = {}
        self._rowset_cache: dict[int, list[Rowset]] = {}
        self._database_cache: dict[str, Database] = {}
        self._table_ids: dict[tuple[int, str], int] = {}  # (db_id, table name) -> table_id
        self._generation = 0  # counts write transactions: whatever was derived from the catalog is stale
        self._schema_generation = 0  # counts the writes that are not a load's or a compaction's
        self._writing = False  # a write transaction is open: what it reads may not be committed, so not cached
        self._touched: _Touched | None = None  # what the running scoped write changes

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def on_tablets_dropped(self, listener: Callable[[list[int]], None]) -> None:
        """Called (after the commit) with the ids of tablets a DROP / TRUNCATE removed, to free their files."""
        self._tablet_drop_listeners.append(listener)

    # ------------------------------------------------------------ plumbing

    @contextmanager
    def _write(self, scoped: bool = False) -> Iterator[sqlite3.Connection]:
        """One SQLite transaction; rolled back on any exception. Afterwards every cache is emptied, unless the
        write is `scoped`: then it names the tables and tablets it changes (`_touch`) and only their entries go,
        so a steady stream of loads does not send every reader back to SQLite."""
        with self._lock:
            touched = self._touched = _Touched() if scoped else None
            self._writing = True
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            else:
                self._conn.execute("COMMIT")
                if touched is not None:
                    self._apply(touched)
                    self._writing = False
                    self._refill(touched.tables)
            finally:
                self._generation += 1
                self._writing, self._touched = False, None
                if touched is None:
                    self._schema_generation += 1
                    self._table_cache.clear()
                    self._tablet_cache.clear()
                    self._rowset_cache.clear()
                    self._database_cache.clear()
                    self._table_ids.clear()

    def _apply(self, touched: _Touched) -> None:
        """After a scoped write's commit: drop its tables' entries and bring its tablets' cached rowsets up to
        date (new lists: a reader may hold the old one)."""
        for table_id in touched.tables:
            self._table_cache.pop(table_id, None)
        by_tablet: dict[int, list[Rowset]] = {}
        for rs in touched.added:
            by_tablet.setdefault(rs.tablet_id, []).append(rs)
        for tablet_id, added in by_tablet.items():
            if (cached := self._rowset_cache.get(tablet_id)) is not None:
                grown = list(cached)  # kept in version_order (visible_path)
                for rs in added:
                    bisect.insort(grown, rs, key=version_order)
                self._rowset_cache[tablet_id] = grown
        if touched.removed:
            for tablet_id, cached in list(self._rowset_cache.items()):
                if any(rs.rowset_id in touched.removed for rs in cached):
                    self._rowset_cache[tablet_id] = [rs for rs in cached if rs.rowset_id not in touched.removed]

    def _refill(self, table_ids: Iterable[int]) -> None:
        """Read a committed write's tables again now, under the lock it holds anyway: readers of a table that a
        steady stream of loads publishes to would otherwise each wait for it behind the next commit's fsync."""
        for table_id in table_ids:
            try:
                self._cached_table(self._conn, table_id)
            except sqlite3.Error:  # the write is committed: its first reader loads the table (and sees the error)
                self._table_cache.pop(table_id, None)

    def _touch(self, tables: Iterable[int] = (), added: Iterable[Rowset] = (), removed: Iterable[str] = ()) -> None:
        """The running write changes these tables' rows (partition versions, sizes) and adds or deletes these
        rowsets (noted for a scoped write; any other write empties every cache anyway)."""
        if self._touched is None:
            return
        self._touched.tables.update(tables)
        self._touched.added.extend(added)
        self._touched.removed.update(removed)

    @property
    def generation(self) -> int | None:
        """Changes with every write transaction (DDL, load, compaction, job progress). None when this
        Catalog is not the only writer (read-only, caches off): its writes cannot be seen here."""
        return self._generation if self._caching else None

    def _may_fill(self) -> bool:
        """Whether what is read now may go into a cache: caching is on and no write is open (its rows may not
        commit)."""
        return self._caching and not self._writing

    @property
    def schema_generation(self) -> int | None:
        """Changes with every write but a load's transaction and a compaction's publish: what a plan is derived
        from (databases, tables, partitions, indexes, views, privileges). None as for `generation`."""
        return self._schema_generation if self._caching else None

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            yield self._conn

    @staticmethod
    def _allocate(c: sqlite3.Connection, n: int = 1, counter: str = "id") -> int:
        """First of `n` consecutive new ids."""
        first = c.execute("SELECT value FROM counters WHERE name = ?", (counter,)).fetchone()[0]
        c.execute("UPDATE counters SET value = ? WHERE name = ?", (first + n, counter))
        return first

    def _notify_dropped(self, tablet_ids: list[int]) -> None:
        if not tablet_ids:
            return
        for listener in self._tablet_drop_listeners:
            listener(tablet_ids)

    # ------------------------------------------------------------ databases

    def create_database(self, name: str, if_not_exists: bool = False,
                        properties: Mapping[str, str] | None = None) -> Database | None:
        with self._write() as c:
            if c.execute("SELECT 1 FROM databases WHERE name = ?", (name,)).fetchone():
                if if_not_exists:
                    return None
                raise doris_error(f"Can't create database '{name}'; database exists", 1007, "HY000")
            db = Database(db_id=self._allocate(c), name=name, create_time=time.time(),
                          properties=tuple((properties or {}).items()))
            c.execute("INSERT INTO databases VALUES (?, ?, ?, ?)",
                      (db.db_id, db.name, db.create_time, _dumps(list(db.properties))))
            return db

    def drop_database(self, name: str, if_exists: bool = False) -> None:
        dropped: list[int] = []
        with self._write() as c:
            row = c.execute("SELECT db_id FROM databases WHERE name = ?", (name,)).fetchone()
            if row is None:
                if if_exists:
                    return
                raise doris_error(f"Can't drop database '{name}'; database doesn't exist", 1008, "HY000")
            for (table_id,) in c.execute("SELECT table_id FROM tables WHERE db_id = ?", (row[0],)).fetchall():
                dropped += self._delete_table(c, table_id)
            c.execute("DELETE FROM transactions WHERE db_id = ?", (row[0],))
            c.execute("DELETE FROM views WHERE db_id = ?", (row[0],))
            c.execute("DELETE FROM databases WHERE db_id = ?", (row[0],))
        self._notify_dropped(dropped)

    def get_database(self, name: str) -> Database | None:
        db = self._database_cache.get(name)
        if db is not None:
            return db
        with self._read() as c:
            row = c.execute("SELECT * FROM databases WHERE name = ?", (name,)).fetchone()
            db = None if row is None else self._database_from(row)
            if db is not None and self._may_fill():
                self._database_cache[name] = db
        return db

    def txn_counts(self) -> dict[str, int]:
        """Transactions kept, by outcome: begin (all), success (visible), failed (aborted) (metrics)."""
        with self._read() as c:
            by_status = dict(c.execute("SELECT status, count(*) FROM transactions GROUP BY status").fetchall())
        return {"begin": sum(by_status.values()), "success": by_status.get(TXN_VISIBLE, 0),
                "failed": by_status.get(TXN_ABORTED, 0)}

    def rowset_totals(self) -> dict[str, int]:
        """Tablets, rowsets not yet stale, their segments and bytes (metrics)."""
        with self._read() as c:
            tablets = c.execute("SELECT count(*) FROM tablets").fetchone()[0]
            rowsets, segments, size = c.execute(
                "SELECT count(*), coalesce(sum(num_segments), 0), coalesce(sum(data_size), 0) FROM rowsets "
                "WHERE rowset_id NOT IN (SELECT rowset_id FROM stale_rowsets)").fetchone()
        return {"tablets": tablets, "rowsets": rowsets, "segments": segments, "bytes": size}

    def list_databases(self) -> list[Database]:
        with self._read() as c:
            rows = c.execute("SELECT * FROM databases ORDER BY name").fetchall()
        return [self._database_from(r) for r in rows]

    @staticmethod
    def _database_from(r: sqlite3.Row) -> Database:
        return Database(db_id=r["db_id"], name=r["name"], create_time=r["create_time"],
                        properties=_pairs(json.loads(r["properties"])))

    def _db_id(self, c: sqlite3.Connection, db_name: str) -> int:
        if not self._writing and (db := self._database_cache.get(db_name)) is not None:
            return db.db_id  # not inside a write that may be changing it
        row = c.execute("SELECT db_id FROM databases WHERE name = ?", (db_name,)).fetchone()
        if row is None:
            raise unknown_database(db_name)
        return row[0]

    # ------------------------------------------------------------ tables

    def create_table(self, db_name: str, spec: TableSpec, if_not_exists: bool = False) -> OlapTable | None:
        with self._write() as c:
            db_id = self._db_id(c, db_name)
            taken = name_taken(c, db_id, spec.name)  # tables and views share the database's names
            if taken is not None:
                if if_not_exists and taken == "table":
                    return None
                raise doris_error(f"Table '{spec.name}' already exists", 1050, "42S01")
            now = time.time()
            table_id = self._allocate(c)
            index_id = self._allocate(c)
            columns = tuple(replace(col, unique_id=col.unique_id or i) for i, col in enumerate(spec.columns))
            base = MaterializedIndexMeta(
                index_id=index_id, name=spec.name, columns=columns, keys_type=spec.keys_type,
                short_key_column_count=spec.short_key_column_count,
                schema_hash=secrets.randbits(31),
            )
            c.execute(
                "INSERT INTO tables VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (table_id, db_id, spec.name, spec.keys_type, _columns_json(columns),
                 _dumps(asdict(spec.partition_info)), _dumps(asdict(spec.distribution)), index_id,
                 _dumps(list(spec.properties)), _dumps([asdict(d) for d in spec.index_defs]), spec.comment,
                 now, now),
            )
            self._insert_index(c, table_id, 0, base)
            index_ids = [index_id]
            by_name = {col.name: col for col in columns}
            for pos, rollup in enumerate(spec.rollups, start=1):  # CREATE TABLE ... ROLLUP: empty, so NORMAL
                if rollup.name == spec.name or rollup.name in {r.name for r in spec.rollups[:pos - 1]}:
                    raise doris_error(f"Rollup index[{rollup.name}] already exists")
                meta = MaterializedIndexMeta(
                    index_id=self._allocate(c), name=rollup.name,
                    columns=tuple(replace(col, unique_id=by_name[col.name].unique_id) for col in rollup.columns),
                    keys_type=spec.keys_type, short_key_column_count=rollup.short_key_column_count,
                    schema_hash=secrets.randbits(31),
                )
                self._insert_index(c, table_id, pos, meta)
                index_ids.append(meta.index_id)
            for pos, item in enumerate(spec.partition_items):
                self._insert_partition(c, table_id, pos, item, spec.distribution, index_ids)
            if retention_seconds(dict(spec.properties)) > 0:  # time travel from its empty start on
                self._record_table_version(c, table_id, now, None, "", "RETENTION", 0)
            return self._load_table(c, table_id)

    @staticmethod
    def _insert_index(c: sqlite3.Connection, table_id: int, position: int, meta: MaterializedIndexMeta) -> None:
        c.execute(
            "INSERT INTO indexes VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (meta.index_id, table_id, position, meta.name, _columns_json(meta.columns), meta.keys_type,
             meta.short_key_column_count, meta.schema_hash, meta.state),
        )

    def _insert_partition(self, c: sqlite3.Connection, table_id: int, position: int, item: PartitionItem,
                          distribution: DistributionInfo, index_ids: Sequence[int], temp: bool = False) -> int:
        """A new empty partition (version 1) with one tablet per bucket per index; `temp`: a temporary one."""
        partition_id = self._allocate(c)
        buckets = item.buckets or distribution.buckets
        check_bucket_limit(buckets, self.max_buckets_per_partition)
        c.execute(
            "INSERT INTO partitions VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (partition_id, table_id, position, _item_json(item), buckets, PARTITION_INIT_VERSION, time.time(),
             PARTITION_INIT_VERSION + 1, 0, 0, int(temp)),
        )
        first = self._allocate(c, buckets * len(index_ids))
        c.executemany(
            "INSERT INTO tablets VALUES (?, ?, ?, ?, ?)",
            [(first + i * buckets + b, table_id, partition_id, index_id, b)
             for i, index_id in enumerate(index_ids) for b in range(buckets)],
        )
        return partition_id

    def get_table(self, db_name: str, name: str) -> OlapTable | None:
        """The table, or None if the database has no such table (unknown database raises)."""
        db = self._database_cache.get(db_name)
        if db is not None and (table_id := self._table_ids.get((db.db_id, name))) is not None:
            table = self._table_cache.get(table_id)
            if table is not None:
                return table  # a cache hit does not wait for a write's commit (it reads what was there before)
        with self._read() as c:
            db_id = self._db_id(c, db_name)
            row = c.execute("SELECT table_id FROM tables WHERE db_id = ? AND name = ?", (db_id, name)).fetchone()
            if row is None:
                return None
            if self._may_fill():
                self._table_ids[(db_id, name)] = row[0]
            return self._cached_table(c, row[0])

    def table_cached(self, table_id: int) -> bool:
        """Whether get_table_by_id answers from memory (a load's publish drops its table's entry; the refill waits
        for the catalog lock, which a commit holds through its fsync)."""
        return table_id in self._table_cache

    def get_table_by_id(self, table_id: int) -> OlapTable | None:
        table = self._table_cache.get(table_id)
        if table is not None:
            return table
        with self._read() as c:
            return self._cached_table(c, table_id)

    def list_tables(self, db_name: str) -> list[OlapTable]:
        with self._read() as c:
            db_id = self._db_id(c, db_name)
            ids = [r[0] for r in c.execute("SELECT table_id FROM tables WHERE db_id = ? ORDER BY name", (db_id,))]
            return [t for t in (self._cached_table(c, i) for i in ids) if t is not None]

    def drop_table(self, db_name: str, name: str, if_exists: bool = False) -> None:
        with self._write() as c:
            db_id = self._db_id(c, db_name)
            row = c.execute("SELECT table_id FROM tables WHERE db_id = ? AND name = ?", (db_id, name)).fetchone()
            if row is None:
                if if_exists:
                    return
                raise doris_error(f"Unknown table '{name}'", 1051, "42S02")
            dropped = self._delete_table(c, row[0])
        self._notify_dropped(dropped)

    @staticmethod
    def _delete_table(c: sqlite3.Connection, table_id: int) -> list[int]:
        tablet_ids = [r[0] for r in c.execute("SELECT tablet_id FROM tablets WHERE table_id = ?", (table_id,))]
        c.execute("DELETE FROM rowsets WHERE tablet_id IN (SELECT tablet_id FROM tablets WHERE table_id = ?)",
                  (table_id,))
        for t in ("tablets", "partitions", "indexes", "tables"):
            c.execute(f"DELETE FROM {t} WHERE table_id = ?", (table_id,))
        cancel_table_jobs(c, table_id, "table was dropped")
        c.execute("UPDATE transactions SET status = ?, reason = 'table dropped' WHERE table_id = ? AND status = ?",
                  (TXN_ABORTED, table_id, TXN_PREPARE))
        return tablet_ids

    def truncate_table(self, db_name: str, name: str, partition_names: Sequence[str] | None = None) -> OlapTable:
        """Replace the (named) partitions with new empty ones: new ids and tablets, same definitions,
        versions back to 1."""
        with self._write() as c:
            db_id = self._db_id(c, db_name)
            row = c.execute("SELECT table_id FROM tables WHERE db_id = ? AND name = ?", (db_id, name)).fetchone()
            if row is None:
                raise doris_error(f"Unknown table '{name}'", 1051, "42S02")
            table = self._load_table(c, row[0])
            assert table is not None
            wanted = None if partition_names is None else {p.lower() for p in partition_names}
            if wanted is not None:
                missing = wanted - {p.name.lower() for p in table.partitions}
                if missing:
                    name = next(p for p in partition_names if p.lower() in missing)
                    raise doris_error(f"Partition {name} does not exist")
            index_ids = [i.index_id for i in table.indexes]
            dropped: list[int] = []
            if wanted is None:  # Doris: TRUNCATE TABLE drops the temporary partitions
                for p in table.temp_partitions:
                    dropped += self._delete_partition(c, p.partition_id)
            for pos, p in enumerate(table.partitions):
                if wanted is not None and p.name.lower() not in wanted:
                    continue
                dropped += self._delete_partition(c, p.partition_id)
                # keep the bucket count the partition actually had
                item = p.item if p.item.buckets else replace(p.item, buckets=p.buckets)
                self._insert_partition(c, table.table_id, pos, item, table.distribution, index_ids)
            c.execute("UPDATE tables SET update_time = ? WHERE table_id = ?", (time.time(), table.table_id))
            c.execute("UPDATE transactions SET status = ?, reason = 'table truncated' WHERE table_id = ? "
                      "AND status = ?", (TXN_ABORTED, table.table_id, TXN_PREPARE))
            self._record_table_version(c, table.table_id, time.time(), None, "", "TRUNCATE", 0)
            result = self._load_table(c, table.table_id)
        self._notify_dropped(dropped)
        assert result is not None
        return result

    @staticmethod
    def _replace_rowsets(c: sqlite3.Connection, txn_id: int, written: set[int], versions: dict[int, int],
                         overwrite: Collection[int], now: float, replaced: list[Rowset]) -> None:
        """INSERT OVERWRITE's other half (see publish): an empty [0-v] rowset in each tablet of the overwritten
        partitions that got no new one, and every older rowset of those tablets marked stale."""
        for pid in overwrite:
            v = versions[pid]
            for (tablet_id,) in c.execute("SELECT tablet_id FROM tablets WHERE partition_id = ?", (pid,)).fetchall():
                if tablet_id in written:
                    output = c.execute("SELECT rowset_id FROM rowsets WHERE tablet_id = ? AND txn_id = ?",
                                       (tablet_id, txn_id)).fetchone()[0]
                else:
                    output = secrets.token_hex(16)
                    c.execute("INSERT INTO rowsets VALUES (?, ?, 0, ?, 0, 0, 0, ?, 'DATA', NULL, 0, ?)",
                              (output, tablet_id, v, txn_id, now))
                old = c.execute("SELECT * FROM rowsets WHERE tablet_id = ? AND end_version < ? AND rowset_id NOT IN "
                                "(SELECT rowset_id FROM stale_rowsets)", (tablet_id, v)).fetchall()
                c.executemany("INSERT INTO stale_rowsets VALUES (?, ?, ?, ?)",
                              [(r["rowset_id"], tablet_id, output, now) for r in old])
                replaced.extend(_rowset_from(r) for r in old)

    # ------------------------------------------------------------ partitions

    def add_partitions(self, table_id: int, items: Sequence[PartitionItem], buckets: Sequence[int],
                       temporary: bool = False) -> OlapTable:
        """New empty partitions (version 1), `buckets[i]` tablets for items[i] in every materialized index (the
        base, each rollup, a SHADOW index being built), committed all or nothing.

        Names, ranges and listed values are checked again here against the committed partitions (Doris's
        messages, storage.catalog.partition_items), so of two concurrent adders of the same or overlapping
        partitions exactly one wins. Partition ids are new; RANGE partitions keep their range order.
        """
        if len(items) != len(buckets):
            raise ValueError("one bucket number per partition item")
        with self._write() as c:
            table = self._load_table(c, table_id)
            if table is None:
                raise doris_error(f"Unknown table id {table_id}", 1051, "42S02")
            kind = table.partition_info.type
            if kind not in ("RANGE", "LIST"):
                raise cannot_add_partition()
            if any(n < 1 for n in buckets):
                raise doris_error("Cannot assign hash distribution buckets less than 1")
            index_ids = [i.index_id for i in table.indexes]
            if temporary:  # names unique among all partitions; ranges / keys only among the temporary ones
                for item in items:
                    if table.partition(item.name) is not None:
                        raise duplicate_partition_name(item.name)
                check_new_items(kind, self._partition_types(table), [p.item for p in table.temp_partitions], items)
            else:
                for item in items:
                    if table.temp_partition(item.name) is not None:
                        raise duplicate_partition_name(item.name)
                check_new_items(kind, self._partition_types(table), [p.item for p in table.partitions], items)
            placed = table.temp_partitions if temporary else table.partitions
            for offset, (item, n) in enumerate(zip(items, buckets, strict=True)):
                self._insert_partition(c, table_id, len(placed) + offset, replace(item, buckets=n),
                                       table.distribution, index_ids, temp=temporary)
            self._renumber_partitions(c, table_id)
            c.execute("UPDATE tables SET update_time = ? WHERE table_id = ?", (time.time(), table_id))
            result = self._load_table(c, table_id)
        assert result is not None
        return result

    def replace_partitions(self, table_id: int, names: Sequence[str], temp_names: Sequence[str],
                           strict_range: bool = True, use_temp_name: bool = False) -> OlapTable:
        """ALTER TABLE REPLACE PARTITION (p, ..) WITH TEMPORARY PARTITION (tp, ..) in one commit: the temporary
        partitions become formal ones (under the replaced names when as many, unless `use_temp_name`), the
        replaced partitions go with their data. Doris's checks: the names exist; with `strict_range` (always for
        LIST) the ranges / keys match exactly, otherwise the new ones must not overlap the partitions kept."""
        with self._write() as c:
            table = self._load_table(c, table_id)
            if table is None:
                raise doris_error(f"Unknown table id {table_id}", 1051, "42S02")
            def named(names: Sequence[str], find: Callable[[str], Partition | None], what: str) -> list[Partition]:
                found = [(n, find(n)) for n in dict.fromkeys(n.lower() for n in names)]
                missing = next((n for n, p in found if p is None), None)
                if missing is not None:
                    raise doris_error(f"{what}[{missing}] does not exist")
                return [p for _, p in found if p is not None]

            old = named(names, table.partition, "Partition")
            new = named(temp_names, table.temp_partition, "Temp partition")
            kind, types = table.partition_info.type, self._partition_types(table)
            if strict_range or kind == "LIST":
                check_items_match(kind, types, [p.item for p in old], [p.item for p in new])
            else:
                replaced = {p.partition_id for p in old}
                check_new_items(kind, types, [p.item for p in table.partitions if p.partition_id not in replaced],
                                [p.item for p in new])
            dropped: list[int] = []
            for p in old:
                dropped += self._delete_partition(c, p.partition_id)
            keep_names = not use_temp_name and len(old) == len(new)
            for k, p in enumerate(new):
                item = replace(p.item, name=old[k].name) if keep_names else p.item
                c.execute("UPDATE partitions SET temp = 0, item = ? WHERE partition_id = ?",
                          (_item_json(item), p.partition_id))
            self._renumber_partitions(c, table_id)
            c.execute("UPDATE tables SET update_time = ? WHERE table_id = ?", (time.time(), table_id))
            self._record_table_version(c, table_id, time.time(), None, "", "REPLACE PARTITION", 0)
            result = self._load_table(c, table_id)
        self._notify_dropped(dropped)
        assert result is not None
        return result

    @staticmethod
    def _delete_partition(c: sqlite3.Connection, partition_id: int) -> list[int]:
        """Remove a partition with its tablets and rowsets (in the caller's transaction); its tablet ids."""
        dropped = [r[0] for r in c.execute("SELECT tablet_id FROM tablets WHERE partition_id = ?", (partition_id,))]
        c.execute("DELETE FROM rowsets WHERE tablet_id IN "
                  "(SELECT tablet_id FROM tablets WHERE partition_id = ?)", (partition_id,))
        c.execute("DELETE FROM tablets WHERE partition_id = ?", (partition_id,))
        c.execute("DELETE FROM partitions WHERE partition_id = ?", (partition_id,))
        return dropped

    def drop_partitions(self, table_id: int, names: Sequence[str], if_exists: bool = False,
                        temporary: bool = False) -> OlapTable:
        """Remove partitions (names case-insensitive) with their tablets of every index and their rowsets in one
        commit; the files go after it (the on_tablets_dropped listeners). A missing name fails with Doris's
        ERR_DROP_PARTITION_NON_EXISTENT unless `if_exists`. Loads still writing a dropped partition fail to
        publish (`partition ... no longer exists`)."""
        with self._write() as c:
            table = self._load_table(c, table_id)
            if table is None:
                raise doris_error(f"Unknown table id {table_id}", 1051, "42S02")
            by_name = {p.name.lower(): p for p in (table.temp_partitions if temporary else table.partitions)}
            dropped: list[int] = []
            for name in dict.fromkeys(n.lower() for n in names):
                p = by_name.get(name)
                if p is None:
                    if if_exists:
                        continue
                    raise doris_error(f"Error in list of partitions to {next(n for n in names if n.lower() == name)}",
                                      1507, "HY000")
                dropped += self._delete_partition(c, p.partition_id)
            self._renumber_partitions(c, table_id)
            c.execute("UPDATE tables SET update_time = ? WHERE table_id = ?", (time.time(), table_id))
            if not temporary:
                self._record_table_version(c, table_id, time.time(), None, "", "DROP PARTITION", 0)
            result = self._load_table(c, table_id)
        self._notify_dropped(dropped)
        assert result is not None
        return result

    def modify_partition_properties(self, table_id: int, names: Sequence[str],
                                    properties: Sequence[tuple[str, str]]) -> OlapTable:
        """Set properties (already validated) on the named partitions: given keys replace, others stay."""
        with self._write() as c:
            table = self._load_table(c, table_id)
            if table is None:
                raise doris_error(f"Unknown table id {table_id}", 1051, "42S02")
            by_name = {p.name.lower(): p for p in table.partitions}
            for name in names:
                if name.lower() not in by_name:
                    raise doris_error(f"Partition[{name}] does not exist in table[{table.name}]")
            for name in dict.fromkeys(n.lower() for n in names):
                p = by_name[name]
                merged = dict(p.item.properties) | dict(properties)
                c.execute("UPDATE partitions SET item = ? WHERE partition_id = ?",
                          (_item_json(replace(p.item, properties=tuple(merged.items()))), p.partition_id))
            c.execute("UPDATE tables SET update_time = ? WHERE table_id = ?", (time.time(), table_id))
            result = self._load_table(c, table_id)
        assert result is not None
        return result

    def rename(self, table_id: int, kind: str, old: str, new: str) -> OlapTable:
        """ALTER TABLE RENAME (`kind` TABLE: `old` ignored), RENAME ROLLUP, RENAME PARTITION: a catalog change,
        with Doris's checks (Env.renameTable / renameRollup / renamePartition). An unpartitioned table's one
        partition carries the table's name and is renamed with it."""
        with self._write() as c:
            table = self._load_table(c, table_id)
            if table is None:
                raise doris_error(f"Unknown table id {table_id}", 1051, "42S02")
            if kind == "TABLE":
                if table.name == new:
                    raise doris_error("Same table name")
                if c.execute("SELECT 1 FROM tables WHERE db_id = ? AND lower(name) = lower(?)",
                             (table.db_id, new)).fetchone() is not None:
                    raise doris_error(f"Table name[{new}] is already used")
                c.execute("UPDATE tables SET name = ? WHERE table_id = ?", (new, table_id))
                if table.partition_info.type == "UNPARTITIONED" and len(table.partitions) == 1:
                    only = table.partitions[0]
                    c.execute("UPDATE partitions SET item = ? WHERE partition_id = ?",
                              (_item_json(replace(only.item, name=new)), only.partition_id))
                base = table.base_index
                c.execute("UPDATE indexes SET name = ? WHERE index_id = ?", (new, base.index_id))
            elif kind == "ROLLUP":
                if old == new:
                    raise doris_error("Same rollup name")
                by_name = {i.name.lower(): i for i in table.indexes if i.index_id != table.base_index_id}
                if old.lower() not in by_name:
                    raise doris_error(f"Rollup index[{old}] does not exist")
                if new.lower() in by_name or new.lower() == table.name.lower():
                    raise doris_error(f"Rollup name[{new}] is already used")
                c.execute("UPDATE indexes SET name = ? WHERE index_id = ?", (new, by_name[old.lower()].index_id))
            else:
                if table.partition_info.type == "UNPARTITIONED":
                    raise doris_error(f"Table[{table.name}] is single partitioned. no need to rename partition name.")
                if old.lower() == new.lower():
                    raise doris_error("Same partition name")
                partition = table.partition(old)
                if partition is None:
                    raise doris_error(f"Partition[{old}] does not exist")
                if table.partition(new) is not None:
                    raise doris_error(f"Partition name[{new}] is already used")
                c.execute("UPDATE partitions SET item = ? WHERE partition_id = ?",
                          (_item_json(replace(partition.item, name=new)), partition.partition_id))
            c.execute("UPDATE tables SET update_time = ? WHERE table_id = ?", (time.time(), table_id))
            result = self._load_table(c, table_id)
        assert result is not None
        return result

    def change_schema(self, table_id: int, columns: Sequence[Column], indexes: Sequence[MaterializedIndexMeta],
                      partition_info: PartitionInfo, distribution: DistributionInfo,
                      properties: Sequence[tuple[str, str]], index_defs: Sequence[IndexDef],
                      renames: Sequence[tuple[str, str]] = ()) -> OlapTable:
        """A light schema change in one commit: the new base and index schemas (columns with unique_id < 0 are
        new and get fresh ids, never reused, so a segment's dropped column cannot come back under a new one
        of the same name), the definitions that name columns, and the DELETE conditions' column names
        (`renames`, in order)."""
        with self._write() as c:
            if c.execute("SELECT 1 FROM tables WHERE table_id = ?", (table_id,)).fetchone() is None:
                raise doris_error(f"Unknown table id {table_id}", 1051, "42S02")
            fresh: dict[str, int] = {}
            base = self._with_ids(c, columns, fresh)
            indexes = [replace(i, columns=self._with_ids(c, i.columns, fresh)) for i in indexes]
            self._apply_definition(c, table_id, base, indexes, partition_info, distribution, properties,
                                   index_defs, renames)
            # as Doris does for a light schema change: a FINISHED job, so SHOW ALTER TABLE COLUMN shows it done
            table = self._load_table(c, table_id)
            assert table is not None
            now = time.time()
            SCHEMA_CHANGE_JOBS.save(c, SchemaChangeJob(
                job_id=self._allocate(c), db_id=table.db_id, table_id=table_id, table_name=table.name,
                index_id=table.base_index_id, state=JOB_FINISHED, create_time=now, finish_time=now,
                schema_version=len(SCHEMA_CHANGE_JOBS.jobs(c, table_id=table_id)) + 1,
                watershed_txn_id=c.execute("SELECT value FROM counters WHERE name = 'txn'").fetchone()[0]))
            result = self._load_table(c, table_id)
        assert result is not None
        return result

    def _with_ids(self, c: sqlite3.Connection, cols: Sequence[Column], fresh: dict[str, int]) -> tuple[Column, ...]:
        """`cols` with a fresh unique id for each new column (unique_id < 0), the same one for a name in every
        index (`fresh` carries them from one index to the next)."""
        out = []
        for col in cols:
            if col.unique_id < 0:
                if col.name.lower() not in fresh:
                    fresh[col.name.lower()] = self._allocate(c)
                col = replace(col, unique_id=fresh[col.name.lower()])
            out.append(col)
        return tuple(out)

    @staticmethod
    def _apply_definition(c: sqlite3.Connection, table_id: int, columns: Sequence[Column],
                          indexes: Sequence[MaterializedIndexMeta], partition_info: PartitionInfo,
                          distribution: DistributionInfo, properties: Sequence[tuple[str, str]],
                          index_defs: Sequence[IndexDef], renames: Sequence[tuple[str, str]]) -> None:
        """Write a table definition (ids resolved) in the caller's transaction; indexes not listed keep theirs."""
        if renames:
            deletes = c.execute(
                "SELECT r.rowset_id, r.delete_predicate FROM rowsets r JOIN tablets t ON r.tablet_id = "
                "t.tablet_id WHERE t.table_id = ? AND r.kind = 'DELETE' AND r.delete_predicate IS NOT NULL",
                (table_id,)).fetchall()
            for rowset_id, text in deletes:
                for old, new in renames:
                    text = rename_delete_columns(text, old, new)
                c.execute("UPDATE rowsets SET delete_predicate = ? WHERE rowset_id = ?", (text, rowset_id))
        c.execute("UPDATE tables SET columns = ?, partition_info = ?, distribution = ?, properties = ?, "
                  "index_defs = ?, update_time = ? WHERE table_id = ?",
                  (_columns_json(columns), _dumps(asdict(partition_info)), _dumps(asdict(distribution)),
                   _dumps([list(p) for p in properties]), _dumps([asdict(d) for d in index_defs]), time.time(),
                   table_id))
        for index in indexes:
            c.execute("UPDATE indexes SET columns = ?, short_key_column_count = ? WHERE index_id = ?",
                      (_columns_json(index.columns), index.short_key_column_count, index.index_id))

    def set_distribution(self, table_id: int, distribution: DistributionInfo) -> None:
        check_bucket_limit(distribution.buckets, self.max_buckets_per_partition)
        with self._write() as c:
            c.execute("UPDATE tables SET distribution = ?, update_time = ? WHERE table_id = ?",
                      (_dumps(asdict(distribution)), time.time(), table_id))

    def set_table_comment(self, table_id: int, comment: str) -> None:
        with self._write() as c:
            c.execute("UPDATE tables SET comment = ?, update_time = ? WHERE table_id = ?",
                      (comment, time.time(), table_id))

    def set_table_properties(self, table_id: int, properties: Sequence[tuple[str, str]]) -> OlapTable:
        """Replace the table's PROPERTIES list (validated and ordered by the caller, as SHOW CREATE TABLE
        prints it)."""
        with self._write() as c:
            before = c.execute("SELECT properties FROM tables WHERE table_id = ?", (table_id,)).fetchone()
            if before is None:
                raise doris_error(f"Unknown table id {table_id}", 1051, "42S02")
            now = time.time()
            c.execute("UPDATE tables SET properties = ?, update_time = ? WHERE table_id = ?",
                      (_dumps([list(p) for p in properties]), now, table_id))
            if retention_seconds(dict(properties)) > 0 and not retention_seconds(dict(json.loads(before[0]))):
                self._record_table_version(c, table_id, now, None, "", "RETENTION", 0)  # time travel from now on
            result = self._load_table(c, table_id)
        assert result is not None
        return result

    @staticmethod
    def _partition_types(table: OlapTable) -> tuple[str, ...]:
        by_name = {col.name.lower(): col.type for col in table.columns}
        return tuple(by_name[name.lower()] for name in table.partition_info.columns)

    def _renumber_partitions(self, c: sqlite3.Connection, table_id: int) -> None:
        """Positions 0..n-1 in Doris's order: RANGE partitions by range, others as they are."""
        table = self._load_table(c, table_id)
        assert table is not None
        partitions = list(table.partitions)
        if table.partition_info.type == "RANGE":
            order = {id(item): i for i, item in enumerate(
                sort_items([p.item for p in partitions], "RANGE", self._partition_types(table)))}
            partitions.sort(key=lambda p: order[id(p.item)])
        c.executemany("UPDATE partitions SET position = ? WHERE partition_id = ?",
                      [(pos, p.partition_id) for pos, p in enumerate(partitions)])

    def add_index(self, table_id: int, name: str, columns: Sequence[Column], short_key_column_count: int,
                  state: str = INDEX_NORMAL) -> MaterializedIndexMeta:
        """A new materialized index (rollup) with one empty tablet per bucket in every partition.

        Loads write every index from then on; building it from existing data is the ALTER job's work (it
        creates the index as SHADOW, fills it, then switches it to NORMAL with `set_index_state`).
        """
        with self._write() as c:
            table = self._load_table(c, table_id)
            if table is None:
                raise doris_error(f"Unknown table id {table_id}", 1051, "42S02")
            if any(i.name == name for i in table.indexes):
                raise doris_error(f"Rollup name[{name}] already exists")
            meta = MaterializedIndexMeta(
                index_id=self._allocate(c), name=name, columns=tuple(columns), keys_type=table.keys_type,
                short_key_column_count=short_key_column_count, schema_hash=secrets.randbits(31), state=state,
            )
            self._insert_index(c, table_id, len(table.indexes), meta)
            for p in table.partitions:
                first = self._allocate(c, p.buckets)
                c.executemany("INSERT INTO tablets VALUES (?, ?, ?, ?, ?)",
                              [(first + b, table_id, p.partition_id, meta.index_id, b) for b in range(p.buckets)])
            return meta

    def set_index_state(self, index_id: int, state: str) -> None:
        with self._write() as c:
            c.execute("UPDATE indexes SET state = ? WHERE index_id = ?", (state, index_id))

    def _cached_table(self, c: sqlite3.Connection, table_id: int) -> OlapTable | None:
        table = self._table_cache.get(table_id)
        if table is None:
            table = self._load_table(c, table_id)
            if table is not None and self._may_fill():
                self._table_cache[table_id] = table
        return table

    @staticmethod
    def _load_table(c: sqlite3.Connection, table_id: int) -> OlapTable | None:
        r = c.execute("SELECT * FROM tables WHERE table_id = ?", (table_id,)).fetchone()
        if r is None:
            return None
        indexes = tuple(
            MaterializedIndexMeta(
                index_id=i["index_id"], name=i["name"], columns=_columns_from(i["columns"]),
                keys_type=i["keys_type"], short_key_column_count=i["short_key_column_count"],
                schema_hash=i["schema_hash"], state=i["state"],
            )
            for i in c.execute("SELECT * FROM indexes WHERE table_id = ? ORDER BY position, index_id", (table_id,))
        )
        partitions: tuple[list[Partition], list[Partition]] = ([], [])
        for p in c.execute("SELECT * FROM partitions WHERE table_id = ? ORDER BY position, partition_id",
                           (table_id,)):
            partitions[p["temp"]].append(Partition(
                partition_id=p["partition_id"], table_id=table_id, item=_item_from(p["item"]), buckets=p["buckets"],
                visible_version=p["visible_version"], visible_version_time=p["visible_version_time"],
                next_version=p["next_version"], data_size=p["data_size"], row_count=p["row_count"],
            ))
        return OlapTable(
            table_id=table_id, db_id=r["db_id"], name=r["name"], keys_type=r["keys_type"],
            columns=_columns_from(r["columns"]), partition_info=_partition_info_from(r["partition_info"]),
            distribution=_distribution_from(r["distribution"]), base_index_id=r["base_index_id"],
            indexes=indexes, partitions=tuple(partitions[0]), temp_partitions=tuple(partitions[1]),
            properties=_pairs(json.loads(r["properties"])),
            index_defs=_index_defs_from(r["index_defs"]), comment=r["comment"], create_time=r["create_time"],
            update_time=r["update_time"],
        )

    # ------------------------------------------------------------ tablets and rowsets

    def tablets(self, table_id: int, partition_id: int | None = None, index_id: int | None = None) -> list[Tablet]:
        key = (table_id, partition_id, index_id)
        sql = "SELECT * FROM tablets WHERE table_id = ?"
        args: list[Any] = [table_id]
        if partition_id is not None:
            sql += " AND partition_id = ?"
            args.append(partition_id)
        if index_id is not None:
            sql += " AND index_id = ?"
            args.append(index_id)
        cached = self._tablet_cache.get(key)
        if cached is not None:
            return list(cached)
        with self._read() as c:
            cached = self._tablet_cache.get(key)
            if cached is None:
                rows = c.execute(sql + " ORDER BY tablet_id", args).fetchall()
                cached = [Tablet(tablet_id=r["tablet_id"], table_id=r["table_id"], partition_id=r["partition_id"],
                                 index_id=r["index_id"], bucket=r["bucket"]) for r in rows]
                if self._may_fill():
                    self._tablet_cache[key] = cached
        return list(cached)

    def tablet_rowset_summary(self, table_id: int) -> dict[int, tuple[int, int, int, int]]:
        """tablet_id -> (rowsets, rows, bytes, highest end version) of a table's tablets, stale rowsets left out:
        one query for a whole table (the console, metrics)."""
        with self._read() as c:
            rows = c.execute(
                "SELECT r.tablet_id, count(*), sum(r.num_rows), sum(r.data_size), max(r.end_version) FROM rowsets r "
                "JOIN tablets t ON t.tablet_id = r.tablet_id WHERE t.table_id = ? AND r.rowset_id NOT IN "
                "(SELECT rowset_id FROM stale_rowsets) GROUP BY r.tablet_id", (table_id,)).fetchall()
        return {r[0]: (r[1], r[2], r[3], r[4]) for r in rows}

    def all_rowsets(self, tablet_id: int) -> list[Rowset]:
        """Every committed rowset of a tablet (including ones a compaction superseded)."""
        with self._read() as c:
            rows = c.execute("SELECT * FROM rowsets WHERE tablet_id = ? ORDER BY start_version, end_version",
                             (tablet_id,)).fetchall()
        return [_rowset_from(r) for r in rows]

    def rowsets(self, tablet_id: int, max_version: int) -> list[Rowset]:
        """The rowsets a reader at `max_version` sees, in version order."""
        return visible_path(self._all_rowsets_of([tablet_id])[tablet_id], max_version)

    def _all_rowsets_of(self, tablet_ids: Sequence[int]) -> dict[int, list[Rowset]]:
        """tablet_id -> every rowset row of the tablet (stale ones too) in version_order, from the cache when
        there (hits do not wait for a write's commit)."""
        cache = self._rowset_cache if self._caching else {}
        out: dict[int, list[Rowset]] = {}
        missing = []
        for tid in tablet_ids:
            if (hit := cache.get(tid)) is not None:
                out[tid] = hit
            else:
                missing.append(tid)
        if missing:
            with self._read() as c:
                for start in range(0, len(missing), 500):
                    chunk = missing[start:start + 500]
                    fetched: dict[int, list[Rowset]] = {tid: [] for tid in chunk}
                    for r in c.execute(f"SELECT * FROM rowsets WHERE tablet_id IN ({','.join('?' * len(chunk))})",
                                       chunk):
                        fetched[r["tablet_id"]].append(_rowset_from(r))
                    for rowsets in fetched.values():
                        rowsets.sort(key=version_order)
                    out.update(fetched)
                    if self._may_fill():
                        cache.update(fetched)
        return out

    def rowsets_for_tablets(self, tablets: Sequence[Tablet], versions: Mapping[int, int]) -> dict[int, list[Rowset]]:
        """Visible rowsets of many tablets at once: tablet_id -> rowsets at its partition's snapshot version."""
        by_tablet = self._all_rowsets_of([t.tablet_id for t in tablets])
        partition_of = {t.tablet_id: t.partition_id for t in tablets}
        return {tid: visible_path(rs, versions[partition_of[tid]]) for tid, rs in by_tablet.items()}

    def all_rowset_ids(self) -> set[str]:
        with self._read() as c:
            return {r[0] for r in c.execute("SELECT rowset_id FROM rowsets")}

    def all_tablet_ids(self) -> set[int]:
        with self._read() as c:
            return {r[0] for r in c.execute("SELECT tablet_id FROM tablets")}

    # ------------------------------------------------------------ transactions

    def begin_txn(self, db_id: int, table_id: int, label: str | None = None) -> int:
        label = label or new_label()
        with self._write(scoped=True) as c:  # a transaction record: nothing cached changes
            used = c.execute("SELECT 1 FROM transactions WHERE db_id = ? AND label = ? AND status != ?",
                             (db_id, label, TXN_ABORTED)).fetchone()
            if used:
                raise doris_error(f"Label [{label}] has already been used.")
            limit = self.max_running_txn_num_per_db
            if limit > 0:
                running = c.execute("SELECT count(*) FROM transactions WHERE db_id = ? AND status = ?",
                                    (db_id, TXN_PREPARE)).fetchone()[0]
                if running >= limit:
                    raise doris_error(f"current running txns on db {db_id} is {running}, larger than limit {limit}")
            txn_id = self._allocate(c, counter="txn")
            c.execute("INSERT INTO transactions VALUES (?, ?, ?, ?, ?, ?, NULL, NULL)",
                      (txn_id, db_id, table_id, label, TXN_PREPARE, time.time()))
            return txn_id

    def abort_prepared_txns(self, reason: str) -> int:
        """At start: loads the previous process left unpublished can never finish (their staged files are
        gone); abort them so nothing (an ALTER job's WAITING_TXN) waits for them. Returns how many."""
        with self._write() as c:
            return c.execute("UPDATE transactions SET status = ?, finished_at = ?, reason = ? WHERE status = ?",
                             (TXN_ABORTED, time.time(), reason, TXN_PREPARE)).rowcount

    def get_txn(self, txn_id: int) -> Transaction | None:
        with self._read() as c:
            row = c.execute("SELECT * FROM transactions WHERE txn_id = ?", (txn_id,)).fetchone()
        return None if row is None else _txn_from(row)

    def get_txn_by_label(self, db_id: int, label: str) -> Transaction | None:
        with self._read() as c:
            row = c.execute("SELECT * FROM transactions WHERE db_id = ? AND label = ? ORDER BY txn_id DESC",
                            (db_id, label)).fetchone()
        return None if row is None else _txn_from(row)

    def abort_txn(self, txn_id: int, reason: str = "") -> None:
        with self._write(scoped=True) as c:
            c.execute("UPDATE transactions SET status = ?, finished_at = ?, reason = ? WHERE txn_id = ? "
                      "AND status = ?", (TXN_ABORTED, time.time(), reason, txn_id, TXN_PREPARE))

    @staticmethod
    def _written_indexes(c: sqlite3.Connection, rowsets: Sequence[Rowset]) -> set[int]:
        ids = list({rs.tablet_id for rs in rowsets})
        out: set[int] = set()
        for k in range(0, len(ids), 500):
            chunk = ids[k:k + 500]
            out |= {r[0] for r in c.execute(
                f"SELECT DISTINCT index_id FROM tablets WHERE tablet_id IN ({','.join('?' * len(chunk))})", chunk)}
        return out

    def publish(self, txn_id: int, rowsets: Sequence[Rowset], partition_ids: Iterable[int],
                also: Callable[[sqlite3.Connection], None] | None = None, overwrite: Collection[int] = (),
                replaced: list[Rowset] | None = None) -> dict[int, int]:
        """Make a load visible: in ONE SQLite transaction, give each touched partition its next version,
        add every rowset at that version ([v-v]) and advance the partitions' visible versions; `also`
        writes what must commit with them (a DELETE's job record).

        The partitions in `overwrite` (INSERT OVERWRITE) get their new data as rowsets [0-v] instead, an
        empty one in each tablet the load wrote nothing into: by the visibility rule a reader at v or later
        reads only them, an older snapshot still reads the old data. The old rowsets become stale, as a
        compaction's inputs do, and are appended to `replaced` for the caller to retire.

        The rowsets' own version fields are ignored (versions are only known here). Returns
        partition_id -> new visible version.
        """
        partition_ids = sorted(set(partition_ids) | set(overwrite))
        with self._write(scoped=not overwrite and also is None) as c:  # a plain load: its table and tablets
            txn = c.execute("SELECT * FROM transactions WHERE txn_id = ?", (txn_id,)).fetchone()
            if txn is None or txn["status"] != TXN_PREPARE:
                state = "unknown" if txn is None else txn["status"]
                raise doris_error(f"transaction [{txn_id}] is {state}, cannot publish")
            table_id = txn["table_id"]
            base = c.execute("SELECT base_index_id FROM tables WHERE table_id = ?", (table_id,)).fetchone()
            if base is None:
                raise doris_error(f"table of transaction [{txn_id}] no longer exists")
            now = time.time()
            versions: dict[int, int] = {}
            for pid in partition_ids:
                p = c.execute("SELECT next_version, table_id FROM partitions WHERE partition_id = ?",
                              (pid,)).fetchone()
                if p is None or p["table_id"] != table_id:
                    raise doris_error(f"partition [{pid}] of transaction [{txn_id}] no longer exists")
                versions[pid] = p["next_version"]
            data_size = dict.fromkeys(partition_ids, 0)
            row_count = dict.fromkeys(partition_ids, 0)
            written: set[int] | None = None  # the indexes whose tablets the load wrote, when a tablet is gone
            for rs in rowsets:
                t = c.execute("SELECT partition_id, index_id FROM tablets WHERE tablet_id = ?",
                              (rs.tablet_id,)).fetchone()
                if t is None and c.execute("SELECT 1 FROM dropped_rollup_tablets WHERE tablet_id = ?",
                                           (rs.tablet_id,)).fetchone():
                    continue  # its rollup was dropped (or its ADD ROLLUP cancelled) while the load ran
                if t is None:
                    by = c.execute("SELECT index_id FROM replaced_tablets WHERE tablet_id = ?",
                                   (rs.tablet_id,)).fetchone()
                    if by is not None and written is None:
                        written = self._written_indexes(c, rowsets)
                    if by is not None and written is not None and by[0] in written:
                        continue  # a schema change swapped the index while the load ran: its shadow rows count
                    if by is not None:
                        raise schema_changed_error(txn_id)
                if t is None:
                    raise doris_error(f"tablet [{rs.tablet_id}] of transaction [{txn_id}] no longer exists")
                if t["partition_id"] not in versions:
                    raise doris_error(f"tablet [{rs.tablet_id}] of transaction [{txn_id}] no longer exists")
                v = versions[t["partition_id"]]
                start = 0 if t["partition_id"] in overwrite else v
                c.execute(
                    "INSERT INTO rowsets VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (rs.rowset_id, rs.tablet_id, start, v, rs.num_rows, rs.num_segments, rs.data_size, txn_id,
                     rs.kind, rs.delete_predicate, int(rs.overlapping), now),
                )
                self._touch(added=[replace(rs, start_version=start, end_version=v, txn_id=txn_id,
                                           overlapping=bool(rs.overlapping), created_at=now)])
                data_size[t["partition_id"]] += rs.data_size
                if t["index_id"] == base[0]:
                    row_count[t["partition_id"]] += rs.num_rows
            if overwrite:
                self._replace_rowsets(c, txn_id, {rs.tablet_id for rs in rowsets}, versions, overwrite, now,
                                      replaced if replaced is not None else [])
            for pid, v in versions.items():
                keep = 0 if pid in overwrite else 1
                c.execute(
                    "UPDATE partitions SET visible_version = ?, next_version = ?, visible_version_time = ?, "
                    "data_size = data_size * ? + ?, row_count = row_count * ? + ? WHERE partition_id = ?",
                    (v, v + 1, now, keep, data_size[pid], keep, row_count[pid], pid),
                )
            c.execute("UPDATE tables SET update_time = ? WHERE table_id = ?", (now, table_id))
            c.execute("UPDATE transactions SET status = ?, finished_at = ? WHERE txn_id = ?",
                      (TXN_VISIBLE, now, txn_id))
            self._record_table_version(c, table_id, now, txn_id, txn["label"], self._publish_kind(rowsets, bool(overwrite)),
                                       sum(row_count.values()))
            self._touch(tables=[table_id])
            if also is not None:
                also(c)
            return versions
