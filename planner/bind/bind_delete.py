"""DELETE FROM: Doris's rules and messages, and what the statement turns into.

Two kinds of DELETE, as in Doris 2.1:

- a predicate DELETE (DUPLICATE, AGGREGATE, UNIQUE merge-on-read tables): the WHERE must be `column op
  constant` conditions joined by AND (`=, !=, <>, >, <, >=, <=, [NOT] IN, IS [NOT] NULL`, BETWEEN as two
  conditions); on AGGREGATE and merge-on-read UNIQUE tables only key columns; every column must exist in
  every rollup; the partitions come from the PARTITION clause, else from the conditions on the partition
  column, else (`SET delete_without_partition = true`) all of them. Literals convert to the column type as
  scan predicates convert them (planner.rules.scan_predicates.literal_value). -> PredicateDelete, which
  storage publishes as a DELETE version (storage.jobs.delete).
- a key DELETE (UNIQUE merge-on-write, and DELETE ... USING on UNIQUE tables): Doris runs it as an insert
  of the matched keys with the delete sign, so any WHERE a query takes works and it is evaluated on the
  merged rows. -> KeyDelete: the SELECT of the matched rows' keys, which storage turns into key-set DELETE
  rowsets.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from decimal import Decimal

import pyarrow as pa
from sqlglot import exp

from planner.bind.scope import unknown_column
from planner.context import QueryContext
from planner.olap_source import OlapTableSource
from planner.rules.prune_partitions import select_partitions
from planner.rules.scan_predicates import literal_value
from sql import statements as st
from sql.dialect import DorisLite
from sql.errors import analysis_error
from sql.types import parse_type
from storage.catalog.model import KEYS_DUP, KEYS_UNIQUE, Column, OlapTable
from storage.jobs.delete import key_delete_columns
from storage.predicate import ColumnPredicate, Op

# Config.max_allowed_in_element_num_of_delete
MAX_IN_ELEMENTS_OF_DELETE = 1024

_COMPARISONS = {exp.EQ: Op.EQ, exp.NEQ: Op.NE, exp.GT: Op.GT, exp.GTE: Op.GE, exp.LT: Op.LT, exp.LTE: Op.LE}
# BinaryPredicate.Operator names, as SHOW DELETE prints a condition (`k1 EQ "1"`)
_OP_NAMES = {Op.EQ: "EQ", Op.NE: "NE", Op.GT: "GT", Op.GE: "GE", Op.LT: "LT", Op.LE: "LE"}
# the conditions Doris's partition inference reads (NOT IN and IS [NOT] NULL do not narrow partitions)
_PARTITION_OPS = frozenset({Op.EQ, Op.NE, Op.GT, Op.GE, Op.LT, Op.LE, Op.IN})
_DIALECT = DorisLite()

ONLY_SIMPLE = "Where clause only supports compound predicate, binary predicate, is_null predicate or in predicate"


@dataclass(frozen=True)
class PredicateDelete:
    table: OlapTable
    partition_ids: tuple[int, ...]
    partition_names: tuple[str, ...]
    no_partition_specified: bool
    predicates: tuple[ColumnPredicate, ...]
    conditions: tuple[str, ...]  # SHOW DELETE's DeleteCondition pieces
    matches_nothing: bool = False  # a comparison with NULL: no row can match, nothing is published


@dataclass(frozen=True)
class KeyDelete:
    table: OlapTable
    query: exp.Select  # one row per row to delete: storage.jobs.delete.key_delete_columns


BoundDelete = PredicateDelete | KeyDelete


def bind_delete(s: st.Delete, source: OlapTableSource, db: str, ctx: QueryContext,
                delete_without_partition: bool) -> BoundDelete:
    table = source.table
    if s.temporary:
        raise analysis_error("Do not support deleting temp partitions")
    if s.using and table.keys_type != KEYS_UNIQUE:
        raise analysis_error("delete command on with using clause only supports unique key model")
    partitions = []
    for name in s.partitions:
        p = table.partition(name)
        if p is None:
            raise analysis_error(f"Partition does not exist. name: {name}")
        partitions.append(p)
    if s.where is None:
        raise analysis_error("Where clause is not set")
    if table.keys_type == KEYS_UNIQUE and (s.using or source.merge_on_write):
        return KeyDelete(table, _key_query(s, table, db))
    return _predicate_delete(s, source, partitions, ctx, delete_without_partition)


# ------------------------------------------------------------------ key DELETE


def _key_query(s: st.Delete, table: OlapTable, db: str) -> exp.Select:
    qualifier = s.alias or table.name
    target = exp.Table(this=exp.to_identifier(table.name), db=exp.to_identifier(db))
    if s.alias:
        target.set("alias", exp.TableAlias(this=exp.to_identifier(s.alias)))
    if s.partitions:
        target.set("partition", exp.Partition(expressions=[exp.to_identifier(p) for p in s.partitions]))
    query = exp.Select(expressions=[exp.column(c, table=qualifier) for c in key_delete_columns(table)])
    query = join_relations(query.from_(target), s.using)
    assert s.where is not None
    return query.where(s.where.copy())


def join_relations(query: exp.Select, relations: tuple[exp.Expression, ...]) -> exp.Select:
    """DELETE's USING / UPDATE's FROM: `t2 JOIN t3 ON ..` after the target, t2 cross joined, t3 as written."""
    for relation in relations:
        first = relation.copy()
        joins = first.args.get("joins") or []
        first.set("joins", None)
        query = query.join(first, join_type="cross")
        for join in joins:
            query.append("joins", join)
    return query


# ------------------------------------------------------------------ predicate DELETE


@dataclass(frozen=True)
class _Condition:
    column: exp.Column
    op: Op
    values: tuple[exp.Expression, ...] = ()


def _conjuncts(e: exp.Expression) -> list[exp.Expression]:
    e = e.unnest()
    if isinstance(e, exp.And):
        return _conjuncts(e.this) + _conjuncts(e.expression)
    if isinstance(e, exp.Or):
        raise analysis_error("Compound predicate's op should be AND")
    return [e]


_NOT_CONSTANT = (exp.Column, exp.Subquery, exp.Select, exp.AggFunc, exp.Window, exp.Rand, exp.Star)


def _is_value(e: exp.Expression) -> bool:
    """A constant as Doris's DELETE takes it: a literal, or an expression of literals, functions and user
    variables folded once when the statement runs (`3 + 1`, `curdate()`, `date_sub(now(), INTERVAL 1 DAY)`,
    `@v`); not a column, subquery, aggregate or random value."""
    e = e.unnest()
    if isinstance(e, exp.Literal | exp.Boolean | exp.Null):
        return True
    return not any(isinstance(n, _NOT_CONSTANT) for n in e.walk())


def _shape(e: exp.Expression) -> list[_Condition]:
    """One conjunct as conditions (Doris's DeleteStmt.analyzePredicate), or its message."""
    if isinstance(e, exp.Between):
        col = e.this.unnest()
        if not isinstance(col, exp.Column):
            raise analysis_error("Left expr of binary predicate should be column name")
        low, high = e.args["low"], e.args["high"]
        if not _is_value(low) or not _is_value(high):
            raise analysis_error("Right expr of binary predicate should be value")
        return [_Condition(col, Op.GE, (low,)), _Condition(col, Op.LE, (high,))]
    op = _COMPARISONS.get(type(e))
    if op is not None:
        col = e.this.unnest()
        if not isinstance(col, exp.Column):
            raise analysis_error("Left expr of binary predicate should be column name")
        if not _is_value(e.expression):
            raise analysis_error("Right expr of binary predicate should be value")
        return [_Condition(col, op, (e.expression,))]
    negated = isinstance(e, exp.Not)
    inner = e.this.unnest() if negated else e
    if isinstance(inner, exp.Is) and isinstance(inner.expression, exp.Null):
        col = inner.this.unnest()
        if not isinstance(col, exp.Column):
            raise analysis_error("Left expr of is_null predicate should be column name")
        return [_Condition(col, Op.IS_NOT_NULL if negated else Op.IS_NULL)]
    if isinstance(inner, exp.In):
        col = inner.this.unnest()
        if not isinstance(col, exp.Column):
            raise analysis_error("Left expr of in predicate should be column name")
        items = inner.expressions
        if len(items) > MAX_IN_ELEMENTS_OF_DELETE:
            raise analysis_error(f"Element num of in predicate should not be more than {MAX_IN_ELEMENTS_OF_DELETE}")
        if inner.args.get("query") is not None or not items or not all(_is_value(i) for i in items):
            raise analysis_error("Child of in predicate should be value")
        return [_Condition(col, Op.NOT_IN if negated else Op.IN, tuple(items))]
    raise analysis_error(ONLY_SIMPLE)


def _column(c: exp.Column, table: OlapTable, alias: str | None) -> Column:
    qualifier = c.table
    found = table.column(c.name)
    if found is None or (qualifier and qualifier not in (table.name, alias)):
        raise unknown_column(c.name, table.name)
    return found


def _text(v: object) -> str:
    """A converted value as Doris's LiteralExpr.getStringValue prints it."""
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, dt.datetime):
        return v.isoformat(sep=" ", timespec="microseconds" if v.microsecond else "seconds")
    if isinstance(v, dt.date):
        return v.isoformat()
    if isinstance(v, Decimal):
        return format(v, "f")
    return str(v)


def _sql(v: object) -> str:
    """A converted value as Doris's LiteralExpr.toSql prints it (IN lists)."""
    if v is None:
        return "NULL"
    if isinstance(v, str | dt.date):
        return "'" + _text(v).replace("'", "\\'") + "'"
    return _text(v)


def _condition_text(name: str, op: Op, values: tuple[object, ...]) -> str:
    if op in (Op.IS_NULL, Op.IS_NOT_NULL):
        return f"{name} {op.value.upper()}"
    if op in (Op.IN, Op.NOT_IN):
        return f"{name} {'NOT ' if op is Op.NOT_IN else ''}IN ({', '.join(_sql(v) for v in values)})"
    return f'{name} {_OP_NAMES[op]} "{"NULL" if values[0] is None else _text(values[0])}"'


def _convert(e: exp.Expression, column: Column, arrow_type: pa.DataType, ctx: QueryContext) -> object:
    """The literal in the column's type; None for NULL. Text for a DATE / DATETIME column is read as a
    date (a CAST, as Doris's DateLiteral reads it), so '2020-01-01' matches a DATETIME's midnight."""
    e = e.unnest()
    if isinstance(e, exp.Null):
        return None
    target = e
    if isinstance(e, exp.Literal) and e.is_string and (pa.types.is_date(arrow_type) or pa.types.is_timestamp(arrow_type)):
        target = exp.Cast(this=e.copy(), to=exp.DataType.build(column.type, dialect=_DIALECT))
    ok, value = literal_value(target, arrow_type, ctx)
    if not ok:
        shown = e.name if isinstance(e, exp.Literal) else e.sql(dialect=_DIALECT)
        raise analysis_error(f"Invalid column value[{shown}] for column {column.name}")
    return value


def _predicate_delete(s: st.Delete, source: OlapTableSource, explicit: list, ctx: QueryContext,
                      delete_without_partition: bool) -> PredicateDelete:
    table = source.table
    assert s.where is not None
    shaped = [c for conjunct in _conjuncts(s.where) for c in _shape(conjunct)]
    keys_only = table.keys_type != KEYS_DUP  # AGGREGATE, and UNIQUE here (merge-on-write is a key DELETE)
    predicates: list[ColumnPredicate] = []
    conditions: list[str] = []
    nothing = False
    for cond in shaped:
        column = _column(cond.column, table, s.alias)
        doris_type = parse_type(column.type)
        if doris_type.name in ("FLOAT", "DOUBLE"):
            raise analysis_error(f"Column[{column.name}] type is float or double.")
        if keys_only and not column.is_key:
            raise analysis_error("delete predicate on value column only supports Unique table with merge-on-write "
                                 f"enabled and Duplicate table, but Table[{table.name}] is an Aggregate table.")
        values = tuple(_convert(v, column, doris_type.arrow_type(), ctx) for v in cond.values)
        nothing |= cond.op in _COMPARISONS.values() and values[0] is None
        predicates.append(ColumnPredicate(column.name, cond.op, values))
        conditions.append(_condition_text(column.name, cond.op, values))
    _check_rollups(table, predicates)
    if explicit:
        chosen = explicit
    else:
        chosen = _infer_partitions(source, predicates, delete_without_partition)
    return PredicateDelete(
        table=table, partition_ids=tuple(p.partition_id for p in chosen), partition_names=tuple(p.name for p in chosen),
        no_partition_specified=not explicit, predicates=tuple(predicates), conditions=tuple(conditions),
        matches_nothing=nothing,
    )


def _check_rollups(table: OlapTable, predicates: list[ColumnPredicate]) -> None:
    """Every condition column must be in every rollup (a SHADOW one being built included): the DELETE
    version goes to their tablets too."""
    for index in table.indexes:
        if index.index_id == table.base_index_id:
            continue
        names = {c.name.lower() for c in index.columns}
        for p in predicates:
            if p.column.lower() not in names:
                raise analysis_error(f"Column[{p.column}] not exist in index {index.name}. "
                                     "maybe you need drop the corresponding materialized-view.")


def _infer_partitions(source: OlapTableSource, predicates: list[ColumnPredicate], without_partition: bool) -> list:
    table = source.table
    kind = table.partition_info.type.upper()
    if kind not in ("RANGE", "LIST"):
        return list(table.partitions)
    columns = {c.lower() for c in table.partition_info.columns}
    narrowing = [p for p in predicates if p.column.lower() in columns and p.op in _PARTITION_OPS]
    kept = set(select_partitions(source, narrowing)) if narrowing else set()
    if kept:
        return [p for p in table.partitions if p.partition_id in kept]
    if not without_partition:
        raise analysis_error("This is a range or list partitioned table. You should specify partition in delete "
                             "stmt, or set delete_without_partition to true")
    return list(table.partitions)
