"""CREATE / ALTER / DROP VIEW, SHOW CREATE VIEW, and what SHOW TABLES, DESC and information_schema say of
views. The catalog keeps them (storage/catalog/views.py); the planner expands them (planner/bind/views.py).

A view's query is checked when it is created or altered, as Doris does: its tables and columns must exist,
and its column list, if given, must match the query's columns.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from planner.bind.views import ViewDefinition, check_view_columns, qualified_query, view_sql
from planner.query import plan_query
from server import show
from server.results import OkResult, Result, ResultSet, StatementError
from sql import statements as st
from sql.types import doris_type_name

if TYPE_CHECKING:
    from server.session import Session
    from storage.catalog.views import View

SHOW_CREATE_VIEW_COLUMNS = ["View", "Create View", "character_set_client", "collation_connection"]


def view_definition(view: View) -> ViewDefinition:
    return ViewDefinition(view.name, view.definition, view.columns)


def _checked_definition(session: Session, db: str, query: exp.Expression, columns: tuple[str, ...]) -> str:
    """The query as stored: tables named with their databases, after binding it once (unknown tables or
    columns, a column count that does not match the view's column list, are errors now, not at use)."""
    qualified = qualified_query(query, db)
    bound = plan_query(qualified, session.query_context())
    check_view_columns(columns, bound.names)
    return view_sql(qualified)


def create_view(session: Session, s: st.CreateView) -> Result:
    db = session.database_name(s.db)
    definition = _checked_definition(session, db, s.query, s.columns)
    with session.ctx.ddl_lock:
        session.ctx.engine.catalog.create_view(db, s.name, definition, s.columns, s.comment,
                                               or_replace=s.or_replace, if_not_exists=s.if_not_exists)
    return OkResult()


def alter_view(session: Session, s: st.AlterView) -> Result:
    db = session.database_name(s.db)
    if session.ctx.engine.catalog.get_view(db, s.name) is None:
        raise StatementError(f"errCode = 2, detailMessage = Unknown view '{s.name}'", 1146, "42S02")
    definition = _checked_definition(session, db, s.query, s.columns)
    with session.ctx.ddl_lock:
        session.ctx.engine.catalog.alter_view(db, s.name, definition, s.columns)
    return OkResult()


def drop_view(session: Session, s: st.DropView) -> Result:
    db = session.database_name(s.db)
    with session.ctx.ddl_lock:
        session.ctx.engine.catalog.drop_view(db, s.name, s.if_exists)
    return OkResult()


def create_text(view: View) -> str:
    columns = f" ({', '.join(f'`{c}`' for c in view.columns)})" if view.columns else ""
    return f"CREATE VIEW `{view.name}`{columns} COMMENT '{view.comment or 'VIEW'}' AS {view.definition}"


def show_create_view(session: Session, db: str | None, name: str) -> Result | None:
    """SHOW CREATE VIEW (and SHOW CREATE TABLE of a view); None when `name` is no view."""
    view = session.ctx.engine.catalog.get_view(session.database_name(db), name)
    if view is None:
        return None
    return ResultSet(show.string_table(SHOW_CREATE_VIEW_COLUMNS,
                                       [(view.name, create_text(view), "utf8mb4", "utf8mb4_0900_bin")]))


def describe_view(session: Session, db: str, view: View) -> Result:
    """DESC v: the view's columns with the types its query gives them (the query run for no rows)."""
    query = exp.select("*").from_(exp.Table(this=exp.to_identifier(view.name), db=exp.to_identifier(db))).limit(0)
    result = session.run_query(query)
    rows = [(f.name, doris_type_name(f.type), "Yes", "false", None, "") for f in result.schema]
    return ResultSet(show.string_table(["Field", "Type", "Null", "Key", "Default", "Extra"], rows))


SESSION_HANDLERS = {st.CreateView: create_view, st.AlterView: alter_view, st.DropView: drop_view}
