"""An OLAP table as a planner TableSource: column pruning and predicate pushdown into the tablet scan.

The rewrite rules (planner/rules/: prune_partitions, prune_buckets, preaggregation, select_rollup) record
their decisions here, on a copy of the source the LogicalScan carries, so the physical scan and EXPLAIN
read the very same decision: selected partitions and buckets, the chosen materialized index, the
PREAGGREGATION verdict with Doris's reason, and the tablets that follow from them.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import pyarrow as pa

from planner.logical import evolve
from planner.scan_log import SCAN_LOG, STATEMENT, ScanShape
from sql.errors import analysis_error
from sql.types import parse_type
from storage.catalog.model import KEYS_DUP, KEYS_UNIQUE, MaterializedIndexMeta, OlapTable
from storage.catalog.table_versions import TableVersion
from storage.engine import ScanRequest, StorageEngine
from storage.predicate import ColumnPredicate, Op
from storage.stats import ScanStats


def arrow_schema(table: OlapTable) -> pa.Schema:
    """The Arrow schema of a table's base columns (sql.types owns the Doris -> Arrow mapping). Kept per
    columns tuple: every rule's copy of a source asks again, and the catalog hands out the same tuple."""
    columns = table.columns
    kept = _SCHEMAS.get(id(columns))
    if kept is not None and kept[0] is columns:
        return kept[1]
    schema = pa.schema([pa.field(c.name, parse_type(c.type).arrow_type(), nullable=c.nullable) for c in columns])
    if len(_SCHEMAS) >= 4096:
        _SCHEMAS.clear()
    _SCHEMAS[id(columns)] = (columns, schema)  # the tuple is held, so its id is not reused while kept
    return schema


_SCHEMAS: dict[int, tuple[tuple, pa.Schema]] = {}


@dataclass(frozen=True)
class ScanProfile:
    """One OlapScan's counters, as a query profile shows them."""

    table: str  # db.table
    index: str  # the materialized index read (base or rollup name)
    predicates: tuple[str, ...]  # pushed down (Doris's PushDownPredicates info string)
    stats: ScanStats


@dataclass
class OlapTableSource:
    engine: StorageEngine
    table: OlapTable
    db_name: str = ""
    versions: dict[int, int] | None = None  # the snapshot the statement reads; taken at first scan
    stats: ScanStats = field(default_factory=ScanStats)
    # a query profile's scan list (enable_profile): shared by the copies the rewrite rules make, so every
    # physical scan of the statement appends its counters to the same list
    profile: list[ScanProfile] | None = None

    # the tablet scan evaluates every pushed predicate exactly (planner/rules/exact_filters.py)
    exact_predicates = True

    def __post_init__(self) -> None:
        self.name = self.table.name
        self.schema = arrow_schema(self.table)

    # `FROM t PARTITION (p, ...)`, narrowed further by prune_partitions; None = every partition
    partition_ids: tuple[int, ...] | None = None
    # `FROM t TEMPORARY PARTITION (tp, ...)`: `table.partitions` holds the named temporary partitions
    temporary: bool = False
    # prune_buckets: partition_id -> bucket numbers that can hold matching rows; None = every bucket
    buckets: dict[int, tuple[int, ...]] | None = None
    # preaggregation: True = the query's aggregation makes merge-on-read unnecessary (PREAGGREGATION: ON);
    # None = not decided (rule disabled or no OLAP aggregate semantics known): merge, as OFF does
    preaggregation: bool | None = None
    preaggregation_reason: str = ""
    rewrites: tuple[str, ...] = ()  # exact aggregate rewrites beyond Doris's check, shown by EXPLAIN
    # select_rollup: the chosen materialized index (None = base) and the tablets read
    index_id: int | None = None
    tablet_ids: tuple[int, ...] | None = None
    # FOR VERSION AS OF / FOR TIME AS OF (planner/time_travel.py): the table version read (its partition
    # versions are `versions`), and the indexes holding its rows (rollup selection chooses among them)
    as_of: TableVersion | None = None
    readable_indexes: frozenset[int] | None = None
    # what the query above asks of the scan (select_rollup), for the rollup advisor's scan log
    shape: ScanShape | None = None
    logged: bool = True  # its scans go to the scan log (not the rollup advisor's own replays)

    def for_execution(self, profile: list[ScanProfile] | None) -> OlapTableSource:
        """A copy carrying this source's planning decisions for one more execution of a cached plan: its
        own snapshot (taken at its first scan; a time travel's is its version's), counters and profile list."""
        return evolve(self, versions=None if self.as_of is None else self.versions, stats=ScanStats(),
                      profile=profile)

    def restrict_partitions(self, names: Sequence[str]) -> OlapTableSource:
        ids = []
        for name in names:
            partition = self.table.partition(name)
            if partition is None:
                raise analysis_error(f"Unknown partition '{name}' in table '{self.table.name}'", 1735, "HY000")
            ids.append(partition.partition_id)
        return replace(self, partition_ids=tuple(ids))

    def restrict_temp_partitions(self, names: Sequence[str]) -> OlapTableSource:
        chosen = []
        for name in names:
            partition = self.table.temp_partition(name)
            if partition is None:
                raise analysis_error(f"Unknown partition '{name}' in table '{self.table.name}'", 1735, "HY000")
            chosen.append(partition)
        table = replace(self.table, partitions=tuple(chosen))
        return replace(self, table=table, temporary=True, partition_ids=tuple(p.partition_id for p in chosen))

    # -- what the decisions mean -------------------------------------------------------------------

    @property
    def index(self) -> MaterializedIndexMeta:
        if self.index_id is None:
            return self.table.base_index
        return next(i for i in self.table.indexes if i.index_id == self.index_id)

    @property
    def selected_partition_ids(self) -> tuple[int, ...]:
        if self.partition_ids is None:
            return tuple(p.partition_id for p in self.table.partitions)
        return self.partition_ids

    @property
    def merge_on_write(self) -> bool:
        return self.table.keys_type == KEYS_UNIQUE and \
            self.table.props.get("enable_unique_key_merge_on_write") == "true"

    @property
    def preaggregation_on(self) -> bool:
        """What EXPLAIN prints: DUPLICATE and UNIQUE merge-on-write tables are always ON in Doris."""
        return self.table.keys_type == KEYS_DUP or self.merge_on_write or bool(self.preaggregation)

    @property
    def merge(self) -> bool:
        """Merge-on-read unless the verdict says the query's aggregation makes it unnecessary. A
        merge-on-write table is stored merge-on-read here, so it merges like UNIQUE unless the same
        check passes."""
        return self.table.keys_type != KEYS_DUP and not self.preaggregation

    def scan(self, columns: Sequence[str], predicates: Sequence[ColumnPredicate], exact: bool = True) -> pa.Table:
        """The rows satisfying `predicates`; with exact=False possibly more (they only narrow the read, the
        caller filters)."""
        if self.versions is None:
            self.versions = self.engine.snapshot(self.table, self.temporary)
        started = time.perf_counter()
        result = self.engine.scan(ScanRequest(
            table=self.table, schema=self.schema, columns=list(columns), predicates=list(predicates),
            versions=self.versions, partition_ids=self.partition_ids, index_id=self.index_id,
            merge=self.merge, tablet_ids=self.tablet_ids, exact=exact,
        ))
        self.stats = result.stats
        if self.logged and not self.temporary:
            SCAN_LOG.record(time.time(), self.db_name, self.table, self.index_id, predicates, columns, self.shape,
                            result.stats.raw_rows_read, time.perf_counter() - started, STATEMENT.get())
        if self.profile is not None:
            self.profile.append(ScanProfile(
                f"{self.db_name}.{self.table.name}" if self.db_name else self.table.name, self.index.name,
                tuple(predicate_text(p) for p in predicates), result.stats))
        return result.table


def predicate_text(p: ColumnPredicate) -> str:
    if p.op in (Op.IN, Op.NOT_IN):
        return f"{p.column} {p.op.value} ({', '.join(repr(v) for v in p.values)})"
    if p.values:
        return f"{p.column} {p.op.value} {p.values[0]!r}"
    return f"{p.column} {p.op.value}"
