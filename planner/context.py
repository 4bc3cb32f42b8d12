"""What a query needs from the outside world: table sources, variables and session functions.

The server builds a QueryContext per statement; the planner never imports the server.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import pyarrow as pa

from storage.predicate import ColumnPredicate

if TYPE_CHECKING:
    from planner.bind.views import ViewDefinition
    from planner.guard import QueryGuard


@runtime_checkable
class TableSource(Protocol):
    """What a FROM item resolves to."""

    name: str
    schema: pa.Schema  # column names (original case) and Arrow types

    def scan(self, columns: Sequence[str], predicates: Sequence[ColumnPredicate]) -> pa.Table:
        """At least the rows satisfying `predicates` (more is fine: the full WHERE is applied above the
        scan, unless the source sets `exact_predicates`: then exactly those rows, and the Filter above may
        be dropped), and only `columns`, in that order."""
        ...


def _no_variables(scope: str, name: str) -> Any:
    from sql.errors import analysis_error

    raise analysis_error(f"Unknown system variable '{name}'", 1193, "HY000")


@dataclass
class QueryContext:
    current_db: str | None
    resolve_table: Callable[[str | None, str], TableSource]  # (db or None, table); raises 1146 when missing
    # (scope, name) -> value. scope is 'session' | 'global' for @@var and 'user' for @var
    # (an unset user variable should return None, as MySQL does).
    variables: Callable[[str, str], Any] = _no_variables
    # session functions by lower-case name: database, user, current_user, connection_id, version
    functions: Mapping[str, Callable[..., Any]] = field(default_factory=dict)
    # statement start time; now()/curdate() are constant within one statement as in MySQL
    now: dt.datetime | None = None
    # a cached plan's scans read through per-execution copies of its sources (planner/plan_cache.py)
    source_override: Callable[[TableSource], TableSource] | None = None
    # KILL QUERY, query_timeout and exec_mem_limit of the running statement (planner/guard.py)
    guard: QueryGuard | None = None
    # while translating a correlated subquery: the types of the enclosing queries' columns it may read
    outer_types: Mapping[str, pa.DataType] | None = None
    # (db or None, name) -> the view of that name, or None when there is none (planner/bind/views.py)
    resolve_view: Callable[[str | None, str], ViewDefinition | None] | None = None

    def statement_time(self) -> dt.datetime:
        if self.now is None:
            self.now = dt.datetime.now().replace(microsecond=0)
        return self.now
