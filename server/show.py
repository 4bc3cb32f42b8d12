"""SHOW commands whose rows come from the server's own state (catalog, variables, config, connections).

Each function returns an Arrow table with the exact column names Doris (or MySQL, where Doris copies it)
uses; LIKE filters are applied by the caller through `like_filter`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime, tzinfo

import pyarrow as pa

from server.information_schema import CHARSETS, COLLATIONS, ENGINES
from server.show_create import describe_rows, show_create_table
from sql.types import parse_type
from storage.catalog.model import KEYS_AGG, OlapTable
from storage.catalog.table_versions import TableVersion


def string_table(names: Sequence[str], rows: Sequence[Sequence[object]]) -> pa.Table:
    """A result whose columns are all text (NULL where a value is None), as most SHOW output is."""
    cols = list(zip(*rows, strict=True)) if rows else [() for _ in names]
    return pa.table({n: pa.array([None if v is None else str(v) for v in c], pa.string())
                     for n, c in zip(names, cols, strict=True)})


def like_regex(pattern: str) -> re.Pattern[str]:
    """MySQL LIKE (case-insensitive for SHOW) as a regex: % any run, _ one char, backslash escapes."""
    out, i = [], 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and i + 1 < len(pattern):
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        out.append(".*" if ch == "%" else "." if ch == "_" else re.escape(ch))
        i += 1
    return re.compile("^" + "".join(out) + "$", re.IGNORECASE | re.DOTALL)


def like_filter(names: Sequence[str], pattern: str | None) -> list[str]:
    if pattern is None:
        return list(names)
    rx = like_regex(pattern)
    return [n for n in names if rx.match(n)]


def show_engines() -> pa.Table:
    return string_table(["Engine", "Support", "Comment", "Transactions", "XA", "Savepoints"], ENGINES)


def show_charset() -> pa.Table:
    return string_table(["Charset", "Description", "Default collation", "Maxlen"],
                        [(c, d, coll, n) for c, coll, d, n in CHARSETS])


def show_collation() -> pa.Table:
    return string_table(["Collation", "Charset", "Id", "Default", "Compiled", "Sortlen"], COLLATIONS)


def show_plugins() -> pa.Table:
    return string_table(["Name", "Status", "Type", "Library", "License"], [])


def show_columns(table: OlapTable, full: bool, like: str | None) -> pa.Table:
    rows = describe_rows(table)
    keep = set(like_filter([r[0] for r in rows], like))
    rows = [r for r in rows if r[0] in keep]
    if not full:
        return string_table(["Field", "Type", "Null", "Key", "Default", "Extra"], rows)
    comments = {c.name: c.comment for c in table.columns}
    collations = {c.name: ("utf8mb4_0900_bin" if parse_type(c.type).is_string else None) for c in table.columns}
    return string_table(
        ["Field", "Type", "Collation", "Null", "Key", "Default", "Extra", "Privileges", "Comment"],
        [(f, t, collations.get(f), n, k, d, e, "select,insert,update,references", comments.get(f, ""))
         for f, t, n, k, d, e in rows],
    )


def show_index(table: OlapTable) -> pa.Table:
    names = ["Table", "Non_unique", "Key_name", "Seq_in_index", "Column_name", "Collation", "Cardinality",
             "Sub_part", "Packed", "Null", "Index_type", "Comment", "Properties"]
    rows = [(table.name, "", idx.name, "", ",".join(idx.columns), "", "", "", "", "", idx.index_type,
             idx.comment, ", ".join(f'"{k}" = "{v}"' for k, v in idx.properties))
            for idx in table.index_defs]
    return string_table(names, rows)


def _fmt_time(seconds: float) -> str | None:
    return datetime.fromtimestamp(seconds).strftime("%Y-%m-%d %H:%M:%S") if seconds else None


def show_table_status(tables: Sequence[OlapTable]) -> pa.Table:
    names = ["Name", "Engine", "Version", "Row_format", "Rows", "Avg_row_length", "Data_length",
             "Max_data_length", "Index_length", "Data_free", "Auto_increment", "Create_time", "Update_time",
             "Check_time", "Collation", "Checksum", "Create_options", "Comment"]
    rows = []
    for t in tables:
        n = sum(p.row_count for p in t.partitions)
        size = sum(p.data_size for p in t.partitions)
        rows.append((t.name, "Doris", None, None, n, size // n if n else 0, size, None, None, None, None,
                     _fmt_time(t.create_time), _fmt_time(t.update_time or t.create_time), None,
                     "utf8mb4_0900_bin", None, "", t.comment))
    return string_table(names, rows)


def show_create(table: OlapTable) -> pa.Table:
    return string_table(["Table", "Create Table"], [(table.name, show_create_table(table))])


def aggregation_extra(table: OlapTable, column_name: str) -> str:
    c = table.column(column_name)
    if c is None or c.is_key:
        return ""
    return c.aggregation or ("NONE" if table.keys_type != KEYS_AGG else "")


def show_table_versions(table: OlapTable, versions: Sequence[TableVersion], tz: tzinfo | None) -> pa.Table:
    """SHOW TABLE VERSIONS (dorislite's): one row per table version, oldest first; Time in the session's zone."""
    names = {p.partition_id: p.name for p in table.partitions}
    return pa.table({
        "Version": pa.array([v.version for v in versions], pa.int64()),
        "Kind": pa.array([v.kind for v in versions], pa.string()),
        "Label": pa.array([v.label or None for v in versions], pa.string()),
        "TxnId": pa.array([v.txn_id for v in versions], pa.int64()),
        "Rows": pa.array([v.rows for v in versions], pa.int64()),
        "PartitionVersions": pa.array([", ".join(f"{names.get(pid, f'(dropped {pid})')}={n}"
                                                 for pid, n in sorted(v.partitions.items())) for v in versions],
                                      pa.string()),
        # to the microsecond: FOR TIME AS OF that text reads that version (several publish within a second)
        "Time": pa.array([datetime.fromtimestamp(v.published_at, tz).strftime("%Y-%m-%d %H:%M:%S.%f")
                          for v in versions], pa.string()),
    })
