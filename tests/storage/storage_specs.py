"""TableSpecs and Arrow schemas for storage tests (the SQL layer builds these in the product)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from decimal import Decimal

import pyarrow as pa

from storage.catalog.model import (
    Column,
    DistributionInfo,
    PartitionInfo,
    PartitionItem,
    TableSpec,
)

LARGEINT = pa.decimal128(38, 0)
DATETIME = pa.timestamp("us")


def key(name: str, type_: str) -> Column:
    return Column(name, type_, is_key=True, aggregation=None)


def value(name: str, type_: str, agg: str | None = "NONE", nullable: bool = True) -> Column:
    return Column(name, type_, is_key=False, aggregation=agg, nullable=nullable)


def unpartitioned(name: str) -> tuple[PartitionInfo, tuple[PartitionItem, ...]]:
    return PartitionInfo("UNPARTITIONED"), (PartitionItem(name),)


def spec(name: str, keys_type: str, columns: Sequence[Column], *, buckets: int = 3,
         hash_cols: Sequence[str] | None = None, short_keys: int | None = None,
         partition: tuple[PartitionInfo, tuple[PartitionItem, ...]] | None = None,
         distribution: str = "HASH") -> TableSpec:
    info, items = partition or unpartitioned(name)
    keys = [c.name for c in columns if c.is_key]
    dist_cols = () if distribution == "RANDOM" else tuple(hash_cols or keys[:1])
    return TableSpec(
        name=name, keys_type=keys_type, columns=tuple(columns),
        short_key_column_count=short_keys if short_keys is not None else min(3, len(keys)),
        partition_info=info, partition_items=items,
        distribution=DistributionInfo(distribution, dist_cols, buckets),
    )


# ------------------------------------------------------------------ seed 004: AGGREGATE example_tbl

AGG_EXAMPLE_COLUMNS = (
    key("user_id", "LARGEINT"), key("date", "DATE"), key("city", "VARCHAR(20)"), key("age", "SMALLINT"),
    key("sex", "TINYINT"),
    value("last_visit_date", "DATETIME", "REPLACE"), value("cost", "BIGINT", "SUM"),
    value("max_dwell_time", "INT", "MAX"), value("min_dwell_time", "INT", "MIN"),
)
AGG_EXAMPLE_SCHEMA = pa.schema([
    ("user_id", LARGEINT), ("date", pa.date32()), ("city", pa.string()), ("age", pa.int16()), ("sex", pa.int8()),
    ("last_visit_date", DATETIME), ("cost", pa.int64()), ("max_dwell_time", pa.int32()),
    ("min_dwell_time", pa.int32()),
])

AGG_EXAMPLE_WITH_TS_COLUMNS = (
    key("user_id", "LARGEINT"), key("date", "DATE"), key("timestamp", "DATETIME"), key("city", "VARCHAR(20)"),
    key("age", "SMALLINT"), key("sex", "TINYINT"),
    value("last_visit_date", "DATETIME", "REPLACE"), value("cost", "BIGINT", "SUM"),
    value("max_dwell_time", "INT", "MAX"), value("min_dwell_time", "INT", "MIN"),
)
AGG_EXAMPLE_WITH_TS_SCHEMA = pa.schema([
    ("user_id", LARGEINT), ("date", pa.date32()), ("timestamp", DATETIME), ("city", pa.string()),
    ("age", pa.int16()), ("sex", pa.int8()), ("last_visit_date", DATETIME), ("cost", pa.int64()),
    ("max_dwell_time", pa.int32()), ("min_dwell_time", pa.int32()),
])


def d(text: str) -> dt.date:
    return dt.date.fromisoformat(text)


def ts(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text)


def rows_table(schema: pa.Schema, rows: Sequence[tuple]) -> pa.Table:
    cols = list(zip(*rows, strict=True)) if rows else [[] for _ in schema]
    arrays = []
    for f, col in zip(schema, cols, strict=True):
        vals = [Decimal(v) if pa.types.is_decimal(f.type) and isinstance(v, int) else v for v in col]
        arrays.append(pa.array(vals, f.type))
    return pa.Table.from_arrays(arrays, schema=schema)


def table_rows(table: pa.Table) -> list[tuple]:
    """Rows as tuples (LARGEINT as int), sorted for order-independent comparison."""
    cols = [[int(v) if isinstance(v, Decimal) and v == v.to_integral_value() else v for v in c.to_pylist()]
            for c in table.columns]
    return sorted(zip(*cols, strict=True), key=lambda r: tuple((v is not None, v) for v in r)) if cols else []

