"""What a query needs from the outside world: table sources, variables and session functions.

The server builds a QueryContext per statement; the planner never imports the server.
"""

from __future__ import annotations

import datetime as dt
import functools
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
    # (db or None, name) of a table or view the statement itself names (not one inside a view): raises when
    # the user may not SELECT it (server.access); a cached plan runs the same checks again
    check_access: Callable[[str | None, str], None] | None = None

    def statement_time(self) -> dt.datetime:
        """now() of this statement, in the session's time_zone."""
        if self.now is None:
            self.now = dt.datetime.now(self.tzinfo()).replace(tzinfo=None, microsecond=0)
        return self.now

    def time_zone(self) -> str:
        """The session's time_zone in a spelling Arrow and zoneinfo take ('Asia/Shanghai', '+08:00', 'UTC')."""
        try:
            name = str(self.variables("session", "time_zone") or "").strip()
        except Exception:  # noqa: BLE001 - a context without session variables: the machine's zone
            name = ""
        if not name or name.upper() == "SYSTEM":
            from time import strftime

            name = system_zone() or strftime("%z")
        name = ZONE_ALIASES.get(name.upper(), name)
        if name[:1] in "+-" and ":" not in name and len(name) == 5:
            name = f"{name[:3]}:{name[3:]}"
        return name

    def tzinfo(self) -> dt.tzinfo | None:
        name = self.time_zone()
        try:
            if name[:1] in "+-":
                hours, _, minutes = name[1:].partition(":")
                offset = dt.timedelta(hours=int(hours), minutes=int(minutes or 0))
                return dt.timezone(-offset if name[0] == "-" else offset)
            from zoneinfo import ZoneInfo

            return ZoneInfo(name)
        except (ValueError, KeyError, OSError):
            return None


ZONE_ALIASES = {"CST": "Asia/Shanghai", "UTC": "UTC", "GMT": "UTC", "Z": "UTC"}


@functools.cache
def system_zone() -> str | None:
    """The machine's zone name, read once: MySQL too takes system_time_zone when the server starts (and
    resolving /etc/localtime was a tenth of a point lookup's time)."""
    from pathlib import Path

    try:
        link = Path("/etc/localtime").resolve()
    except OSError:
        return None
    return "/".join(link.parts[link.parts.index("zoneinfo") + 1:]) if "zoneinfo" in link.parts else None
