"""CREATE TABLE analysis: a parsed `sql.statements.CreateTable` in, a fully checked `TableSpec` out.

Follows Doris 2.1 (Nereids CreateTableInfo.validate, then the legacy KeysDesc / ColumnDef checks) with
its messages (doris-reference §1.3). Ids, tablets and the base MaterializedIndexMeta are the catalog's job.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from planner.bind import values
from planner.bind.generated_columns import check_generated, generated_text
from planner.bind.partitions import bind_partitions
from planner.bind.table_properties import bind_properties
from planner.functions.match import PARSERS
from sql import statements as st
from sql.errors import analysis_error
from sql.types import DorisType, type_from_sqlglot
from storage.catalog.model import (
    KEYS_AGG,
    KEYS_DUP,
    KEYS_UNIQUE,
    Column,
    DistributionInfo,
    IndexDef,
    PartitionInfo,
    TableSpec,
)
from storage.partition_policy.buckets import BucketPolicy
from storage.partition_policy.dynamic_partition import PREFIX as DYNAMIC_PREFIX
from storage.partition_policy.dynamic_partition import parse_dynamic_partition_properties, stored_properties

DEFAULT_BUCKET_NUM = 10  # FeConstants.default_bucket_num
SHORTKEY_MAX_COLUMN_COUNT = 3  # FeConstants.shortkey_max_column_count
SHORTKEY_MAXSIZE_BYTES = 36  # FeConstants.shortkey_maxsize_bytes
VARCHAR_INDEX_SIZE = 20  # a VARCHAR contributes at most 20 bytes to the prefix index

_KEYS_TYPES = {"AGGREGATE": KEYS_AGG, "UNIQUE": KEYS_UNIQUE, "DUPLICATE": KEYS_DUP}
_NUMERIC = {"TINYINT", "SMALLINT", "INT", "BIGINT", "LARGEINT", "FLOAT", "DOUBLE", "DECIMAL", "BOOLEAN"}
_DEFAULT_FUNCTIONS = {"CURRENT_TIMESTAMP": ("DATETIME",), "NOW": ("DATETIME",), "CURRENT_DATE": ("DATE",)}


def index_size(t: DorisType) -> int:
    """Bytes a key column takes in the short-key prefix (PrimitiveType.getOlapColumnIndexSize)."""
    if t.name == "CHAR":
        return t.length or 1
    if t.name in ("VARCHAR", "STRING"):
        return VARCHAR_INDEX_SIZE
    if t.name == "DECIMAL":
        p = t.precision or 9
        return 4 if p <= 9 else 8 if p <= 18 else 16
    return t.storage_size


@dataclass(frozen=True)
class CreateTableOptions:
    """What CREATE TABLE's checks need from the server's configuration."""

    max_dynamic_partition_num: int = 500
    bucket_policy: BucketPolicy | None = None  # BUCKETS AUTO sizing (disks); None: Doris's default of 10


def bind_create_table(stmt: st.CreateTable, options: CreateTableOptions = CreateTableOptions()) -> TableSpec:
    if not stmt.columns:
        raise analysis_error("table should contain at least one column")
    if stmt.engine is not None and stmt.engine.lower() != "olap":
        raise analysis_error("currently Nereids support olap engine only")
    seen: set[str] = set()
    for col in stmt.columns:
        if col.name.lower() in seen:
            raise analysis_error(f"Duplicate column name '{col.name}'", code=1060, sqlstate="42S21")
        seen.add(col.name.lower())
    types = {c.name.lower(): type_from_sqlglot(c.type) for c in stmt.columns}
    check_generated(stmt.columns)

    keys_type, key_names = _keys(stmt, types)
    _check_keys(stmt.columns, keys_type, key_names)
    columns = tuple(bind_column(c, types[c.name.lower()], i < len(key_names), keys_type)
                    for i, c in enumerate(stmt.columns))

    props = dict(stmt.properties)
    by_name = {c.name.lower(): (c, types[c.name.lower()]) for c in columns}
    partition_info, items = bind_partitions(stmt.partition, stmt.name, by_name, props)
    distribution = _distribution(stmt.distribution or _default_distribution(keys_type, columns),
                                 by_name, keys_type, columns)
    properties = bind_properties(stmt.properties, keys_type, list(columns), types, distribution.auto)
    if distribution.auto and stmt.distribution is not None and stmt.distribution.buckets is None:
        estimate = props.get("estimate_partition_size")
        policy = options.bucket_policy
        try:
            buckets = policy.initial(estimate) if policy is not None else DEFAULT_BUCKET_NUM
        except ValueError as e:
            raise analysis_error(f"Invalid estimate_partition_size: {e}") from None
        distribution = replace(distribution, buckets=buckets)
    properties = _with_dynamic_partition(properties, partition_info, by_name, distribution, options)
    # imported here: bind_alter builds on this module's short-key rules
    from planner.bind.bind_alter import bind_create_rollups

    rollups = bind_create_rollups(columns, keys_type, stmt.name, stmt.rollups)
    return TableSpec(
        name=stmt.name,
        keys_type=keys_type,
        columns=columns,
        short_key_column_count=short_key_column_count([types[c.name.lower()] for c in columns if c.is_key]),
        partition_info=partition_info,
        partition_items=items,
        distribution=distribution,
        properties=properties,
        index_defs=_index_defs(stmt.indexes, by_name, keys_type),
        comment=stmt.comment or "",
        rollups=rollups,
    )


def _default_distribution(keys_type: str, columns: tuple[Column, ...]) -> st.DistributionDesc:
    """No DISTRIBUTED BY (Doris 2.1+): RANDOM BUCKETS AUTO where random is allowed, else HASH of the keys."""
    replace = any(c.aggregation in ("REPLACE", "REPLACE_IF_NOT_NULL") for c in columns)
    if keys_type == KEYS_DUP or (keys_type == KEYS_AGG and not replace):
        return st.DistributionDesc("RANDOM", (), None, auto=True)
    return st.DistributionDesc("HASH", tuple(c.name for c in columns if c.is_key), None, auto=True)


# -- keys -----------------------------------------------------------------------------------------------


def _keys(stmt: st.CreateTable, types: dict[str, DorisType]) -> tuple[str, list[str]]:
    if stmt.keys is not None:
        return _KEYS_TYPES[stmt.keys.type], list(stmt.keys.columns)
    marked = [c.name for c in stmt.columns if c.is_key]
    has_agg = any(c.agg_type for c in stmt.columns)
    if marked:
        return (KEYS_AGG if has_agg else KEYS_DUP), marked
    if has_agg:  # AGGREGATE: the columns before the first aggregated one
        keys = []
        for col in stmt.columns:
            if col.agg_type:
                break
            keys.append(col.name)
        return KEYS_AGG, keys
    if dict((k.lower(), v) for k, v in stmt.properties).get("enable_duplicate_without_keys_by_default",
                                                              "").strip().lower() == "true":
        return KEYS_DUP, []  # a duplicate table without a sort key (Doris 2.0+)
    return KEYS_DUP, default_duplicate_keys([(c.name, types[c.name.lower()]) for c in stmt.columns])


def default_duplicate_keys(columns: list[tuple[str, DorisType]]) -> list[str]:
    """Doris's default sort key: up to 3 columns / 36 bytes, stopping at float/string types and after a VARCHAR."""
    keys: list[str] = []
    length = 0
    for name, t in columns:
        length += index_size(t)
        if len(keys) >= SHORTKEY_MAX_COLUMN_COUNT or length > SHORTKEY_MAXSIZE_BYTES:
            if not keys and t.name in ("CHAR", "VARCHAR"):
                keys.append(name)
            break
        if t.is_float or t.name == "STRING":
            break
        keys.append(name)
        if t.name == "VARCHAR":
            break
    if not keys:
        raise analysis_error(
            "The olap table first column could not be float, double, string or array, struct, map, "
            "please use decimal or varchar instead."
        )
    return keys


def _check_keys(columns: tuple[st.ColumnDefinition, ...], keys_type: str, keys: list[str]) -> None:
    """KeysDesc.analyze: keys are an ordered prefix; value columns match the model's aggregation rule."""
    if not keys and (keys_type != KEYS_DUP or any(c.agg_type for c in columns)):
        raise analysis_error("The number of key columns is 0.")
    if len(keys) > len(columns):
        raise analysis_error("The number of key columns should be less than the number of columns.")
    names = {c.name.lower() for c in columns}
    for i, key in enumerate(keys):
        column = columns[i]
        if column.name.lower() != key.lower():
            if key.lower() not in names:
                raise analysis_error(f"Key column[{key}] doesn't exist.")
            raise analysis_error(
                "Key columns should be a ordered prefix of the schema. "
                f"KeyColumns[{i}] (starts from zero) is {key}, but corresponding column is {column.name} "
                "in the previous columns declaration."
            )
        if column.agg_type:
            raise analysis_error(f"Key column[{key}] should not specify aggregate type.")
    for column in columns[len(keys):]:
        if keys_type == KEYS_AGG:
            if not column.agg_type:
                raise analysis_error(
                    f"AGG_KEYS table should specify aggregate type for non-key column[{column.name}]"
                )
        elif column.agg_type:
            raise analysis_error(
                f"{keys_type} table should not specify aggregate type for non-key column[{column.name}]"
            )


def short_key_column_count(key_types: list[DorisType]) -> int:
    """Env.calcShortKeyColumnCount: the prefix index covers at most 3 key columns / 36 bytes, ends after a
    VARCHAR, and a CHAR that crosses 36 bytes is still included (truncated)."""
    count = size = 0
    for t in key_types[:SHORTKEY_MAX_COLUMN_COUNT]:
        size += index_size(t)
        if size > SHORTKEY_MAXSIZE_BYTES:
            if t.name in ("CHAR", "VARCHAR"):
                count += 1
            break
        if t.is_float:
            break
        count += 1
        if t.name == "VARCHAR":
            break
    if key_types and count == 0:
        raise analysis_error("The first column could not be float or double type, use decimal instead")
    return count


# -- columns --------------------------------------------------------------------------------------------


def bind_column(col: st.ColumnDefinition, t: DorisType, is_key: bool, keys_type: str) -> Column:
    if col.auto_increment:
        raise analysis_error(f"AUTO_INCREMENT is not supported yet: column[{col.name}]")
    if is_key:
        if t.is_float:
            raise analysis_error("Float or double can not used as a key, use decimal instead.")
        if t.name == "STRING":
            raise analysis_error(f"String Type should not be used in key column[{col.name}]")
        aggregation = None
    elif keys_type == KEYS_AGG:
        aggregation = col.agg_type
        if aggregation == "SUM" and t.name not in _NUMERIC:
            raise analysis_error(f"Invalid aggregate function '{aggregation}' for '{col.name}'")
        if aggregation in ("HLL_UNION", "BITMAP_UNION", "QUANTILE_UNION"):
            raise analysis_error(f"Invalid aggregate function '{aggregation}' for '{col.name}'")
    else:
        aggregation = "REPLACE" if keys_type == KEYS_UNIQUE else "NONE"
    nullable = True if col.nullable is None else col.nullable
    if aggregation == "REPLACE_IF_NOT_NULL":
        nullable = True
    return Column(
        name=col.name,
        type=str(t),
        is_key=is_key,
        aggregation=aggregation,
        nullable=nullable,
        default=_default(col, t, nullable),
        comment=col.comment,
        generated=generated_text(col.generated) if col.generated is not None else None,
    )


def _default(col: st.ColumnDefinition, t: DorisType, nullable: bool) -> str | None:
    default = col.default
    if default is None:
        return None
    if default.value is None:
        if not nullable:
            raise analysis_error(f"Can not set null default value to non nullable column: {col.name}")
        return None
    if default.is_function:
        allowed = _DEFAULT_FUNCTIONS.get(default.value)
        if allowed is None or t.name not in allowed:
            raise analysis_error(
                f"Invalid default value for '{col.name}': {default.value} is not supported for {t}"
            )
        return "CURRENT_TIMESTAMP" if default.value == "NOW" else default.value
    try:
        values.normalize(default.value, t)
    except Exception as e:  # SqlError from normalize: re-word as Doris's default-value error
        detail = getattr(e, "message", str(e)).removeprefix("errCode = 2, detailMessage = ")
        raise analysis_error(f"Invalid default value for '{col.name}': {detail}") from None
    return default.value


# -- distribution ---------------------------------------------------------------------------------------


def _distribution(
    desc: st.DistributionDesc,
    columns: dict[str, tuple[Column, DorisType]],
    keys_type: str,
    ordered: tuple[Column, ...],
) -> DistributionInfo:
    buckets = DEFAULT_BUCKET_NUM if desc.buckets is None else desc.buckets
    if buckets <= 0:
        kind = "hash" if desc.type == "HASH" else "random"
        raise analysis_error(f"Number of {kind} distribution should be greater than zero.")
    if desc.type == "HASH":
        names = list(desc.columns)
        if len({n.lower() for n in names}) != len(names):
            raise analysis_error("Duplicate key in distribution desc is not allowed")
        for name in names:
            if name.lower() not in columns:
                raise analysis_error(f"Distribution column({name}) doesn't exist")
        for name in names:
            column, t = columns[name.lower()]
            if not column.is_key and keys_type in (KEYS_UNIQUE, KEYS_AGG):
                raise analysis_error(f"Distribution column[{name}] is not key column")
            if t.is_float:
                raise analysis_error(f"{t} column can not be distribution column")
        return DistributionInfo("HASH", tuple(columns[n.lower()][0].name for n in names), buckets, desc.auto)
    if keys_type == KEYS_UNIQUE:
        raise analysis_error("Should not be distributed by random when keys type is unique")
    if keys_type == KEYS_AGG:
        for column in ordered:
            if column.aggregation in ("REPLACE", "REPLACE_IF_NOT_NULL"):
                raise analysis_error(
                    "Should not be distributed by random when keys type is agg"
                    f"and column is in replace, [{column.name}] is invalid"
                )
    return DistributionInfo("RANDOM", (), buckets, desc.auto)


def _with_dynamic_partition(properties: tuple[tuple[str, str], ...], partition_info: PartitionInfo,
                            by_name: dict, distribution: DistributionInfo, options: CreateTableOptions
                            ) -> tuple[tuple[str, str], ...]:
    """dynamic_partition.* checked with Doris's rules and stored with their defaults, in place."""
    given = dict(properties)
    if not any(k.startswith(DYNAMIC_PREFIX) for k in given):
        return properties
    names = list(partition_info.columns)
    # a StorageError carries Doris's message and code as they are
    prop = parse_dynamic_partition_properties(
        given, [str(by_name[n.lower()][1]) for n in names], partition_info.type,
        options.max_dynamic_partition_num, partition_column_names=names,
        table_buckets=None if distribution.auto else distribution.buckets)
    assert prop is not None
    if prop.replication_allocation is None:  # Doris materialises the table's, as SHOW CREATE TABLE shows
        prop = replace(prop, replication_allocation=given.get("replication_allocation"))
    out = [(k, v) for k, v in properties if not k.startswith(DYNAMIC_PREFIX)]
    at = next(i for i, (k, _) in enumerate(properties) if k.startswith(DYNAMIC_PREFIX))
    return tuple(out[:at] + stored_properties(prop) + out[at:])


# -- indexes --------------------------------------------------------------------------------------------


def _index_defs(
    indexes: tuple[st.IndexDesc, ...], columns: dict[str, tuple[Column, DorisType]], keys_type: str
) -> tuple[IndexDef, ...]:
    out: list[IndexDef] = []
    names: set[str] = set()
    signatures: set[tuple[tuple[str, ...], str]] = set()
    for index in indexes:
        if index.name.lower() in names:
            raise analysis_error("index name must be unique.")
        names.add(index.name.lower())
        index_type = (index.index_type or "INVERTED").upper()
        if index_type not in ("BITMAP", "INVERTED", "NGRAM_BF"):
            raise analysis_error(f"Unsupported index type: {index_type}")
        resolved = []
        for name in index.columns:
            if name.lower() not in columns:
                raise analysis_error(f"Column does not exist in table. invalid column: {name}")
            column, t = columns[name.lower()]
            if index_type in ("BITMAP", "INVERTED") and keys_type == KEYS_AGG and not column.is_key:
                raise analysis_error(
                    f"{index_type} index only used in columns of DUP_KEYS/UNIQUE_KEYS table or key columns of "
                    f"AGG_KEYS table. invalid index: {index.name}"
                )
            if index_type == "INVERTED":
                _check_inverted(dict(index.properties), column.name, t)
            if index_type == "BITMAP":
                if t.is_float or t.name == "STRING":
                    raise analysis_error(f"{t} is not supported in BITMAP index. invalid index: {index.name}")
            resolved.append(column.name)
        if index_type in ("BITMAP", "INVERTED") and len(resolved) != 1:
            raise analysis_error(f"{index_type} index can only apply to a single column. invalid index: "
                                 f"{index.name}")
        signature = (tuple(c.lower() for c in resolved), index_type)
        if signature in signatures:
            raise analysis_error("same index columns have multiple same type index is not allowed.")
        signatures.add(signature)
        out.append(IndexDef(index.name, tuple(resolved), index_type, index.comment, index.properties))
    return tuple(out)


def _check_inverted(properties: dict[str, str], column: str, t: DorisType) -> None:
    """Doris's InvertedIndexUtil.checkInvertedIndexParser."""
    parser = properties.get("parser")
    if parser is None:
        return
    if parser.lower() not in PARSERS:
        raise analysis_error(f"INVERTED index parser: {parser} is invalid for column: {column} of type {t}")
    if parser.lower() != "none" and not t.is_string:
        raise analysis_error(f"INVERTED index with parser: {parser} is not supported for column: {column} of "
                             f"type {t}")
    mode = properties.get("parser_mode")
    if mode is not None and (parser.lower() != "chinese" or mode not in ("fine_grained", "coarse_grained")):
        raise analysis_error(f"Invalid inverted index 'parser_mode' value: {mode}, parser_mode must be "
                             "fine_grained or coarse_grained for chinese parser")
    for key in ("lower_case", "support_phrase"):
        if key in properties and properties[key].lower() not in ("true", "false"):
            raise analysis_error(f"Invalid inverted index '{key}' value: {properties[key]}, {key} must be true "
                                 "or false")
