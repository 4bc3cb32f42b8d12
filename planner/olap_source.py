"""An OLAP table as a planner TableSource: column pruning and predicate pushdown into the tablet scan."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import pyarrow as pa

from sql.errors import analysis_error
from sql.types import parse_type
from storage.catalog.model import OlapTable
from storage.engine import ScanRequest, StorageEngine
from storage.predicate import ColumnPredicate
from storage.stats import ScanStats


def arrow_schema(table: OlapTable) -> pa.Schema:
    """The Arrow schema of a table's base columns (sql.types owns the Doris -> Arrow mapping)."""
    return pa.schema([pa.field(c.name, parse_type(c.type).arrow_type(), nullable=c.nullable)
                      for c in table.columns])


@dataclass
class OlapTableSource:
    engine: StorageEngine
    table: OlapTable
    db_name: str = ""
    versions: dict[int, int] | None = None  # the snapshot the statement reads; taken at first scan
    stats: ScanStats = field(default_factory=ScanStats)

    def __post_init__(self) -> None:
        self.name = self.table.name
        self.schema = arrow_schema(self.table)

    partition_ids: tuple[int, ...] | None = None  # `FROM t PARTITION (p, ...)`

    def restrict_partitions(self, names: Sequence[str]) -> OlapTableSource:
        ids = []
        for name in names:
            partition = self.table.partition(name)
            if partition is None:
                raise analysis_error(f"Unknown partition '{name}' in table '{self.table.name}'", 1735, "HY000")
            ids.append(partition.partition_id)
        return replace(self, partition_ids=tuple(ids))

    def scan(self, columns: Sequence[str], predicates: Sequence[ColumnPredicate]) -> pa.Table:
        if self.versions is None:
            self.versions = self.engine.snapshot(self.table)
        result = self.engine.scan(ScanRequest(
            table=self.table, schema=self.schema, columns=list(columns), predicates=list(predicates),
            versions=self.versions, partition_ids=self.partition_ids,
        ))
        self.stats = result.stats
        return result.table
