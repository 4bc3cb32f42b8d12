"""The MemTable: one tablet's share of a load, shaped for one materialized index.

Projects the index's columns (a rollup has fewer / reordered ones), sorts by the index's keys and
pre-aggregates per the table model, giving exactly what a segment writer stores.
"""

from __future__ import annotations

import pyarrow as pa

from storage.catalog.model import MaterializedIndexMeta
from storage.tablet.aggregation import aggregate_index, key_column_names, sort_by_keys


def build_memtable(data: pa.Table, index: MaterializedIndexMeta) -> pa.Table:
    """Rows of `data` (base columns, load order) as the index stores them: projected, sorted, aggregated."""
    by_lower = {name.lower(): name for name in data.column_names}
    projected = data.select([by_lower[c.name.lower()] for c in index.columns])
    projected = projected.rename_columns([c.name for c in index.columns])
    ordered = sort_by_keys(projected, key_column_names(index))
    return aggregate_index(ordered, index).combine_chunks()
