"""What Spark-side code (data source planning, tasks, a user's PySpark) needs to find a dorislite table
without a running StorageEngine: a read-only catalog, the table, and its Arrow schema.

The catalog is opened with SQLite's `mode=ro` URI, so reading next to a running server never takes a
write lock or changes the database; WAL mode gives a consistent snapshot per statement.
"""

from __future__ import annotations

import base64
import json
import re
import sqlite3
import threading
from pathlib import Path

import pyarrow as pa

from storage.catalog.model import OlapTable
from storage.catalog.store import Catalog
from storage.engine import StorageEngine
from storage.errors import StorageError
from storage.segment.reader import SegmentReader


def open_catalog_read_only(root: Path | str) -> Catalog:
    """A Catalog over `<root>/catalog.db` that can only read. Built around Catalog's own query methods
    (one implementation of the catalog's reads) with a read-only connection instead of its writer."""
    path = Path(root) / "catalog.db"
    if not path.exists():
        raise StorageError(f"no dorislite catalog at {path}")
    catalog = Catalog.__new__(Catalog)
    catalog.root = Path(root)
    catalog.path = path
    catalog._lock = threading.RLock()
    catalog._conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, isolation_level=None,
                                    check_same_thread=False)
    catalog._conn.row_factory = sqlite3.Row
    catalog._tablet_drop_listeners = []
    catalog._init_caches(caching=False)
    return catalog


def read_only_engine(root: Path | str) -> StorageEngine:
    """A StorageEngine for scans only: creates nothing, recovers nothing, writes nothing."""
    return StorageEngine(Path(root), catalog=open_catalog_read_only(root))


def find_table(catalog: Catalog, database: str, table: str) -> OlapTable:
    found = catalog.get_table(database, table)
    if found is None:
        raise StorageError(f"Unknown table '{database}.{table}'")
    return found


# ------------------------------------------------------------------ the "schema" option

_DECIMAL = re.compile(r"decimal(?:128)?\((\d+),\s*(-?\d+)\)")
_TIMESTAMP = re.compile(r"timestamp\[(s|ms|us|ns)(?:,\s*tz=(.+))?\]")


def encode_schema(schema: pa.Schema) -> str:
    """The "schema" option's value: an Arrow IPC-serialized schema, base64."""
    return base64.b64encode(schema.serialize().to_pybytes()).decode("ascii")


def _parse_type(text: str) -> pa.DataType:
    text = text.strip()
    m = _DECIMAL.fullmatch(text)
    if m:
        return pa.decimal128(int(m.group(1)), int(m.group(2)))
    m = _TIMESTAMP.fullmatch(text)
    if m:
        return pa.timestamp(m.group(1), m.group(2))
    try:
        return pa.type_for_alias(text)
    except ValueError:
        raise StorageError(f"unknown Arrow type {text!r} in the schema option") from None


def decode_schema(text: str) -> pa.Schema:
    """Accepts base64 IPC (encode_schema) or JSON [[name, "arrow type"], ...] ("int32", "decimal128(10, 2)",
    "timestamp[us]", "date32", "string" ...)."""
    text = text.strip()
    if text.startswith("["):
        return pa.schema([pa.field(name, _parse_type(t)) for name, t in json.loads(text)])
    return pa.ipc.read_schema(pa.py_buffer(base64.b64decode(text)))


def table_schema(engine: StorageEngine, table: OlapTable, option: str | None) -> pa.Schema:
    """The base columns' Arrow schema: from the option when given, else from any base-index segment on
    disk (segments store their Arrow schema), else an error asking for the option."""
    if option:
        schema = decode_schema(option)
    else:
        schema = None
        for tablet in engine.catalog.tablets(table.table_id, index_id=table.base_index_id):
            for rs in engine.catalog.all_rowsets(tablet.tablet_id):
                paths = [p for p in engine.segment_paths(rs) if p.exists()]
                if paths:
                    schema = SegmentReader(paths[0]).footer.schema
                    break
            if schema is not None:
                break
        if schema is None:
            raise StorageError(f"table {table.name} has no data to take its Arrow types from: pass the "
                               "'schema' option")
    by_lower = {f.name.lower(): f for f in schema}
    try:
        return pa.schema([pa.field(c.name, by_lower[c.name.lower()].type, True) for c in table.columns])
    except KeyError as e:
        raise StorageError(f"schema option has no column {e.args[0]}") from None
