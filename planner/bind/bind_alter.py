"""ALTER TABLE ... ADD / DROP ROLLUP analysis (also the ROLLUP clause of CREATE TABLE).

Doris's MaterializedViewHandler.checkAndPrepareMaterializedView rules with its messages: every column
must exist in the source index; AGGREGATE / UNIQUE rollups keep each column's key / aggregation role, keys
before values, all base keys when the table is UNIQUE or a REPLACE column is listed; DUPLICATE rollups
take `DUPLICATE KEY (...)` (a prefix of the columns) or the default short-key rule. Only analysis: the
job and the catalog do the rest.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from planner.bind.create_table import _index_defs, default_duplicate_keys, short_key_column_count
from planner.bind.table_properties import bloom_filter_columns, bloom_filter_fpp
from sql import statements as st
from sql.errors import SqlError, analysis_error
from sql.types import parse_type
from storage.catalog.model import (
    KEYS_DUP,
    KEYS_UNIQUE,
    Column,
    IndexDef,
    MaterializedIndexMeta,
    OlapTable,
    RollupSpec,
)

ALTER_TABLE_TIMEOUT_SECOND = 86400  # FE alter_table_timeout_second (2.0 / 2.1 default)
_REPLACE_FAMILY = ("REPLACE", "REPLACE_IF_NOT_NULL")


@dataclass(frozen=True)
class BoundRollup:
    spec: RollupSpec
    source_index_id: int
    timeout_second: int


def bind_add_rollup(table: OlapTable, stmt: st.AddRollup, default_timeout: int = ALTER_TABLE_TIMEOUT_SECOND
                    ) -> list[BoundRollup]:
    """Every rollup of one ADD ROLLUP statement, checked against the table (names also across the batch)."""
    taken = {i.name for i in table.indexes}
    out = []
    for desc in stmt.rollups:
        if desc.name in taken:
            raise analysis_error(f"Rollup index[{desc.name}] already exists")
        taken.add(desc.name)
        source = _source_index(table, desc.from_index)
        spec = rollup_spec(source.columns, table.keys_type, desc, len(table.key_columns))
        out.append(BoundRollup(spec, source.index_id, _timeout(desc.properties, default_timeout)))
    return out


def bind_drop_rollup(table: OlapTable, stmt: st.DropRollup) -> tuple[str, ...]:
    """The rollup names to drop, checked (the catalog checks again inside its transaction)."""
    visible = {i.name for i in table.visible_indexes()}
    for name in stmt.names:
        if name == table.name:
            raise analysis_error("Cannot drop base index by using DROP ROLLUP or DROP MATERIALIZED VIEW.")
        if name not in visible:
            raise analysis_error(f"Materialized view [{name}] does not exist in table [{table.name}]")
    return stmt.names


def bind_create_rollups(columns: Sequence[Column], keys_type: str, table_name: str,
                        rollups: Sequence[st.RollupDesc]) -> tuple[RollupSpec, ...]:
    """CREATE TABLE ... ROLLUP (...): the same rules, against the base columns being created."""
    taken = {table_name}
    out = []
    for desc in rollups:
        if desc.from_index is not None:
            raise analysis_error("FROM is not allowed in the ROLLUP clause of CREATE TABLE")
        if desc.name in taken:
            raise analysis_error(f"Rollup index[{desc.name}] already exists")
        taken.add(desc.name)
        out.append(rollup_spec(columns, keys_type, desc, sum(c.is_key for c in columns)))
    return tuple(out)


def _source_index(table: OlapTable, name: str | None) -> MaterializedIndexMeta:
    wanted = name or table.name
    source = next((i for i in table.visible_indexes() if i.name == wanted), None)
    if source is None:
        raise analysis_error(f"Base index[{wanted}] does not exist")
    return source


def _timeout(props: st.Props, default: int) -> int:
    value = dict((k.lower(), v) for k, v in props).get("timeout")
    if value is None:
        return default
    try:
        seconds = int(value)
    except ValueError:
        raise analysis_error(f"Invalid timeout: {value}") from None
    if seconds <= 0:
        raise analysis_error(f"Invalid timeout: {value}")
    return seconds


# -- the schema rules -----------------------------------------------------------------------------------


def rollup_spec(source: Sequence[Column], keys_type: str, desc: st.RollupDesc, base_key_count: int) -> RollupSpec:
    if not desc.columns:
        raise analysis_error("No column is specified in rollup")
    seen: set[str] = set()
    for name in desc.columns:
        if name.lower() in seen:
            raise analysis_error(f"Duplicate column name '{name}' in rollup {desc.name}", code=1060,
                                 sqlstate="42S21")
        seen.add(name.lower())
    if keys_type == KEYS_DUP:
        columns = _dup_columns(source, desc)
    else:
        if desc.duplicate_keys:
            raise analysis_error("DUPLICATE KEY can only be specified for a rollup of a DUP_KEYS table")
        columns = _agg_columns(source, keys_type, desc, base_key_count)
    keys = [parse_type(c.type) for c in columns if c.is_key]
    return RollupSpec(desc.name, columns, short_key_column_count(keys))


def _lookup(source: Sequence[Column], name: str, suffix: str = "") -> Column:
    column = next((c for c in source if c.name.lower() == name.lower()), None)
    if column is None:
        raise analysis_error(f"Column[{name}] does not exist{suffix}")
    return column


def _agg_columns(source: Sequence[Column], keys_type: str, desc: st.RollupDesc,
                 base_key_count: int) -> tuple[Column, ...]:
    """AGGREGATE / UNIQUE: each column keeps its role; keys first; all keys if UNIQUE or REPLACE."""
    columns = [_lookup(source, name) for name in desc.columns]
    meet_value = replace_value = False
    for column in columns:
        if column.is_key and meet_value:
            raise analysis_error("Invalid column order. value should be after key")
        if column.is_key and parse_type(column.type).is_float:
            raise analysis_error("Do not support float/double type on group by, you can change it to decimal")
        if not column.is_key:
            meet_value = True
            replace_value |= (column.aggregation or "") in _REPLACE_FAMILY
    n_keys = sum(c.is_key for c in columns)
    if n_keys == 0:
        raise analysis_error("No key column is found")
    if (keys_type == KEYS_UNIQUE or replace_value) and n_keys != base_key_count:
        if keys_type == KEYS_UNIQUE:
            raise analysis_error("Rollup should contains all unique keys in basetable")
        raise analysis_error("Rollup should contains all keys if there is a REPLACE value")
    base_keys = [c.name.lower() for c in source if c.is_key]
    if n_keys == base_key_count and [c.name.lower() for c in columns[:n_keys]] == base_keys[:n_keys]:
        raise analysis_error("Rollup contains all keys in base table with same order for aggregation or unique "
                             "table is useless.")
    return tuple(columns)


def _dup_columns(source: Sequence[Column], desc: st.RollupDesc) -> tuple[Column, ...]:
    """DUPLICATE: DUPLICATE KEY (...) must be a prefix of the columns, else the default short-key rule."""
    columns = [_lookup(source, name, "" if desc.duplicate_keys else " in base index") for name in desc.columns]
    if desc.duplicate_keys:
        dup = desc.duplicate_keys
        if len(dup) > len(columns):
            raise analysis_error("Num of duplicate keys should less than or equal to num of rollup columns.")
        for key, column in zip(dup, columns, strict=False):
            if key.lower() != column.name.lower():
                raise analysis_error("Duplicate keys should be the prefix of rollup columns")
        n_keys = len(dup)
    else:
        try:
            n_keys = len(default_duplicate_keys([(c.name, parse_type(c.type)) for c in columns]))
        except SqlError:
            raise analysis_error("The first column could not be float or double") from None
    # a rollup repeating the base table's key prefix in order sorts like the base: Doris rejects it
    base = list(source)
    if any(c.is_key for c in base) and all(i >= len(base) or c.name.lower() == base[i].name.lower() or not base[i].is_key
           for i, c in enumerate(columns)):
        raise analysis_error("Rollup contain the columns of the base table in prefix order for duplicate table "
                             "is useless.")
    return tuple(
        replace(c, is_key=True, aggregation=None) if i < n_keys else replace(c, is_key=False, aggregation="NONE")
        for i, c in enumerate(columns)
    )


# -- ADD / DROP INDEX, SET bloom filter properties (one implementation with CREATE TABLE's checks) ---------


def bind_add_index(table: OlapTable, index: st.IndexDesc, if_not_exists: bool = False
                   ) -> tuple[IndexDef, ...] | None:
    """The table's index definitions with `index` added, checked as CREATE TABLE checks its INDEX clauses;
    None when it exists already and IF NOT EXISTS was given."""
    if if_not_exists and any(d.name.lower() == index.name.lower() for d in table.index_defs):
        return None
    existing = tuple(st.IndexDesc(d.name, d.columns, d.index_type, d.comment, d.properties) for d in table.index_defs)
    columns = {c.name.lower(): (c, parse_type(c.type)) for c in table.columns}
    return _index_defs((*existing, index), columns, table.keys_type)


def bind_drop_index(table: OlapTable, name: str, if_exists: bool = False) -> tuple[IndexDef, ...] | None:
    """The table's index definitions without `name`; None when it does not exist and IF EXISTS was given."""
    kept = tuple(d for d in table.index_defs if d.name.lower() != name.lower())
    if len(kept) == len(table.index_defs):
        if if_exists:
            return None
        raise analysis_error(f"index {name} does not exist")
    return kept


def bind_set_bloom_properties(table: OlapTable, given: st.Props) -> tuple[tuple[str, str], ...]:
    """ALTER TABLE SET ("bloom_filter_columns" = .., "bloom_filter_fpp" = ..): the table's properties with
    them replaced (an empty column list removes both), validated as CREATE TABLE validates them."""
    props = {k.lower(): v for k, v in given}
    unknown = [k for k in props if k not in ("bloom_filter_columns", "bloom_filter_fpp")]
    if unknown or not props:
        raise analysis_error("Unknown table property: " + ", ".join(unknown or ["<none>"]))
    current = dict(table.properties)
    if "bloom_filter_columns" in props:
        value = props["bloom_filter_columns"]
        if value.strip():
            types = {c.name.lower(): parse_type(c.type) for c in table.columns}
            current["bloom_filter_columns"] = bloom_filter_columns(value, list(table.columns), types,
                                                                   table.keys_type)
        else:
            current.pop("bloom_filter_columns", None)
            current.pop("bloom_filter_fpp", None)
    if "bloom_filter_fpp" in props:
        if "bloom_filter_columns" not in current:
            raise analysis_error("Bloom filter fpp is only valid with bloom filter columns")
        current["bloom_filter_fpp"] = bloom_filter_fpp(props["bloom_filter_fpp"])
    # keep SHOW CREATE TABLE's order: the bloom keys right after min_load_replica_num
    order = [k for k in table.props if k not in ("bloom_filter_columns", "bloom_filter_fpp")]
    at = order.index("min_load_replica_num") + 1 if "min_load_replica_num" in order else len(order)
    bloom = [k for k in ("bloom_filter_columns", "bloom_filter_fpp") if k in current]
    return tuple((k, current[k]) for k in (*order[:at], *bloom, *order[at:]))
