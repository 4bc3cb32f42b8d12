"""Statements sqlglot cannot read, parsed from the statement text into typed statement objects: account
statements (CREATE USER, GRANT ...), ALTER TABLE column clauses, EXPORT TABLE, LOAD LABEL and resources, and the
INTO OUTFILE tail of a query."""

from __future__ import annotations

from sqlglot import exp


def condition(text: str) -> exp.Expression:
    """A WHERE condition written inside a statement read from text, parsed as a query's (syntax errors are 1064)."""
    from sql import statements as st
    from sql.parse import parse  # imported here: sql.parse imports these modules

    [query] = parse(f"SELECT * FROM t WHERE {text}")
    assert isinstance(query, st.Query)
    return query.expression.args["where"].this
