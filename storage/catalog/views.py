"""Views in the catalog (Doris's View: a name, its query text and optional column names, in a database).

A view shares its database's namespace with the tables, as in Doris: CREATE TABLE and CREATE VIEW refuse a
name the other holds. The definition is stored as the query text the planner expands (its table names
qualified with their databases when the view was made, so it reads the same tables whatever the current
database is). `ViewCatalog` is a mixin of `storage.catalog.store.Catalog`.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from storage.errors import doris_error

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

VIEW_SCHEMA = """
CREATE TABLE IF NOT EXISTS views (
    view_id INTEGER PRIMARY KEY, db_id INTEGER NOT NULL, name TEXT NOT NULL, definition TEXT NOT NULL,
    columns TEXT NOT NULL, comment TEXT NOT NULL, create_time REAL NOT NULL, update_time REAL NOT NULL,
    UNIQUE (db_id, name))
"""


@dataclass(frozen=True)
class View:
    view_id: int
    db_id: int
    name: str
    definition: str  # the SELECT, as SQL text
    columns: tuple[str, ...]  # names given with CREATE VIEW v (a, b ...); () when the query's own
    comment: str
    create_time: float
    update_time: float


def _view_from(r: sqlite3.Row) -> View:
    return View(r["view_id"], r["db_id"], r["name"], r["definition"], tuple(json.loads(r["columns"])),
                r["comment"], r["create_time"], r["update_time"])


def name_taken(c: sqlite3.Connection, db_id: int, name: str) -> str | None:
    """'table' or 'view' when the database already holds that name."""
    if c.execute("SELECT 1 FROM tables WHERE db_id = ? AND name = ?", (db_id, name)).fetchone():
        return "table"
    if c.execute("SELECT 1 FROM views WHERE db_id = ? AND name = ?", (db_id, name)).fetchone():
        return "view"
    return None


class ViewCatalog:
    """Views (mixed into Catalog)."""

    if TYPE_CHECKING:  # provided by Catalog
        def _read(self) -> AbstractContextManager[sqlite3.Connection]: ...
        def _write(self) -> AbstractContextManager[sqlite3.Connection]: ...
        def _db_id(self, c: sqlite3.Connection, db_name: str) -> int: ...
        @staticmethod
        def _allocate(c: sqlite3.Connection, n: int = 1, counter: str = "id") -> int: ...
        @property
        def generation(self) -> int | None: ...

    def create_view(self, db_name: str, name: str, definition: str, columns: Sequence[str], comment: str = "",
                    *, or_replace: bool = False, if_not_exists: bool = False) -> View | None:
        with self._write() as c:
            db_id = self._db_id(c, db_name)
            taken = name_taken(c, db_id, name)
            if taken == "table":
                raise doris_error(f"Table '{name}' already exists", 1050, "42S01")
            if taken == "view":
                if if_not_exists:
                    return None
                if not or_replace:
                    raise doris_error(f"Table '{name}' already exists", 1050, "42S01")
                c.execute("UPDATE views SET definition = ?, columns = ?, comment = ?, update_time = ? "
                          "WHERE db_id = ? AND name = ?", (definition, json.dumps(list(columns)), comment,
                                                           time.time(), db_id, name))
            else:
                now = time.time()
                c.execute("INSERT INTO views VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                          (self._allocate(c), db_id, name, definition, json.dumps(list(columns)), comment, now, now))
            return _view_from(c.execute("SELECT * FROM views WHERE db_id = ? AND name = ?", (db_id, name)).fetchone())

    def alter_view(self, db_name: str, name: str, definition: str, columns: Sequence[str]) -> View:
        with self._write() as c:
            db_id = self._db_id(c, db_name)
            if name_taken(c, db_id, name) != "view":
                raise doris_error(f"Unknown view '{name}'", 1146, "42S02")
            c.execute("UPDATE views SET definition = ?, columns = ?, update_time = ? WHERE db_id = ? AND name = ?",
                      (definition, json.dumps(list(columns)), time.time(), db_id, name))
            return _view_from(c.execute("SELECT * FROM views WHERE db_id = ? AND name = ?", (db_id, name)).fetchone())

    def drop_view(self, db_name: str, name: str, if_exists: bool = False) -> None:
        with self._write() as c:
            db_id = self._db_id(c, db_name)
            if c.execute("DELETE FROM views WHERE db_id = ? AND name = ?", (db_id, name)).rowcount == 0 \
                    and not if_exists:
                raise doris_error(f"Unknown view '{name}'", 1051, "42S02")

    def view_names(self, db_name: str) -> frozenset[str]:
        """The database's view names, remembered until the catalog changes: every table a query names is
        looked up here first."""
        generation = self.generation
        cached = self.__dict__.setdefault("_view_names", {})
        hit = cached.get(db_name)
        if hit is not None and generation is not None and hit[0] == generation:
            return hit[1]
        with self._read() as c:
            row = c.execute("SELECT db_id FROM databases WHERE name = ?", (db_name,)).fetchone()
            names = frozenset() if row is None else frozenset(
                r[0] for r in c.execute("SELECT name FROM views WHERE db_id = ?", (row[0],)))
        if generation is not None:
            cached[db_name] = (generation, names)
        return names

    def get_view(self, db_name: str, name: str) -> View | None:
        with self._read() as c:
            db_id = self._db_id(c, db_name)
            row = c.execute("SELECT * FROM views WHERE db_id = ? AND name = ?", (db_id, name)).fetchone()
        return None if row is None else _view_from(row)

    def list_views(self, db_name: str) -> list[View]:
        with self._read() as c:
            db_id = self._db_id(c, db_name)
            rows = c.execute("SELECT * FROM views WHERE db_id = ? ORDER BY name", (db_id,)).fetchall()
        return [_view_from(r) for r in rows]
