"""information_schema (and the few mysql.* tables JDBC drivers read) as Arrow tables built from the catalog.

BI tools introspect through these; they are small, so they are materialised per query.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime

import pyarrow as pa

from planner.olap_source import predicate_text
from planner.scan_log import SCAN_LOG
from sql.types import parse_type
from storage.catalog.model import KEYS_AGG, OlapTable
from storage.catalog.store import Catalog
from storage.catalog.views import View

S = pa.string()
INT = pa.int64()
T = pa.timestamp("us")

SCHEMAS: dict[str, list[tuple[str, pa.DataType]]] = {
    "schemata": [("CATALOG_NAME", S), ("SCHEMA_NAME", S), ("DEFAULT_CHARACTER_SET_NAME", S),
                 ("DEFAULT_COLLATION_NAME", S), ("SQL_PATH", S)],
    "tables": [("TABLE_CATALOG", S), ("TABLE_SCHEMA", S), ("TABLE_NAME", S), ("TABLE_TYPE", S),
               ("ENGINE", S), ("VERSION", INT), ("ROW_FORMAT", S), ("TABLE_ROWS", INT), ("AVG_ROW_LENGTH", INT),
               ("DATA_LENGTH", INT), ("MAX_DATA_LENGTH", INT), ("INDEX_LENGTH", INT), ("DATA_FREE", INT),
               ("AUTO_INCREMENT", INT), ("CREATE_TIME", T), ("UPDATE_TIME", T), ("CHECK_TIME", T),
               ("TABLE_COLLATION", S), ("CHECKSUM", INT), ("CREATE_OPTIONS", S), ("TABLE_COMMENT", S)],
    "columns": [("TABLE_CATALOG", S), ("TABLE_SCHEMA", S), ("TABLE_NAME", S), ("COLUMN_NAME", S),
                ("ORDINAL_POSITION", INT), ("COLUMN_DEFAULT", S), ("IS_NULLABLE", S), ("DATA_TYPE", S),
                ("CHARACTER_MAXIMUM_LENGTH", INT), ("CHARACTER_OCTET_LENGTH", INT), ("NUMERIC_PRECISION", INT),
                ("NUMERIC_SCALE", INT), ("DATETIME_PRECISION", INT), ("CHARACTER_SET_NAME", S),
                ("COLLATION_NAME", S), ("COLUMN_TYPE", S), ("COLUMN_KEY", S), ("EXTRA", S),
                ("PRIVILEGES", S), ("COLUMN_COMMENT", S), ("COLUMN_SIZE", INT), ("DECIMAL_DIGITS", INT),
                ("GENERATION_EXPRESSION", S), ("SRS_ID", INT)],
    "statistics": [("TABLE_CATALOG", S), ("TABLE_SCHEMA", S), ("TABLE_NAME", S), ("NON_UNIQUE", INT),
                   ("INDEX_SCHEMA", S), ("INDEX_NAME", S), ("SEQ_IN_INDEX", INT), ("COLUMN_NAME", S),
                   ("COLLATION", S), ("CARDINALITY", INT), ("SUB_PART", INT), ("PACKED", S), ("NULLABLE", S),
                   ("INDEX_TYPE", S), ("COMMENT", S), ("INDEX_COMMENT", S), ("EXPRESSION", S)],
    "key_column_usage": [("CONSTRAINT_CATALOG", S), ("CONSTRAINT_SCHEMA", S), ("CONSTRAINT_NAME", S),
                         ("TABLE_CATALOG", S), ("TABLE_SCHEMA", S), ("TABLE_NAME", S), ("COLUMN_NAME", S),
                         ("ORDINAL_POSITION", INT), ("POSITION_IN_UNIQUE_CONSTRAINT", INT),
                         ("REFERENCED_TABLE_SCHEMA", S), ("REFERENCED_TABLE_NAME", S),
                         ("REFERENCED_COLUMN_NAME", S)],
    "referential_constraints": [("CONSTRAINT_CATALOG", S), ("CONSTRAINT_SCHEMA", S), ("CONSTRAINT_NAME", S),
                                ("UNIQUE_CONSTRAINT_CATALOG", S), ("UNIQUE_CONSTRAINT_SCHEMA", S),
                                ("UNIQUE_CONSTRAINT_NAME", S), ("MATCH_OPTION", S), ("UPDATE_RULE", S),
                                ("DELETE_RULE", S), ("TABLE_NAME", S), ("REFERENCED_TABLE_NAME", S)],
    "partitions": [("TABLE_CATALOG", S), ("TABLE_SCHEMA", S), ("TABLE_NAME", S), ("PARTITION_NAME", S),
                   ("SUBPARTITION_NAME", S), ("PARTITION_ORDINAL_POSITION", INT),
                   ("SUBPARTITION_ORDINAL_POSITION", INT), ("PARTITION_METHOD", S), ("SUBPARTITION_METHOD", S),
                   ("PARTITION_EXPRESSION", S), ("SUBPARTITION_EXPRESSION", S), ("PARTITION_DESCRIPTION", S),
                   ("TABLE_ROWS", INT), ("AVG_ROW_LENGTH", INT), ("DATA_LENGTH", INT), ("MAX_DATA_LENGTH", INT),
                   ("INDEX_LENGTH", INT), ("DATA_FREE", INT), ("CREATE_TIME", T), ("UPDATE_TIME", T),
                   ("CHECK_TIME", T), ("CHECKSUM", INT), ("PARTITION_COMMENT", S), ("NODEGROUP", S),
                   ("TABLESPACE_NAME", S)],
    "routines": [(n, S) for n in (
        "SPECIFIC_NAME", "ROUTINE_CATALOG", "ROUTINE_SCHEMA", "ROUTINE_NAME", "ROUTINE_TYPE", "DATA_TYPE",
        "CHARACTER_MAXIMUM_LENGTH", "CHARACTER_OCTET_LENGTH", "NUMERIC_PRECISION", "NUMERIC_SCALE",
        "DATETIME_PRECISION", "CHARACTER_SET_NAME", "COLLATION_NAME", "DTD_IDENTIFIER", "ROUTINE_BODY",
        "ROUTINE_DEFINITION", "EXTERNAL_NAME", "EXTERNAL_LANGUAGE", "PARAMETER_STYLE", "IS_DETERMINISTIC",
        "SQL_DATA_ACCESS", "SQL_PATH", "SECURITY_TYPE", "CREATED", "LAST_ALTERED", "SQL_MODE",
        "ROUTINE_COMMENT", "DEFINER", "CHARACTER_SET_CLIENT", "COLLATION_CONNECTION", "DATABASE_COLLATION")],
    "triggers": [(n, S) for n in (
        "TRIGGER_CATALOG", "TRIGGER_SCHEMA", "TRIGGER_NAME", "EVENT_MANIPULATION", "EVENT_OBJECT_CATALOG",
        "EVENT_OBJECT_SCHEMA", "EVENT_OBJECT_TABLE", "ACTION_ORDER", "ACTION_CONDITION", "ACTION_STATEMENT",
        "ACTION_ORIENTATION", "ACTION_TIMING", "ACTION_REFERENCE_OLD_TABLE", "ACTION_REFERENCE_NEW_TABLE",
        "ACTION_REFERENCE_OLD_ROW", "ACTION_REFERENCE_NEW_ROW", "CREATED", "SQL_MODE", "DEFINER",
        "CHARACTER_SET_CLIENT", "COLLATION_CONNECTION", "DATABASE_COLLATION")],
    "views": [(n, S) for n in ("TABLE_CATALOG", "TABLE_SCHEMA", "TABLE_NAME", "VIEW_DEFINITION",
                               "CHECK_OPTION", "IS_UPDATABLE", "DEFINER", "SECURITY_TYPE",
                               "CHARACTER_SET_CLIENT", "COLLATION_CONNECTION")],
    "files": [(n, S) for n in ("FILE_ID", "FILE_NAME", "FILE_TYPE", "TABLESPACE_NAME", "TABLE_CATALOG",
                               "TABLE_SCHEMA", "TABLE_NAME", "LOGFILE_GROUP_NAME", "LOGFILE_GROUP_NUMBER",
                               "ENGINE", "FULLTEXT_KEYS", "DELETED_ROWS", "UPDATE_COUNT", "FREE_EXTENTS",
                               "TOTAL_EXTENTS", "EXTENT_SIZE", "INITIAL_SIZE", "MAXIMUM_SIZE",
                               "AUTOEXTEND_SIZE", "CREATION_TIME", "LAST_UPDATE_TIME", "LAST_ACCESS_TIME",
                               "RECOVER_TIME", "TRANSACTION_COUNTER", "VERSION", "ROW_FORMAT", "TABLE_ROWS",
                               "AVG_ROW_LENGTH", "DATA_LENGTH", "MAX_DATA_LENGTH", "INDEX_LENGTH",
                               "DATA_FREE", "CREATE_TIME", "UPDATE_TIME", "CHECK_TIME", "CHECKSUM",
                               "STATUS", "EXTRA")],
    "engines": [("ENGINE", S), ("SUPPORT", S), ("COMMENT", S), ("TRANSACTIONS", S), ("XA", S),
                ("SAVEPOINTS", S)],
    "character_sets": [("CHARACTER_SET_NAME", S), ("DEFAULT_COLLATE_NAME", S), ("DESCRIPTION", S),
                       ("MAXLEN", INT)],
    "collations": [("COLLATION_NAME", S), ("CHARACTER_SET_NAME", S), ("ID", INT), ("IS_DEFAULT", S),
                   ("IS_COMPILED", S), ("SORTLEN", INT)],
    "keywords": [("WORD", S), ("RESERVED", INT)],
    "table_constraints": [("CONSTRAINT_CATALOG", S), ("CONSTRAINT_SCHEMA", S), ("CONSTRAINT_NAME", S),
                          ("TABLE_SCHEMA", S), ("TABLE_NAME", S), ("CONSTRAINT_TYPE", S), ("ENFORCED", S)],
    # dorislite's: the rollup advisor's scan log (planner/scan_log.py), newest last
    "rollup_candidates": [("TIME", T), ("TABLE_SCHEMA", S), ("TABLE_NAME", S), ("INDEX_NAME", S), ("FILTERS", S),
                          ("GROUP_BY", S), ("AGGREGATES", S), ("COLUMNS_READ", S), ("ROWS_READ", INT),
                          ("SCAN_MS", pa.float64()), ("STATEMENT", S)],
    "proc": [("db", S), ("name", S), ("type", S), ("specific_name", S), ("language", S),
             ("sql_data_access", S), ("is_deterministic", S), ("security_type", S), ("param_list", S),
             ("returns", S), ("body", S), ("definer", S), ("created", T), ("modified", T),
             ("sql_mode", S), ("comment", S)],
}

ENGINES = [("OLAP", "DEFAULT", "Doris's columnar storage engine", "NO", "NO", "NO")]
CHARSETS = [("utf8mb4", "utf8mb4_0900_bin", "UTF-8 Unicode", 4), ("utf8", "utf8_general_ci", "UTF-8 Unicode", 3)]
COLLATIONS = [("utf8mb4_0900_bin", "utf8mb4", 309, "Yes", "Yes", 1), ("utf8_general_ci", "utf8", 33, "Yes", "Yes", 1)]


def _ts(seconds: float) -> datetime | None:
    return datetime.fromtimestamp(seconds) if seconds else None


def _table(name: str, rows: Iterable[tuple]) -> pa.Table:
    fields = SCHEMAS[name]
    cols = list(zip(*rows, strict=True)) if rows else [[] for _ in fields]
    if not cols:
        cols = [[] for _ in fields]
    return pa.table({f: pa.array(list(c), type=t) for (f, t), c in zip(fields, cols, strict=True)})


def column_facts(type_text: str) -> dict:
    """DATA_TYPE / lengths / precision as MySQL's information_schema.COLUMNS reports them."""
    t = parse_type(type_text)
    data_type = {"STRING": "varchar", "LARGEINT": "bigint unsigned", "BOOLEAN": "tinyint"}.get(
        t.name, t.name.lower()
    )
    char_len = t.length if t.is_string else None
    precision = {"TINYINT": 3, "SMALLINT": 5, "INT": 10, "BIGINT": 19, "LARGEINT": 39, "FLOAT": 12,
                 "DOUBLE": 22, "BOOLEAN": 1}.get(t.name)
    scale = 0 if t.is_integer or t.name == "BOOLEAN" else None
    if t.name == "DECIMAL":
        precision, scale = t.precision, t.scale
    return {
        "data_type": data_type,
        "column_type": t.sql(),
        "char_len": char_len,
        "octet_len": char_len * 4 if char_len is not None else None,
        "precision": precision,
        "scale": scale,
        "datetime_precision": t.precision if t.name == "DATETIME" else (0 if t.name == "DATE" else None),
        "charset": "utf8mb4" if t.is_string else None,
        "collation": "utf8mb4_0900_bin" if t.is_string else None,
    }


class InformationSchema:
    """Builds each virtual table on demand from a catalog snapshot."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self.builders: dict[str, Callable[[], pa.Table]] = {
            "schemata": self._schemata,
            "tables": self._tables,
            "columns": self._columns,
            "statistics": self._statistics,
            "key_column_usage": self._key_column_usage,
            "partitions": self._partitions,
            "views": self._views,
            "rollup_candidates": self._rollup_candidates,
            "engines": lambda: _table("engines", ENGINES),
            "character_sets": lambda: _table("character_sets", CHARSETS),
            "collations": lambda: _table("collations", COLLATIONS),
        }

    def table(self, name: str) -> pa.Table | None:
        key = name.lower()
        if key in self.builders:
            return self.builders[key]()
        if key in SCHEMAS and key != "proc":
            return _table(key, [])
        return None

    def table_names(self) -> list[str]:
        return sorted(n.upper() for n in SCHEMAS if n != "proc")

    def _all_tables(self) -> Iterable[tuple[str, OlapTable]]:
        for db in self.catalog.list_databases():
            for table in self.catalog.list_tables(db.name):
                yield db.name, table

    def _schemata(self) -> pa.Table:
        names = ["information_schema"] + [d.name for d in self.catalog.list_databases()]
        return _table("schemata", [("def", n, "utf8mb4", "utf8mb4_0900_bin", None) for n in names])

    def _tables(self) -> pa.Table:
        rows = [("def", "information_schema", n, "SYSTEM VIEW", None, 10, "Dynamic", None, None, None,
                 None, None, None, None, None, None, None, "utf8mb4_0900_bin", None, "", "")
                for n in self.table_names()]
        for db, t in self._all_tables():
            rows_count = sum(p.row_count for p in t.partitions)
            size = sum(p.data_size for p in t.partitions)
            avg = size // rows_count if rows_count else 0
            rows.append(("def", db, t.name, "BASE TABLE", "Doris", 10, "Dynamic", rows_count, avg, size,
                         0, 0, 0, None, _ts(t.create_time), _ts(t.update_time or t.create_time), None,
                         "utf8mb4_0900_bin", None, "", t.comment))
        for db, v in self._all_views():
            rows.append(("def", db, v.name, "VIEW", None, 10, "Dynamic", None, None, None, None, None, None, None,
                         _ts(v.create_time), _ts(v.update_time), None, "utf8mb4_0900_bin", None, "", v.comment))
        return _table("tables", rows)

    def _all_views(self) -> Iterable[tuple[str, View]]:
        for db in self.catalog.list_databases():
            for view in self.catalog.list_views(db.name):
                yield db.name, view

    def _views(self) -> pa.Table:
        return _table("views", [("def", db, v.name, v.definition, "NONE", "NO", "root@%", "DEFINER", "utf8mb4",
                                 "utf8mb4_0900_bin") for db, v in self._all_views()])

    def _columns(self) -> pa.Table:
        rows = []
        for db, t in self._all_tables():
            for pos, c in enumerate(t.columns, start=1):
                f = column_facts(c.type)
                extra = "" if c.is_key or t.keys_type != KEYS_AGG else (c.aggregation or "")
                rows.append(("def", db, t.name, c.name, pos, c.default, "YES" if c.nullable else "NO",
                             f["data_type"], f["char_len"], f["octet_len"], f["precision"], f["scale"],
                             f["datetime_precision"], f["charset"], f["collation"], f["column_type"],
                             "UNI" if c.is_key and t.keys_type == "UNIQUE_KEYS" else ("DUP" if c.is_key else ""),
                             extra, "SELECT", c.comment, f["precision"] or f["char_len"], f["scale"], None, None))
        return _table("columns", rows)

    def _statistics(self) -> pa.Table:
        rows = []
        for db, t in self._all_tables():
            for idx in t.index_defs:
                for seq, col in enumerate(idx.columns, start=1):
                    c = t.column(col)
                    rows.append(("def", db, t.name, 1, db, idx.name, seq, col, "A", None, None, None,
                                 "YES" if c is None or c.nullable else "", idx.index_type, "", idx.comment, None))
        return _table("statistics", rows)

    def _rollup_candidates(self) -> pa.Table:
        return _table("rollup_candidates", [
            (datetime.fromtimestamp(r.at), r.db, r.table, r.index, ", ".join(predicate_text(p) for p in r.predicates),
             ", ".join(r.shape.group_by), ", ".join(r.shape.aggregates), ", ".join(r.columns),
             r.rows_read, round(r.seconds * 1000, 3), r.statement) for r in SCAN_LOG.records()])

    def _key_column_usage(self) -> pa.Table:
        return _table("key_column_usage", [])

    def _partitions(self) -> pa.Table:
        rows = []
        for db, t in self._all_tables():
            method = None if t.partition_info.type == "UNPARTITIONED" else t.partition_info.type
            for pos, p in enumerate(t.partitions, start=1):
                rows.append(("def", db, t.name, p.name if method else None, None, pos if method else None,
                             None, method, None, ", ".join(t.partition_info.columns) or None, None, None,
                             p.row_count, p.data_size // p.row_count if p.row_count else 0, p.data_size, 0,
                             0, 0, _ts(t.create_time), _ts(p.visible_version_time), None, None, "", None,
                             None))
        return _table("partitions", rows)
