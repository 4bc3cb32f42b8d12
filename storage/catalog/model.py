"""Catalog objects, named as in Doris's FE (OlapTable, MaterializedIndexMeta, Partition, Tablet, Rowset).

All are frozen dataclasses: a change is a new object committed by the store in one SQLite transaction.
Column types are Doris type strings as DESC shows them (`INT`, `DECIMAL(10, 2)`, `VARCHAR(20)`, `DATE`,
`DATETIME(3)`, `STRING`, `LARGEINT` ...). Storage treats them as opaque; `sql.types` interprets them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# Doris starts every partition at version 1, so the first load publishes version 2.
PARTITION_INIT_VERSION = 1

KEYS_AGG = "AGG_KEYS"
KEYS_UNIQUE = "UNIQUE_KEYS"
KEYS_DUP = "DUP_KEYS"

INDEX_NORMAL = "NORMAL"
INDEX_SHADOW = "SHADOW"  # written by loads, not visible to queries (rollup being built)


@dataclass(frozen=True)
class Column:
    name: str
    type: str  # Doris type text, e.g. "DECIMAL(10, 2)"
    is_key: bool
    aggregation: str | None  # SUM / MAX / MIN / REPLACE / REPLACE_IF_NOT_NULL / NONE; None for key columns
    nullable: bool = True
    default: str | None = None  # literal text as written; "CURRENT_TIMESTAMP" etc. kept verbatim
    comment: str = ""
    unique_id: int = 0  # stable per table, survives renames/reorders in rollups
    # for a column ALTER TABLE added: what rows written before it hold ("NULL" or a literal), fixed at ADD time
    # whatever MODIFY COLUMN later does to DEFAULT
    fill: str | None = None
    generated: str | None = None  # a generated column's expression (SQL text, columns back-quoted)


@dataclass(frozen=True)
class MaterializedIndexMeta:
    """One index's schema, stored once per table: the base index or a rollup."""

    index_id: int
    name: str
    columns: tuple[Column, ...]  # key columns first, in sort order
    keys_type: str
    short_key_column_count: int
    schema_hash: int = 0
    state: str = INDEX_NORMAL


@dataclass(frozen=True)
class IndexDef:
    """An `INDEX name (col) USING BITMAP|INVERTED|NGRAM_BF` definition."""

    name: str
    columns: tuple[str, ...]
    index_type: str  # BITMAP / INVERTED / NGRAM_BF
    comment: str = ""
    properties: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class DistributionInfo:
    type: str  # HASH / RANDOM
    columns: tuple[str, ...]  # empty for RANDOM
    buckets: int  # default bucket number for new partitions
    auto: bool = False  # BUCKETS AUTO


@dataclass(frozen=True)
class PartitionItem:
    """A partition's definition. Bounds are literal strings as Doris prints them ('2020-01-01', '100').

    RANGE: `lower` / `upper` are tuples (one value per partition column); `upper is None` means MAXVALUE,
    `lower` of the first LESS THAN partition is the type minimum (filled in by the analyser).
    LIST: `values` holds one tuple per listed value (one element per partition column).
    UNPARTITIONED tables have one item named like the table with everything None.
    """

    name: str
    lower: tuple[str, ...] | None = None
    upper: tuple[str, ...] | None = None
    values: tuple[tuple[str, ...], ...] | None = None
    buckets: int | None = None  # per-partition BUCKETS, None = table default
    properties: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class PartitionInfo:
    type: str  # RANGE / LIST / UNPARTITIONED
    columns: tuple[str, ...] = ()


@dataclass(frozen=True)
class Partition:
    partition_id: int
    table_id: int
    item: PartitionItem
    buckets: int
    visible_version: int = PARTITION_INIT_VERSION
    visible_version_time: float = 0.0  # unix seconds
    next_version: int = PARTITION_INIT_VERSION + 1
    data_size: int = 0  # bytes of one copy of the data
    row_count: int = 0

    @property
    def name(self) -> str:
        return self.item.name


@dataclass(frozen=True)
class Tablet:
    tablet_id: int
    table_id: int
    partition_id: int
    index_id: int
    bucket: int


@dataclass(frozen=True)
class Rowset:
    """The data one load (or one compaction) wrote into one tablet: versions [start_version, end_version]."""

    rowset_id: str
    tablet_id: int
    start_version: int
    end_version: int
    num_rows: int
    num_segments: int
    data_size: int
    txn_id: int
    kind: str = "DATA"  # DATA / DELETE
    delete_predicate: str | None = None  # JSON of ColumnPredicates for a DELETE rowset
    overlapping: bool = True
    created_at: float = 0.0


@dataclass(frozen=True)
class OlapTable:
    table_id: int
    db_id: int
    name: str
    keys_type: str
    columns: tuple[Column, ...]  # base schema, key columns first
    partition_info: PartitionInfo
    distribution: DistributionInfo
    base_index_id: int
    indexes: tuple[MaterializedIndexMeta, ...]  # base first, then rollups by creation
    partitions: tuple[Partition, ...]  # in range / list / creation order
    properties: tuple[tuple[str, str], ...] = ()  # normalized PROPERTIES, in SHOW CREATE TABLE order
    index_defs: tuple[IndexDef, ...] = ()
    comment: str = ""
    create_time: float = 0.0
    update_time: float = 0.0
    # ADD TEMPORARY PARTITION: read and loaded only by name (`t TEMPORARY PARTITION (tp)`), swapped in by
    # REPLACE PARTITION; never in `partitions`, so nothing else sees them
    temp_partitions: tuple[Partition, ...] = ()

    def column(self, name: str) -> Column | None:
        lname = name.lower()
        return next((c for c in self.columns if c.name.lower() == lname), None)

    @property
    def key_columns(self) -> tuple[Column, ...]:
        return tuple(c for c in self.columns if c.is_key)

    @property
    def base_index(self) -> MaterializedIndexMeta:
        return next(i for i in self.indexes if i.index_id == self.base_index_id)

    def visible_indexes(self) -> tuple[MaterializedIndexMeta, ...]:
        return tuple(i for i in self.indexes if i.state == INDEX_NORMAL)

    def partition(self, name: str) -> Partition | None:
        lname = name.lower()
        return next((p for p in self.partitions if p.name.lower() == lname), None)

    def temp_partition(self, name: str) -> Partition | None:
        lname = name.lower()
        return next((p for p in self.temp_partitions if p.name.lower() == lname), None)

    @property
    def props(self) -> dict[str, str]:
        return dict(self.properties)


@dataclass(frozen=True)
class Database:
    db_id: int
    name: str
    create_time: float = 0.0
    properties: tuple[tuple[str, str], ...] = field(default=())


@dataclass(frozen=True)
class RollupSpec:
    """A rollup's analysed schema (CREATE TABLE ... ROLLUP, ALTER TABLE ... ADD ROLLUP): key columns first,
    each column with the key / aggregation role Doris gives it in the rollup."""

    name: str
    columns: tuple[Column, ...]
    short_key_column_count: int


# ALTER TABLE ... ADD ROLLUP job states (Doris's AlterJobV2.JobState)
JOB_PENDING = "PENDING"
JOB_WAITING_TXN = "WAITING_TXN"
JOB_RUNNING = "RUNNING"
JOB_FINISHED = "FINISHED"
JOB_CANCELLED = "CANCELLED"
JOB_DONE_STATES = frozenset({JOB_FINISHED, JOB_CANCELLED})


@dataclass(frozen=True)
class RollupJob:
    """One ADD ROLLUP job (Doris's RollupJobV2): PENDING -> WAITING_TXN -> RUNNING -> FINISHED | CANCELLED.

    `rollup_index_id` is allocated with the job (SHOW ALTER shows it at once); the SHADOW index with that
    id exists from WAITING_TXN on. `watershed_txn_id`: loads with a smaller txn id may have begun without
    the shadow index, so the job waits for them before back-filling. `backfilled` lists the partitions
    whose rollup tablets already hold the back-fill rowset ([0, version]).
    """

    job_id: int
    db_id: int
    table_id: int
    table_name: str
    base_index_id: int  # the index the rollup is built from (FROM ..., default the base index)
    base_index_name: str
    rollup: RollupSpec
    rollup_index_id: int
    state: str = JOB_PENDING
    watershed_txn_id: int = -1
    msg: str = ""
    create_time: float = 0.0
    finish_time: float | None = None
    timeout_second: int = 86400
    backfilled: tuple[tuple[int, int], ...] = ()  # (partition_id, version back-filled)

    @property
    def done(self) -> bool:
        return self.state in JOB_DONE_STATES


@dataclass(frozen=True)
class SchemaChangeJob:
    """One schema change (Doris's SchemaChangeJobV2): PENDING -> WAITING_TXN -> RUNNING -> FINISHED | CANCELLED.

    An index change (ADD INDEX, bloom_filter_columns) rewrites rowsets in place; `done_tablets`: tablets
    already swapped. A rewrite (`shadows` non-empty: a type change, a key column dropped or moved) builds one
    SHADOW index per changed index, (origin index id, shadow index id), back-fills them partition by partition
    (`backfilled`: (partition id, version)) and swaps them in with the definition `new_definition` (JSON:
    columns, each index's columns, partitioning, properties, index definitions) in one commit."""

    job_id: int
    db_id: int
    table_id: int
    table_name: str
    index_id: int  # the base index (SHOW ALTER's IndexId / OriginIndexId)
    state: str = JOB_PENDING
    watershed_txn_id: int = -1
    msg: str = ""
    create_time: float = 0.0
    finish_time: float | None = None
    timeout_second: int = 86400
    schema_version: int = 1
    done_tablets: tuple[int, ...] = ()
    # the table's index definition before the change (the catalog's JSON texts), restored by CANCEL
    previous_index_defs: str | None = None
    previous_properties: str | None = None
    shadows: tuple[tuple[int, int], ...] = ()
    new_definition: str | None = None
    backfilled: tuple[tuple[int, int], ...] = ()

    @property
    def done(self) -> bool:
        return self.state in JOB_DONE_STATES


SHADOW_PREFIX = "__doris_shadow_"  # Doris's SchemaChangeHandler.SHADOW_NAME_PREFIX


def is_rewrite_shadow(index: MaterializedIndexMeta) -> bool:
    """A schema change's shadow index: its rows are the origin's converted to the new schema."""
    return index.state == INDEX_SHADOW and index.name.startswith(SHADOW_PREFIX)


@dataclass(frozen=True)
class TableSpec:
    """What CREATE TABLE asks the catalog to create, fully analysed (defaults applied, rules checked).

    The catalog allocates ids, the base MaterializedIndexMeta, one Partition per item and
    one Tablet per bucket per index per partition.
    """

    name: str
    keys_type: str
    columns: tuple[Column, ...]
    short_key_column_count: int
    partition_info: PartitionInfo
    partition_items: tuple[PartitionItem, ...]
    distribution: DistributionInfo
    properties: tuple[tuple[str, str], ...] = ()
    index_defs: tuple[IndexDef, ...] = ()
    comment: str = ""
    rollups: tuple[RollupSpec, ...] = ()  # CREATE TABLE ... ROLLUP: created NORMAL with the table
