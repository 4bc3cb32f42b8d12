"""SHOW CREATE TABLE text and DESC / DESC ALL rows, as pure functions of the catalog model.

Output follows Doris 2.1 (doris-reference §3.3-3.5); SHOW CREATE TABLE's text parses back into the same
table (tests/server/test_show_create.py checks the round trip).
"""

from __future__ import annotations

from sql.dialect import quote_ident
from sql.types import parse_type
from storage.catalog.model import (
    KEYS_AGG,
    KEYS_DUP,
    KEYS_UNIQUE,
    Column,
    MaterializedIndexMeta,
    OlapTable,
    PartitionItem,
)

_KEYS_CLAUSE = {KEYS_AGG: "AGGREGATE KEY", KEYS_UNIQUE: "UNIQUE KEY", KEYS_DUP: "DUPLICATE KEY"}
_DEFAULT_FUNCTIONS = {"CURRENT_TIMESTAMP", "CURRENT_DATE"}


def _quote(text: str, quote: str = "'") -> str:
    escaped = text.replace("\\", "\\\\").replace(quote, "\\" + quote)
    return f"{quote}{escaped}{quote}"


_ident = quote_ident


def _column_sql(column: Column, keys_type: str) -> str:
    parts = [_ident(column.name), parse_type(column.type).sql()]
    if column.generated is not None:
        parts.append(f"AS ({column.generated})")
    if keys_type == KEYS_AGG and not column.is_key and column.aggregation:
        parts.append(column.aggregation)
    parts.append("NULL" if column.nullable else "NOT NULL")
    if column.default is not None:
        default = column.default
        parts.append(f"DEFAULT {default}" if default in _DEFAULT_FUNCTIONS else f"DEFAULT {_quote(default, chr(34))}")
    if column.comment:
        parts.append(f"COMMENT {_quote(column.comment)}")
    return " ".join(parts)


def _index_sql(table: OlapTable) -> list[str]:
    lines = []
    for index in table.index_defs:
        text = f"INDEX {index.name} ({', '.join(_ident(c) for c in index.columns)}) USING {index.index_type}"
        if index.properties:
            text += " PROPERTIES(" + ", ".join(f'"{k}" = "{v}"' for k, v in index.properties) + ")"
        if index.comment:
            text += f" COMMENT {_quote(index.comment)}"
        lines.append(text)
    return lines


def _values(values: tuple[str | None, ...], quote: str = "'") -> str:
    return "(" + ", ".join("MAXVALUE" if v is None else _quote(v, quote) for v in values) + ")"


def _partition_sql(item: PartitionItem, kind: str) -> str:
    if kind == "LIST":
        listed = item.values or ()
        if not listed:
            return f"PARTITION {item.name}"  # the default partition
        if all(len(v) == 1 for v in listed):
            inner = ", ".join("NULL" if v[0] == "NULL" else _quote(v[0] or "", '"') for v in listed)
        else:
            inner = ", ".join(_values(v, '"') for v in listed)
        return f"PARTITION {item.name} VALUES IN ({inner})"
    return f"PARTITION {item.name} VALUES [{_values(item.lower or ())}, {_values(item.upper or ())})"


def show_create_table(table: OlapTable) -> str:
    body = [_column_sql(c, table.keys_type) for c in table.columns] + _index_sql(table)
    lines = [f"CREATE TABLE {_ident(table.name)} (", ",\n".join("  " + b for b in body), ") ENGINE=OLAP"]
    keys = ", ".join(_ident(c.name) for c in table.columns if c.is_key)
    if keys:  # a duplicate table without keys prints none
        lines.append(f"{_KEYS_CLAUSE[table.keys_type]}({keys})")
    lines.append(f"COMMENT {_quote(table.comment)}")
    info = table.partition_info
    if info.type in ("RANGE", "LIST"):
        lines.append(f"PARTITION BY {info.type}({', '.join(_ident(c) for c in info.columns)})")
        items = [_partition_sql(p.item, info.type) for p in table.partitions]
        lines.append("(" + ",\n".join(items) + ")")
    dist = table.distribution
    buckets = "AUTO" if dist.auto else str(dist.buckets)
    if dist.type == "HASH":
        lines.append(f"DISTRIBUTED BY HASH({', '.join(_ident(c) for c in dist.columns)}) BUCKETS {buckets}")
    else:
        lines.append(f"DISTRIBUTED BY RANDOM BUCKETS {buckets}")
    props = ",\n".join(f'"{k}" = "{v}"' for k, v in table.properties)
    lines.append(f"PROPERTIES (\n{props}\n);")
    return "\n".join(lines)


# -- DESC -----------------------------------------------------------------------------------------------


def _bloom_filter_columns(table: OlapTable) -> set[str]:
    value = table.props.get("bloom_filter_columns", "")
    return {c.strip().lower() for c in value.split(",") if c.strip()}


def _extra(column: Column, table: OlapTable, bf: set[str]) -> str:
    parts = []
    if not column.is_key and column.aggregation:
        merge_on_write = table.props.get("enable_unique_key_merge_on_write") == "true"
        parts.append("NONE" if table.keys_type == KEYS_UNIQUE and merge_on_write else column.aggregation)
    if column.name.lower() in bf:
        parts.append("BLOOM_FILTER")
    if column.generated is not None:
        parts.append("STORED GENERATED")
    return ",".join(parts)


def _desc_row(column: Column, table: OlapTable, bf: set[str]) -> tuple:
    return (
        column.name,
        str(parse_type(column.type)),
        "Yes" if column.nullable else "No",
        "true" if column.is_key else "false",
        column.default,
        _extra(column, table, bf),
    )


def describe_rows(table: OlapTable) -> list[tuple]:
    """DESC t: Field, Type, Null, Key, Default, Extra."""
    bf = _bloom_filter_columns(table)
    return [_desc_row(c, table, bf) for c in table.columns]


def describe_all_rows(table: OlapTable) -> list[tuple]:
    """DESC t ALL: IndexName, IndexKeysType, Field, Type, InternalType, Null, Key, Default, Extra, Visible,
    DefineExpr, WhereClause; index name and keys type only on each index's first row, indexes separated by an
    all-empty row."""
    bf = _bloom_filter_columns(table)
    rows: list[tuple] = []
    indexes: list[MaterializedIndexMeta] = [table.base_index] + [
        i for i in table.visible_indexes() if i.index_id != table.base_index_id
    ]
    for n, index in enumerate(indexes):
        if n:
            rows.append(("",) * 12)
        for i, column in enumerate(index.columns):
            field, type_text, null, key, default, extra = _desc_row(column, table, bf)
            rows.append((
                (table.name if index.index_id == table.base_index_id else index.name) if i == 0 else "",
                index.keys_type if i == 0 else "",
                field, type_text, parse_type(column.type).internal(), null, key, default, extra,
                "true", "", "",
            ))
    return rows
