"""Route: which partition each row of a load goes to, and which rows fit none.

The engine's router (storage.tablet.partition_router) places rows in-process and in the Spark writer tasks (one
implementation); this module adds what a statement restricts: INSERT ... PARTITION (p, ...) (rows outside the
listed partitions do not fit), TEMPORARY PARTITION targets, and the partitions an INSERT OVERWRITE replaces. On
Spark the PARTITION (...) restriction is a boolean Spark SQL expression (`partition_sql`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import pyarrow as pa

from planner.loads.convert import STRICT_FILTERED_CODE
from planner.loads.spark_sources import spark_string, spark_type
from sql.errors import analysis_error
from sql.types import parse_type
from storage.catalog.model import OlapTable, Partition
from storage.engine import Overwrite
from storage.tablet.partition_router import _TYPE_MINIMA, route_partitions


def check_partitions(table: OlapTable, names: Sequence[str]) -> None:
    known = {p.name.lower() for p in table.partitions}
    for name in names:
        if name.lower() not in known:
            raise analysis_error(f"Unknown partition '{name}' in table '{table.name}'", 1105, "HY000")


def restrict_partitions(table: OlapTable, data: pa.Table, partitions: Sequence[str], strict: bool
                        ) -> tuple[pa.Table, int]:
    """INSERT ... PARTITION (p, ...) in-process: rows routed outside the listed partitions do not fit."""
    wanted = {p.lower() for p in partitions}
    positions = route_partitions(table, data)
    allowed = np.array([p.name.lower() in wanted for p in table.partitions] + [False])
    inside = allowed[positions]  # NO_PARTITION (-1) picks the trailing False
    outside = int((~inside).sum())
    if outside and strict:
        row = int(np.argmin(inside))
        text = ", ".join("NULL" if v is None else str(v) for v in data.slice(row, 1).to_pylist()[0].values())
        raise analysis_error(f"Insert has filtered data in strict mode. filtered rows: {outside}, sample: [Reason: "
                             f"no partition for this tuple. src line [{text}]]", STRICT_FILTERED_CODE, "HY000")
    return (data.filter(pa.array(inside)) if outside else data), outside


def temp_partitions_view(table: OlapTable, names: Sequence[str]) -> OlapTable:
    """`table` whose partitions are the named temporary ones (what INSERT INTO t TEMPORARY PARTITION loads)."""
    chosen = []
    for name in names:
        partition = table.temp_partition(name)
        if partition is None:
            raise analysis_error(f"Unknown partition '{name}' in table '{table.name}'", 1735, "HY000")
        chosen.append(partition)
    return replace(table, partitions=tuple(chosen))


def overwrite_of(table: OlapTable, partitions: Sequence[str]) -> Overwrite:
    """INSERT OVERWRITE's partitions: the named ones, those the rows fall into (PARTITION(*)), or all."""
    if tuple(partitions) == ("*",):
        return Overwrite(None)
    check_partitions(table, partitions)
    wanted = {p.lower() for p in partitions}
    return Overwrite(frozenset(p.partition_id for p in table.partitions if not wanted or p.name.lower() in wanted))


# -- on Spark ---------------------------------------------------------------------------------------


def _bound(text: str, spark_t: str) -> str:
    return f"CAST({spark_string(text)} AS {spark_t})"


def _tuple_less(cols: Sequence[tuple[str, str]], bound: Sequence[str]) -> str:
    """Lexicographic (cols) < bound; NULL sorts below every value (as the storage router does)."""
    terms, equal = [], []
    for (col, t), text in zip(cols, bound, strict=False):
        b = _bound(text, t)
        terms.append("(" + " AND ".join([*equal, f"({col} IS NULL OR {col} < {b})"]) + ")")
        equal.append(f"({col} <=> {b})")
    return "(" + " OR ".join(terms) + ")" if terms else "false"


def _range_sql(cols: Sequence[tuple[str, str]], p: Partition) -> str:
    parts = []
    lower = p.item.lower
    if lower is not None and not all(v is None or v.strip().upper() in _TYPE_MINIMA for v in lower):
        parts.append(f"NOT {_tuple_less(cols, lower)}")
    if p.item.upper is not None:
        parts.append(_tuple_less(cols, p.item.upper))
    return " AND ".join(parts) or "true"


def _list_sql(cols: Sequence[tuple[str, str]], p: Partition) -> str:
    options = []
    for value in p.item.values or ():
        options.append("(" + " AND ".join(
            f"{c} IS NULL" if v is None else f"{c} = {_bound(v, t)}"
            for (c, t), v in zip(cols, value, strict=True)) + ")")
    return "(" + " OR ".join(options) + ")" if options else "false"


def partition_sql(table: OlapTable, values: dict[str, str], allowed: Sequence[str]) -> str | None:
    """A boolean Spark SQL expression: the row belongs to a partition of `allowed` (all when empty).
    None when every row qualifies (one implicit partition and no restriction)."""
    info = table.partition_info
    chosen = [p for p in table.partitions if not allowed or p.name.lower() in {a.lower() for a in allowed}]
    if info.type.upper() == "UNPARTITIONED" or not info.columns:
        return None if chosen else "false"
    by_lower = {c.name.lower(): c for c in table.columns}
    cols = [(values[by_lower[n.lower()].name], spark_type(parse_type(by_lower[n.lower()].type).arrow_type()))
            for n in info.columns]
    is_list = info.type.upper() == "LIST"
    if not chosen:
        return "false"
    # a row belongs to the first partition that matches (ranges do not overlap; lists are disjoint)
    matches = [_list_sql(cols, p) if is_list else _range_sql(cols, p) for p in chosen]
    return "(" + " OR ".join(matches) + ")"
