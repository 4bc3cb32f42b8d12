"""UPDATE: Doris's rules and messages, and the query whose rows replace the updated ones.

Doris runs `UPDATE t SET c = e ... [FROM ...] WHERE ...` on a UNIQUE KEY table as an insert of the matched
rows with the new values: the SELECT built here reads every column of the target (the assigned ones as their
expressions) at the statement's snapshot; loading its rows replaces each matched row by its key.
"""

from __future__ import annotations

from sqlglot import exp

from planner.bind.bind_delete import join_relations
from planner.bind.scope import unknown_column
from sql import statements as st
from sql.errors import analysis_error
from storage.catalog.model import KEYS_UNIQUE, OlapTable


def bind_update(s: st.Update, table: OlapTable, db: str) -> exp.Select:
    if table.keys_type != KEYS_UNIQUE:
        raise analysis_error("Only unique table could be updated.")
    by_name = {c.name.lower(): c for c in table.columns}
    assigned: dict[str, exp.Expression] = {}
    for name, value in s.assignments:
        column = by_name.get(name.lower())
        if column is None:
            raise unknown_column(name, table.name)
        if column.is_key:
            raise analysis_error("Only value columns of unique table could be updated")
        if column.generated is not None:
            raise analysis_error(f"The value specified for generated column '{column.name}' in table "
                                 f"'{table.name}' is not allowed.")
        if column.name.lower() in assigned:
            raise analysis_error(f"Column '{column.name}' specified twice", 1110, "42000")
        assigned[column.name.lower()] = value
    qualifier = s.alias or table.name
    target = exp.Table(this=exp.to_identifier(table.name), db=exp.to_identifier(db))
    if s.alias:
        target.set("alias", exp.TableAlias(this=exp.to_identifier(s.alias)))
    items = [exp.alias_(assigned[c.name.lower()].copy(), c.name) if c.name.lower() in assigned
             else exp.column(c.name, table=qualifier) for c in table.columns]
    query = join_relations(exp.Select(expressions=items).from_(target), s.sources)
    return query.where(s.where.copy()) if s.where is not None else query
