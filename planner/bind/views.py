"""Views: what CREATE VIEW stores (its query with every table named with its database, so the view reads the
same tables from any current database) and how a FROM item that names a view is expanded (a derived table
over the stored query, its columns renamed as the view lists them)."""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from sql.dialect import DorisLite
from sql.errors import analysis_error

_DIALECT = DorisLite()
MAX_VIEW_DEPTH = 32  # views over views, as deep as this


@dataclass(frozen=True)
class ViewDefinition:
    name: str
    query: str  # SQL text (DorisLite dialect)
    columns: tuple[str, ...] = ()


def qualified_query(query: exp.Expression, db: str) -> exp.Expression:
    """`query` with each table reference that is not a CTE given database `db` when it names none."""
    query = query.copy()
    ctes = {cte.alias.lower() for cte in query.find_all(exp.CTE)}
    for table in query.find_all(exp.Table):
        if not table.args.get("db") and table.name and table.name.lower() not in ctes \
                and not (table.name.lower() == "dual" and not table.this.quoted) and isinstance(table.this, exp.Identifier):
            table.set("db", exp.to_identifier(db))
    return query


def view_sql(query: exp.Expression) -> str:
    return query.sql(dialect=_DIALECT)


def parse_view(view: ViewDefinition, depth: int) -> exp.Expression:
    if depth > MAX_VIEW_DEPTH:
        raise analysis_error(f"View '{view.name}' is nested more than {MAX_VIEW_DEPTH} views deep (or refers to "
                             "itself)")
    (query,) = _DIALECT.parse(view.query)
    return query


def check_view_columns(view_columns: tuple[str, ...], query_columns: list[str]) -> None:
    if view_columns and len(view_columns) != len(query_columns):
        raise analysis_error("The number of columns in the view definition doesn't match the number of columns "
                             "of its query", 1353, "HY000")
    names = [c.lower() for c in (view_columns or tuple(query_columns))]
    duplicate = next((n for i, n in enumerate(names) if n in names[:i]), None)
    if duplicate is not None:
        raise analysis_error(f"Duplicate column name '{duplicate}'", 1060, "42S21")
