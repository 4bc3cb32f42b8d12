"""Statements that make or rewrite a table from a query or another table: CREATE TABLE ... AS SELECT,
CREATE TABLE ... LIKE, UPDATE. INSERT OVERWRITE is an INSERT (server/session.py) whose publish replaces the
partitions' data (storage/catalog/store.py, Catalog.publish).

CTAS derives the columns from the query's result types (sql.types.doris_type_name: strings become
VARCHAR(65533), as Doris's use_max_length_of_varchar_in_ctas does) and the keys, distribution and properties
from the statement or Doris's defaults (planner/bind/create_table.py), then loads the rows as an INSERT; a
failed load drops the new table again. LIKE re-creates the source from its SHOW CREATE TABLE text (which
round-trips, tests/server/test_show_create.py) plus the rollups asked for. UPDATE of a UNIQUE KEY table
computes the changed rows as a query at the statement's snapshot and loads them: each row replaces the one
with its key, which is how Doris runs it.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from sqlglot import exp

from planner.bind.bind_update import bind_update
from server.results import OkResult, Result
from server.show_create import show_create_table
from sql import statements as st
from sql.errors import analysis_error
from sql.parse import parse
from sql.types import doris_type_name

if TYPE_CHECKING:
    from server.session import Session

_DIALECT = "dorislite"


def _result_columns(session: Session, s: st.CreateTable) -> tuple[st.ColumnDefinition, ...]:
    """The new table's columns: the query's result names (or the statement's list) and Doris types."""
    assert s.query is not None
    probe = exp.select("*").from_(exp.Subquery(this=s.query.copy(), alias=exp.to_identifier("ctas"))).limit(0)
    schema = session.run_query(probe).schema
    names = list(s.column_names) or schema.names
    if len(names) != len(schema):
        raise analysis_error("Number of columns don't equal number of SELECT statement's select list")
    columns = []
    for name, field in zip(names, schema, strict=True):
        type_name = doris_type_name(field.type)
        if type_name == "NULL_TYPE":
            type_name = "TINYINT"  # Doris types a bare NULL column TINYINT
        columns.append(st.ColumnDefinition(name=name, type=exp.DataType.build(type_name, dialect=_DIALECT),
                                           nullable=True))
    return tuple(columns)


def create_table_as_select(session: Session, s: st.CreateTable) -> Result:
    db = session.database_name(s.db)
    catalog = session.ctx.engine.catalog
    if catalog.get_table(db, s.name) is not None:
        if s.if_not_exists:
            return OkResult()
        raise analysis_error(f"Table '{s.name}' already exists", 1050, "42S01")
    table_statement = replace(s, columns=_result_columns(session, s), query=None, column_names=())
    session.dispatch(table_statement)
    try:
        return session.dispatch(st.Insert(db=db, table=s.name, query=s.query))
    except BaseException:
        catalog.drop_table(db, s.name, if_exists=True)  # CTAS is all or nothing, as in Doris
        raise


def create_table_like(session: Session, s: st.CreateTableLike) -> Result:
    db = session.database_name(s.db)
    source = session.ctx.engine.catalog.get_table(session.database_name(s.source_db), s.source)
    if source is None:
        raise analysis_error(f"Unknown table '{s.source}'", 1051, "42S02")
    rollups = {i.name.lower(): i for i in source.visible_indexes() if i.index_id != source.base_index_id}
    wanted = list(rollups) if s.rollups == () else [r.lower() for r in s.rollups or ()]
    for name in wanted:
        if name not in rollups:
            raise analysis_error(f"Rollup index[{name}] not exists in Table[{source.name}]")
    (statement,) = parse(show_create_table(source))
    assert isinstance(statement, st.CreateTable)
    copies = tuple(st.RollupDesc(rollups[n].name, tuple(c.name for c in rollups[n].columns)) for n in wanted)
    return session.dispatch(replace(statement, db=db, name=s.name, if_not_exists=s.if_not_exists,
                                    rollups=copies))


def update(session: Session, s: st.Update) -> Result:
    table = session.table(s.db, s.table)
    query = bind_update(s, table, session.database_name(s.db))
    rows = session.run_query(query)
    if rows.num_rows == 0:
        return OkResult(affected_rows=0)
    return session.insert(st.Insert(db=s.db, table=table.name, query=query), rows)


SESSION_HANDLERS = {st.CreateTableLike: create_table_like, st.Update: update}
