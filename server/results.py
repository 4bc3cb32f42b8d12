"""What executing a statement returns to the protocol layer."""

from __future__ import annotations

from dataclasses import dataclass, field

import pyarrow as pa


@dataclass
class OkResult:
    """An OK packet: DDL, INSERT, SET ..."""

    affected_rows: int = 0
    info: str = ""  # e.g. "{'label':'label_x', 'status':'VISIBLE', 'txnId':'12'}"
    warnings: int = 0
    last_insert_id: int = 0
    txn_id: int | None = None  # an INSERT's transaction (Stream Load and LOAD read it; clients see `info`)
    label: str | None = None  # an INSERT's label (a group commit's is its batch's)


@dataclass
class ResultSet:
    """Rows to send. Column wire types come from the Arrow types (sql.types.mysql_column)."""

    table: pa.Table
    # optional per-column overrides of the wire definition: name -> (org_table, org_name) etc. not needed yet
    column_flags: dict[str, int] = field(default_factory=dict)  # extra flags (NOT_NULL, PRI_KEY) by position name


Result = OkResult | ResultSet


class StatementError(Exception):
    """A user-visible failure raised by the server layer itself."""

    def __init__(self, message: str, code: int = 1105, sqlstate: str = "HY000") -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.sqlstate = sqlstate
