"""ALTER TABLE ... ADD / DROP / MODIFY / RENAME COLUMN and ORDER BY: Doris's SchemaChangeHandler rules and
messages, applied clause by clause to the table's base and rollup schemas.

A light change is a catalog change only: the segments already written are read through the new schema
(storage.segment.schema_view: columns found by unique id, added ones read as their default, widened ones cast).
That covers adding columns (key or value: a column that is constant in the old rows keeps them sorted),
dropping value columns, renames, widening a type, comments, defaults and moving value columns. A change that
needs the rows written again (dropping or reordering key columns, converting a type: VARCHAR to INT, DATETIME
to DATE, INT to VARCHAR in a key ...) marks the indexes it touches for a rewrite (`SchemaChange.rewrite`): the
statement becomes a schema change job (storage.jobs.schema_change) instead of one commit.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from planner.bind.create_table import bind_column, short_key_column_count
from planner.bind.generated_columns import dependents
from sql import statements as st
from sql.errors import SqlError, analysis_error
from sql.types import DorisType, parse_type, type_from_sqlglot
from storage.catalog.model import (
    KEYS_AGG,
    KEYS_DUP,
    KEYS_UNIQUE,
    Column,
    DistributionInfo,
    IndexDef,
    MaterializedIndexMeta,
    OlapTable,
    PartitionInfo,
)

NEW_COLUMN_ID = -1  # the catalog gives the column its unique id when it commits the change


@dataclass(frozen=True)
class SchemaChange:
    """The table's definition after the statement: what the catalog stores in one commit."""

    columns: tuple[Column, ...]
    indexes: tuple[MaterializedIndexMeta, ...]
    partition_info: PartitionInfo
    distribution: DistributionInfo
    properties: tuple[tuple[str, str], ...]
    index_defs: tuple[IndexDef, ...]
    renames: tuple[tuple[str, str], ...] = ()  # RENAME COLUMN clauses in order (DELETE conditions follow them)
    rewrite: tuple[int, ...] = ()  # ids of the indexes whose rows must be written again (base first)


def ddl_error(detail: str) -> SqlError:
    return analysis_error(detail)


class _Schemas:
    """The schemas being changed: base and rollups by name (case-insensitive), columns as lists."""

    def __init__(self, table: OlapTable) -> None:
        self.table = table
        self.base_name = table.base_index.name
        self.cols: dict[int, list[Column]] = {i.index_id: list(i.columns) for i in table.indexes}
        self.by_name = {i.name.lower(): i for i in table.indexes}
        self.partition_info = table.partition_info
        self.distribution = table.distribution
        self.properties = list(table.properties)
        self.index_defs = list(table.index_defs)
        self.renames: list[tuple[str, str]] = []
        self.rewrite: set[int] = set()

    def rewrite_holding(self, name: str) -> None:
        """Every index holding column `name` is rewritten."""
        self.rewrite.update(i for i, cols in self.cols.items() if _find(cols, name) >= 0)

    @property
    def base(self) -> list[Column]:
        return self.cols[self.table.base_index_id]

    def rollup(self, name: str | None) -> MaterializedIndexMeta | None:
        if name is None:
            return None
        index = self.by_name.get(name.lower())
        if index is None:
            raise ddl_error(f"Index[{name}] does not exist in table[{self.table.name}]")
        if index.index_id == self.table.base_index_id:
            return None  # naming the base index is naming no rollup
        return index


def _find(columns: list[Column], name: str) -> int:
    return next((i for i, c in enumerate(columns) if c.name.lower() == name.lower()), -1)


def _check_conflicts(clauses: tuple) -> None:
    """AlterOperations.checkConflict: RENAME COLUMN is a RENAME, every other column clause a SCHEMA_CHANGE, and
    the two do not mix in one statement."""
    current = None
    for clause in clauses:
        op = "RENAME" if isinstance(clause, st.RenameColumn) else "SCHEMA_CHANGE"
        if current is not None and op != current:
            raise ddl_error(f"Alter operation {op} conflicts with operation {current}")
        current = op


def bind_schema_change(table: OlapTable, stmt: st.AlterColumns) -> SchemaChange:
    _check_conflicts(stmt.clauses)
    s = _Schemas(table)
    for clause in stmt.clauses:
        if isinstance(clause, st.AddColumns):
            for definition, position in clause.columns:
                _add(s, definition, position, clause.rollup)
        elif isinstance(clause, st.DropColumn):
            _drop(s, clause)
        elif isinstance(clause, st.ModifyColumn):
            _modify(s, clause)
        elif isinstance(clause, st.RenameColumn):
            _rename(s, clause)
        else:
            _reorder(s, clause)
    for index in table.indexes:
        # a duplicate table created without keys (enable_duplicate_without_keys_by_default) stays keyless
        keyless = table.keys_type == KEYS_DUP and not any(c.is_key for c in index.columns)
        _check_order(s.cols[index.index_id], index.name, keyless)
    indexes = tuple(
        replace(i, columns=tuple(s.cols[i.index_id]),
                short_key_column_count=_short_keys(i, s.cols[i.index_id]))
        for i in table.indexes)
    rewrite = tuple(i.index_id for i in table.indexes if i.index_id in s.rewrite)
    return SchemaChange(tuple(s.base), indexes, s.partition_info, s.distribution, tuple(s.properties),
                        tuple(s.index_defs), tuple(s.renames), rewrite)


def _short_keys(index: MaterializedIndexMeta, columns: list[Column]) -> int:
    before = [c.name for c in index.columns if c.is_key]
    after = [c.name for c in columns if c.is_key]
    if before == after:
        return index.short_key_column_count
    return short_key_column_count([parse_type(c.type) for c in columns if c.is_key])


def _check_order(columns: list[Column], index_name: str, keyless: bool = False) -> None:
    seen_value = False
    for c in columns:
        if not c.is_key:
            seen_value = True
        elif seen_value:
            raise ddl_error(f"Invalid column order. value should be after key. index[{index_name}]")
    if not keyless and not any(c.is_key for c in columns):
        raise ddl_error(f"Index[{index_name}] must have at least one key column")


# -- ADD COLUMN -------------------------------------------------------------------------------------------------
def _is_key(keys_type: str, d: st.ColumnDefinition, marked_key: bool) -> bool:
    """Whether a column definition in ADD / MODIFY COLUMN is a key, with Doris's per-model rules on
    aggregation methods; `marked_key` is what the definition (or the column it modifies) says."""
    if keys_type == KEYS_AGG:
        if d.is_key and d.agg_type is not None:
            raise ddl_error(f"Can not assign aggregation method on key column: {d.name}")
        return d.agg_type is None  # no aggregation method: a key
    model = "Unique" if keys_type == KEYS_UNIQUE else "Duplicate"
    if d.agg_type is not None:
        raise ddl_error(f"Can not assign aggregation method on column in {model} data model table: {d.name}")
    return marked_key


def _new_column(s: _Schemas, d: st.ColumnDefinition) -> Column:
    keys_type = s.table.keys_type
    name = d.name
    is_key = _is_key(keys_type, d, d.is_key)
    t = type_from_sqlglot(d.type)
    column = bind_column(d, t, is_key, keys_type)
    if column.aggregation == "SUM" and column.default is not None and column.default != "0":
        raise ddl_error(f"The default value of '{name}' with SUM aggregation function must be zero")
    if (keys_type == KEYS_AGG and s.distribution.type == "RANDOM"
            and column.aggregation in ("REPLACE", "REPLACE_IF_NOT_NULL")):
        raise ddl_error(f"Can not add value column with aggregation type {column.aggregation} for olap table "
                        f"with random distribution : {name}")
    if not column.nullable and column.default is None:
        column = replace(column, default=_zero(t, name))
    return replace(column, unique_id=NEW_COLUMN_ID, fill="NULL" if column.default is None else column.default)


def _zero(t: DorisType, name: str) -> str:
    """What old rows hold in a NOT NULL column added without DEFAULT (its type's zero)."""
    if t.is_string:
        return ""
    if t.is_date:
        raise ddl_error(f"Can not add NOT NULL column '{name}' of type {t} without a DEFAULT value: the rows "
                        "already loaded need one")
    return "0"


def _insert(columns: list[Column], column: Column, position: str | None, *, check_repeat: bool = True) -> None:
    if check_repeat and _find(columns, column.name) >= 0:
        raise ddl_error(f"Repeatedly add column: {column.name}")
    if position == "FIRST":
        columns.insert(0, column)
        return
    if position is not None:
        at = _find(columns, position)
        if at < 0:
            raise ddl_error(f"Column[{position}] does not found")
        columns.insert(at + 1, column)
        return
    if column.is_key:
        last_key = max((i for i, c in enumerate(columns) if c.is_key), default=-1)
        columns.insert(last_key + 1, column)
    else:
        columns.append(column)


def _add(s: _Schemas, d: st.ColumnDefinition, position: str | None, rollup_name: str | None) -> None:
    if d.generated is not None:
        raise ddl_error("Not supporting alter table add generated columns.")
    if _find(s.base, d.name) >= 0:
        raise ddl_error(f"Can not add column which already exists in base table: {d.name}")
    column = _new_column(s, d)
    rollup = s.rollup(rollup_name)
    if rollup is not None and s.table.keys_type == KEYS_DUP and not column.is_key and rollup.keys_type == KEYS_AGG:
        raise ddl_error("Please add non-key column on base table directly")
    if s.table.keys_type == KEYS_UNIQUE and column.is_key:
        for columns in s.cols.values():  # a UNIQUE key column goes into every index
            _insert(columns, column, position if columns is s.base else None)
        return
    _insert(s.base, column, position if rollup is None or not column.is_key else None)
    if rollup is not None:
        _insert(s.cols[rollup.index_id], column, position)


# -- DROP COLUMN ------------------------------------------------------------------------------------------------
def _drop(s: _Schemas, clause: st.DropColumn) -> None:
    name = clause.name
    table = s.table
    rollup = s.rollup(clause.rollup)
    if rollup is not None:
        columns = s.cols[rollup.index_id]
        at = _find(columns, name)
        if at < 0:
            raise ddl_error(f"Column does not exists: {name}")
        if columns[at].is_key:
            s.rewrite.add(rollup.index_id)
        del columns[at]
        return
    at = _find(s.base, name)
    if at < 0:
        raise ddl_error(f"Column does not exists: {name}")
    column = s.base[at]
    if users := dependents(s.base, name):
        raise ddl_error(f"Column '{column.name}' has a generated column dependency on :{users}")
    if any(p.lower() == name.lower() for p in s.partition_info.columns):
        raise ddl_error(f"Can not drop partition column[{column.name}]")
    if s.distribution.type == "HASH" and any(c.lower() == name.lower() for c in s.distribution.columns):
        raise ddl_error(f"Can not drop distribution column[{column.name}]")
    if column.is_key:
        if table.keys_type == KEYS_UNIQUE:
            raise ddl_error("Can not drop key column in Unique data model table")
        if table.keys_type == KEYS_AGG and any(c.aggregation in ("REPLACE", "REPLACE_IF_NOT_NULL") for c in s.base):
            raise ddl_error("Can not drop key column when table has value column with REPLACE aggregation method")
        if sum(1 for c in s.base if c.is_key) == 1:
            raise ddl_error(f"Index[{s.base_name}] must have at least one key column")
        s.rewrite_holding(column.name)
    if props := dict(s.properties).get("function_column.sequence_col"):
        if props.lower() == name.lower():
            raise ddl_error(f"Can not drop sequence mapping column[{column.name}] in Unique data model table"
                            f"[{table.name}]")
    for index_id, columns in s.cols.items():
        i = _find(columns, name)
        if i >= 0:
            if columns[i].is_key and columns is not s.base:
                s.rewrite.add(index_id)  # a key of a rollup
            del columns[i]
    s.index_defs = [d for d in s.index_defs if not any(c.lower() == name.lower() for c in d.columns)]
    s.properties = _without_bloom_column(s.properties, name)


def _without_bloom_column(properties: list[tuple[str, str]], name: str) -> list[tuple[str, str]]:
    out = []
    for key, value in properties:
        if key == "bloom_filter_columns":
            kept = [c.strip() for c in value.split(",") if c.strip() and c.strip().lower() != name.lower()]
            if not kept:
                continue
            value = ", ".join(kept)
        out.append((key, value))
    if not any(k == "bloom_filter_columns" for k, _ in out):
        out = [(k, v) for k, v in out if k != "bloom_filter_fpp"]
    return out


# -- MODIFY COLUMN ----------------------------------------------------------------------------------------------
_WIDER_INTS = ["TINYINT", "SMALLINT", "INT", "BIGINT", "LARGEINT"]


_INT_DIGITS = {"TINYINT": 3, "SMALLINT": 5, "INT": 10, "BIGINT": 19, "LARGEINT": 38}


def _exact_value_conversion(old: DorisType, new: DorisType) -> bool:
    """Conversions of a value column that rows already written can take as they are read (every old value
    has one exact new value; the order of rows does not matter for a value column): integers to DOUBLE, to a
    DECIMAL or text wide enough, DATE to DATETIME, DECIMAL to text."""
    if old.name in _INT_DIGITS:
        digits = _INT_DIGITS[old.name]
        if new.name == "DOUBLE" and old.name != "LARGEINT":
            return True
        if new.name == "DECIMAL":
            return (new.precision or 0) - (new.scale or 0) >= digits
        if new.name == "STRING" or new.name == "VARCHAR" and (new.length or 0) >= digits + 1:
            return True
    if old.name == "DATE" and new.name == "DATETIME":
        return True
    if old.name == "DECIMAL" and (new.name == "STRING" or new.name == "VARCHAR"
                                  and (new.length or 0) >= (old.precision or 0) + 2):
        return True
    return False


_NUMBERS = (*_WIDER_INTS, "FLOAT", "DOUBLE")


def _check_type_change(old: DorisType, new: DorisType, is_key: bool = False) -> bool:
    """Whether changing a column from `old` to `new` needs its rows rewritten (False: read as written, the
    segments cast on read); refused with Doris's message where Doris refuses it."""
    if str(old) == str(new):
        return False
    if not is_key and _exact_value_conversion(old, new):
        return False
    if old.name in _WIDER_INTS and new.name in _WIDER_INTS:
        if _WIDER_INTS.index(new.name) >= _WIDER_INTS.index(old.name):
            return False
    elif old.name == "FLOAT" and new.name == "DOUBLE":
        return False
    elif old.name in ("VARCHAR", "CHAR") and new.name == old.name:
        if (new.length or 0) >= (old.length or 0):
            return False
        raise ddl_error("Cannot shorten string length")
    elif old.name == "VARCHAR" and new.name == "STRING":
        return False
    elif old.name == "DECIMAL" and new.name == "DECIMAL":
        if new.scale == old.scale and (new.precision or 0) >= (old.precision or 0):
            return False
    elif old.name == "DATETIME" and new.name == "DATETIME" and (new.precision or 0) >= (old.precision or 0):
        return False
    if _rewritable(old, new):
        return True
    raise ddl_error(f"Can not change {old} to {new}")


def _rewritable(old: DorisType, new: DorisType) -> bool:
    """The conversions Doris's schema change runs by rewriting the rows (its documented list): numbers to a
    wider number or to text, text to a number or DATE, DATE <-> DATETIME, INT to DATE, CHAR to VARCHAR,
    anything but DATE / DATETIME to STRING."""
    if new.name == "STRING":
        return not old.is_date and old.name != "STRING"
    if old.name in _NUMBERS or old.name == "DECIMAL":
        if new.name in ("VARCHAR", "CHAR"):
            return True
        if old.name in _NUMBERS and new.name in ("FLOAT", "DOUBLE"):
            return old.name != "DOUBLE" or new.name == "DOUBLE"
        if old.name == "INT" and new.name == "DATE":
            return True
        return False
    if old.name in ("VARCHAR", "CHAR"):
        return new.name in _NUMBERS or new.name in ("DATE", "VARCHAR")
    if old.name == "DATETIME" and new.name in ("DATE", "DATETIME") or old.name == "DATE" and new.name == "DATETIME":
        return True
    return False


def _modify(s: _Schemas, clause: st.ModifyColumn) -> None:
    d = clause.column
    rollup = s.rollup(clause.rollup)
    if rollup is not None and clause.position is None:
        raise ddl_error("Do not need to specify index name when just modifying column type")
    at = _find(s.base, d.name)
    if at < 0:
        raise ddl_error(f"Column[{d.name}] does not exists")
    old = s.base[at]
    if old.generated is not None or d.generated is not None:
        raise ddl_error("Not supporting alter table modify generated columns.")
    keys_type = s.table.keys_type
    is_key = _is_key(keys_type, d, old.is_key if keys_type == KEYS_UNIQUE else old.is_key or d.is_key)
    new_type = type_from_sqlglot(d.type)
    column = bind_column(d, new_type, is_key, keys_type)
    if column.is_key != old.is_key:
        raise ddl_error(f"Can not change column {old.name} from {'key' if old.is_key else 'value'} to "
                        f"{'key' if column.is_key else 'value'}")
    if keys_type == KEYS_AGG and column.aggregation != old.aggregation:
        raise ddl_error(f"Can not change aggregation type: {old.aggregation} to {column.aggregation}")
    if old.nullable and not column.nullable:
        raise ddl_error("Can not change from nullable to non-nullable")
    if old.type != column.type:
        if any(p.lower() == old.name.lower() for p in s.partition_info.columns):
            raise ddl_error(f"Can not modify partition column[{old.name}]. index[{s.base_name}]")
        if s.distribution.type == "HASH" and any(c.lower() == old.name.lower() for c in s.distribution.columns):
            raise ddl_error(f"Can not modify distribution column[{old.name}]. index[{s.base_name}]")
    if _check_type_change(parse_type(old.type), new_type, old.is_key):
        s.rewrite_holding(old.name)
    column = replace(column, name=old.name, unique_id=old.unique_id, fill=old.fill)
    target = s.cols[rollup.index_id] if rollup is not None else s.base
    i = _find(target, d.name)
    if i < 0:
        raise ddl_error(f"Column[{d.name}] does not exists")
    if clause.position is not None:
        if column.is_key:
            s.rewrite.add(rollup.index_id if rollup is not None else s.table.base_index_id)
        if clause.position != "FIRST" and _find(target, clause.position) < 0:
            raise ddl_error(f"Column[{clause.position}] does not exists")
        moved = target.pop(i)
        _insert(target, moved, clause.position, check_repeat=False)
    for columns in s.cols.values():  # the new definition in every index holding the column
        j = _find(columns, d.name)
        if j >= 0:
            columns[j] = replace(column, is_key=columns[j].is_key, aggregation=columns[j].aggregation)


# -- RENAME COLUMN / ORDER BY -----------------------------------------------------------------------------------
def _rename(s: _Schemas, clause: st.RenameColumn) -> None:
    old, new = clause.old, clause.new
    if old == new:
        raise ddl_error("Same column name")
    if dict(s.properties).get("light_schema_change", "true") != "true":
        raise ddl_error(f"Table[{s.table.name}] does not support light schema change: can not rename column")
    if _find(s.base, old) < 0:
        raise ddl_error(f"Column[{old}] does not exists")
    if users := dependents(s.base, old):
        raise ddl_error(f"Cannot rename column, because column '{old}' has a generated column dependency on :{users}")
    if _find(s.base, new) >= 0 and old.lower() != new.lower():
        raise ddl_error(f"Column name[{new}] is already used")
    for columns in s.cols.values():
        j = _find(columns, old)
        if j >= 0:
            columns[j] = replace(columns[j], name=new)
    s.renames.append((old, new))

    def renamed(names: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(new if n.lower() == old.lower() else n for n in names)

    s.partition_info = replace(s.partition_info, columns=renamed(s.partition_info.columns))
    s.distribution = replace(s.distribution, columns=renamed(s.distribution.columns))
    s.index_defs = [replace(d, columns=renamed(d.columns)) for d in s.index_defs]
    out = []
    for key, value in s.properties:
        if key == "bloom_filter_columns":
            value = ", ".join(renamed(tuple(c.strip() for c in value.split(",") if c.strip())))
        elif key == "function_column.sequence_col" and value.lower() == old.lower():
            value = new
        out.append((key, value))
    s.properties = out


def _reorder(s: _Schemas, clause: st.ReorderColumns) -> None:
    rollup = s.rollup(clause.rollup)
    columns = s.cols[rollup.index_id] if rollup is not None else s.base
    names = [n.lower() for n in clause.names]
    if len(set(names)) != len(names):
        raise ddl_error("Reorder stmt contains duplicate columns")
    if sorted(names) != sorted(c.name.lower() for c in columns):
        raise ddl_error("Reorder stmt should contains all columns")
    ordered = [columns[_find(columns, n)] for n in clause.names]
    if [c.name for c in ordered if c.is_key] != [c.name for c in columns if c.is_key]:
        s.rewrite.add(rollup.index_id if rollup is not None else s.table.base_index_id)
    columns[:] = ordered
