"""A real storage engine + catalog for planner-level rollup tests: CREATE TABLE text -> table, rollups
made with `Catalog.add_index` on the empty table (loads then write every index), queries and EXPLAIN
through the planner with session variables of the test's choosing."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pyarrow as pa
import sqlglot

from planner.bind.create_table import bind_create_table, default_duplicate_keys, short_key_column_count
from planner.context import QueryContext
from planner.explain import explain_query
from planner.olap_source import OlapTableSource, arrow_schema
from planner.query import execute_query
from sql.errors import SqlError
from sql.parse import parse
from sql.types import parse_type
from storage.catalog.model import KEYS_DUP
from storage.engine import StorageEngine

DB = "db"


class Harness:
    def __init__(self, root: Path) -> None:
        self.engine = StorageEngine(root)
        self.engine.open()
        self.engine.catalog.create_database(DB)
        self.variables: dict[str, Any] = {"sql_mode": "ONLY_FULL_GROUP_BY"}

    def close(self) -> None:
        self.engine.close()

    def create(self, ddl: str, rollups: Sequence[tuple[str, Sequence[str]]] = ()) -> None:
        (stmt,) = parse(ddl)
        spec = bind_create_table(stmt)
        table = self.engine.catalog.create_table(DB, spec)
        assert table is not None
        for name, cols in rollups:
            columns = [table.column(c) for c in cols]
            if table.keys_type == KEYS_DUP:  # a DUPLICATE rollup's keys follow the default prefix rule
                keys = set(default_duplicate_keys([(c.name, parse_type(c.type)) for c in columns]))
                columns = [replace(c, is_key=c.name in keys, aggregation=None if c.name in keys else c.aggregation)
                           for c in columns]
            keys = [parse_type(c.type) for c in columns if c.is_key]  # type: ignore[union-attr]
            self.engine.catalog.add_index(table.table_id, name, columns, max(1, short_key_column_count(keys)))

    def table(self, name: str):  # noqa: ANN201
        table = self.engine.catalog.get_table(DB, name)
        if table is None:
            raise SqlError(f"Table '{DB}.{name}' doesn't exist", 1146, "42S02")
        return table

    def load(self, name: str, rows: pa.Table | Sequence[tuple]) -> None:
        table = self.table(name)
        schema = arrow_schema(table)
        data = rows if isinstance(rows, pa.Table) else pa.Table.from_pylist(
            [dict(zip(schema.names, r, strict=True)) for r in rows], schema=schema)
        self.engine.load(table, data.cast(schema))

    def ctx(self, **variables: Any) -> QueryContext:
        values = {**self.variables, **variables}

        def resolve(db: str | None, name: str) -> OlapTableSource:
            return OlapTableSource(self.engine, self.table(name), db_name=db or DB)

        def var(scope: str, name: str) -> Any:
            if name.lower() not in values:
                raise SqlError(f"Unknown system variable '{name}'", 1193, "HY000")
            return values[name.lower()]

        return QueryContext(DB, resolve, var)

    def query(self, sql: str, **variables: Any) -> pa.Table:
        return execute_query(sqlglot.parse_one(sql, read="doris"), self.ctx(**variables))

    def explain(self, sql: str, level: str | None = None, **variables: Any) -> list[str]:
        return explain_query(sqlglot.parse_one(sql, read="doris"), self.ctx(**variables), level)
