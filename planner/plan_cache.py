"""Plans of repeated SELECTs, reused while nothing they were derived from has changed.

A statement's rewritten logical plan is kept under its text and current database when planning it read
only OLAP tables and session variables: no session function (database(), user() ...), no statement time
(now() folded into a predicate), no subquery run at bind time, no nondeterministic function, no table that
was empty (with no rows the base index is named, whatever the rollups). An entry is valid while the
catalog's schema generation (bumped by every catalog write but a load's and a compaction's: DDL, jobs, views,
privileges) is the one it was planned at and every variable planning read still has the value it had. Loads do
not change a plan: each execution reads its own snapshot of the tables, through its own copies of the plan's
table sources (its counters and profile are its own too). One cache serves every connection.

Keys are the text with the sql_mode it is read under. A point query's plan is kept once for every text that
differs from it only in literals (plan_template.py). Each entry notes the CPU time of its last runs, which makes
a light plan a quick statement (PlanCache.quick) the server runs without a thread hand-off.
"""

from __future__ import annotations

import datetime as dt
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

import pyarrow as pa
from sqlglot import exp

from planner.bind.bind_select import BoundQuery, SelectBinder
from planner.context import QueryContext, TableSource
from planner.duck.plan import needs_duckdb
from planner.logical import LogicalFilter, LogicalLimit, LogicalPlan, LogicalProject, LogicalScan
from planner.olap_source import OlapTableSource
from planner.plan_template import PlanTemplate, make_template
from planner.rewrite import rewrite
from sql.parameterize import parameterize
from storage.engine import PARALLEL_SCAN_MIN_ROWS

SHORT_SECONDS = 0.025  # a kept plan whose runs usually take less CPU waits for its turn in the short lane
QUICK_SECONDS = 0.002  # a light kept plan whose runs usually take less CPU is a quick statement (PlanCache.quick)

# functions whose value differs per call or per row: a plan that folded one into a literal is one answer
_NONDETERMINISTIC = frozenset({"rand", "random", "uuid", "uuid_numeric", "sleep", "last_insert_id"})


@dataclass(frozen=True)
class StatementKey:
    """A statement's text and the sql_mode it was read under (PIPES_AS_CONCAT, NO_BACKSLASH_ESCAPES change what
    it means).
    Statements with this key also share the plan of a text that differs only in literals (plan_template.py)."""

    text: str
    sql_mode: str = ""

    @cached_property  # a statement's key is asked for its plan two or three times (quick, holds, lookup)
    def template(self) -> tuple[tuple[str, str, str], tuple[int | str, ...]] | None:
        """(the key of this text's template, its literal values), if it has literals to take out."""
        p = parameterize(self.text)
        return None if p is None else (("template", self.sql_mode, p.template), p.values)


_HEAVY = float("inf")


@dataclass
class _Timing:
    """The CPU time of the last three runs (none yet: not known to be quick). Their median decides: one run
    that a garbage collection or a page fault made slow does not send every client of a shared plan through
    the worker threads for the next run (16 clients of one template: 11% of the server's time went there)."""

    recent: list[float] = field(default_factory=lambda: [_HEAVY] * 3)

    def note(self, seconds: float, heavy: bool) -> None:
        if heavy:  # a run that read many rows may do so again: it must be light twice before it is quick
            self.recent = [_HEAVY] * 3
        else:
            self.recent = self.recent[1:] + [seconds]

    @property
    def typical_seconds(self) -> float:
        return sorted(self.recent)[1]


@dataclass(frozen=True)
class _Entry:
    bound: BoundQuery
    generation: int
    reads: tuple[tuple[str, str, Any], ...]  # (scope, variable, value) planning read
    accessed: tuple[tuple[str | None, str], ...] = ()  # (db, name) the statement names: checked on every run
    template: PlanTemplate | None = None  # kept under a template key: the plan of any of its texts
    light: bool = False  # one scan with filters / projections / a limit above it (_light)
    tables: tuple[OlapTableSource, ...] = ()  # the sources planning resolved (is each one's table in memory?)
    timing: _Timing = field(default_factory=_Timing)


@dataclass
class _Recording(QueryContext):
    """The statement's context, noting what planning depended on."""

    reads: dict[tuple[str, str], Any] = field(default_factory=dict)
    tables: list[TableSource] = field(default_factory=list)
    accessed: list[tuple[str | None, str]] = field(default_factory=list)
    volatile: bool = False

    def statement_time(self) -> dt.datetime:
        self.volatile = True  # now() / curdate() evaluated while planning
        return super().statement_time()


class PlanCache:
    def __init__(self, generation: Callable[[], int | None], capacity: int = 1024) -> None:
        self._generation = generation
        self._capacity = capacity
        self._entries: OrderedDict[Hashable, _Entry] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0
        self.template_hits = 0

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def holds(self, key: Hashable, current_db: str | None) -> bool:
        """Whether a plan is kept for `key` or its template (valid or not): a cheap test before building a
        context."""
        return self._find(key, current_db) is not None

    def quick(self, key: Hashable, current_db: str | None) -> bool:
        """Whether `key` has a light kept plan, still valid as far as the catalog goes, whose runs usually take
        less than QUICK_SECONDS (_Timing) and whose tables the catalog holds in memory: a statement the server may
        run without handing it to a worker thread (and which waits for nothing)."""
        found = self._find(key, current_db)
        if found is None:
            return False
        entry = found[1]
        # a table not in the catalog's memory (a DDL, a failed read-back) is read under the lock a commit holds
        return entry.light and entry.timing.typical_seconds < QUICK_SECONDS \
            and entry.generation == self._generation() \
            and all(t.engine.catalog.table_cached(t.table.table_id) for t in entry.tables)

    def short(self, key: Hashable, current_db: str | None) -> bool:
        """Whether `key` has a kept plan, still valid as far as the catalog goes, whose runs usually take less
        than SHORT_SECONDS of CPU (server/protocol/admission.py serves such statements first)."""
        found = self._find(key, current_db)
        return found is not None and found[1].timing.typical_seconds < SHORT_SECONDS \
            and found[1].generation == self._generation()

    def observe(self, key: Hashable, current_db: str | None, seconds: float, rows_read: int = 0) -> None:
        """Note what a run of the kept plan of `key` cost: its thread's CPU time (what it waited for the
        interpreter lock while other statements ran is not its own cost) and the rows its scans read (from
        PARALLEL_SCAN_MIN_ROWS on, a scan works on other threads too)."""
        found = self._find(key, current_db)
        if found is not None:
            found[1].timing.note(seconds, rows_read >= PARALLEL_SCAN_MIN_ROWS)

    def _find(self, key: Hashable, current_db: str | None
              ) -> tuple[Hashable, _Entry, tuple[int | str, ...]] | None:
        """(its key in the cache, the entry, the text's literal values for a template) kept for `key`."""
        full = (key, current_db)
        entry = self._entries.get(full)
        if entry is not None:
            return full, entry, ()
        template = key.template if isinstance(key, StatementKey) else None
        if template is not None and (entry := self._entries.get((template[0], current_db))) is not None:
            return (template[0], current_db), entry, template[1]
        return None

    def lookup(self, key: Hashable, ctx: QueryContext) -> BoundQuery | None:
        """The cached plan of `key` (or of its template) in `ctx`'s database, if still valid."""
        found = self._find(key, ctx.current_db)
        if found is None:
            return None
        full, entry, values = found
        if entry.generation != self._generation() or not _same_reads(entry, ctx):
            return None
        if ctx.check_access is not None:  # the plan is shared by every user: each run is checked as planned
            for db, name in entry.accessed:
                ctx.check_access(db, name)
        with self._lock:
            if full in self._entries:
                self._entries.move_to_end(full)
            self.hits += 1
            self.template_hits += entry.template is not None
        return entry.bound if entry.template is None else entry.template.instantiate(values, ctx)

    def plan(self, key: Hashable, expression: exp.Expression, ctx: QueryContext,
             run_subquery: Callable[[exp.Expression, QueryContext, dict | None], pa.Table]) -> BoundQuery:
        """Plan `expression` and keep the plan under `key` if it may be reused."""
        generation = self._generation()
        rec = _recording(ctx)
        ran_subquery = False

        def subquery(q: exp.Expression, visible: dict | None) -> pa.Table:
            nonlocal ran_subquery
            ran_subquery = True
            return run_subquery(q, rec, visible)

        unpruned = SelectBinder(rec, subquery, None).bind_query(expression)
        bound = BoundQuery(rewrite(unpruned.plan, rec), unpruned.names)
        self.misses += 1
        if generation is None or generation != self._generation() or rec.volatile or ran_subquery \
                or not all(isinstance(t, OlapTableSource) for t in rec.tables) or _nondeterministic(expression) \
                or any(_empty(t) for t in rec.tables) or _time_travel(expression):
            return bound
        entry = _Entry(bound, generation, tuple((s, n, v) for (s, n), v in rec.reads.items()), tuple(rec.accessed),
                       light=_light(bound.plan), tables=tuple(t for t in rec.tables if isinstance(t, OlapTableSource)))
        full = (key, ctx.current_db)
        template = key.template if isinstance(key, StatementKey) else None
        made = None if template is None else make_template(bound, unpruned.plan, template[1])
        if made is not None:  # one entry for every text of the template, rather than one per literal
            assert template is not None
            entry, full = replace(entry, template=made), (template[0], ctx.current_db)
        with self._lock:
            self._entries[full] = entry
            self._entries.move_to_end(full)
            while len(self._entries) > self._capacity:
                self._entries.popitem(last=False)
        return bound


def _time_travel(expression: exp.Expression) -> bool:
    """A FOR ... AS OF read: which versions it may read is decided again on each run (the retention moves)."""
    return any(t.args.get("version") is not None for t in expression.find_all(exp.Table))


def execution_sources(profile: list | None, made: list[TableSource] | None = None
                      ) -> Callable[[TableSource], TableSource]:
    """QueryContext.source_override for a cached plan: each OLAP scan reads through its own copy (own
    snapshot, counters, and this statement's profile), added to `made` when given."""

    def fresh(source: TableSource) -> TableSource:
        if isinstance(source, OlapTableSource):
            source = source.for_execution(profile)
            if made is not None:
                made.append(source)
        return source

    return fresh


def _recording(ctx: QueryContext) -> _Recording:
    rec = _Recording(ctx.current_db, ctx.resolve_table, ctx.variables, ctx.functions, ctx.now)

    def variables(scope: str, name: str) -> Any:
        value = ctx.variables(scope, name)
        rec.reads[(scope, name)] = value
        return value

    def resolve(db: str | None, name: str) -> TableSource:
        source = ctx.resolve_table(db, name)
        rec.tables.append(source)
        return source

    def function(fn: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any) -> Any:
            rec.volatile = True
            return fn(*args)
        return call

    rec.variables = variables
    rec.resolve_table = resolve
    rec.functions = {name: function(fn) for name, fn in ctx.functions.items()}
    rec.source_override = ctx.source_override
    rec.guard = ctx.guard
    rec.resolve_view = ctx.resolve_view  # views change the catalog's generation: a cached plan is redone
    if ctx.check_access is not None:
        check = ctx.check_access

        def check_access(db: str | None, name: str) -> None:
            check(db, name)
            rec.accessed.append((db, name))

        rec.check_access = check_access
    return rec


def _empty(source: TableSource) -> bool:
    """No rows in the table now (the catalog's, not the source's copy, which may predate the loads)."""
    assert isinstance(source, OlapTableSource)
    current = source.engine.catalog.get_table_by_id(source.table.table_id) or source.table
    return not any(p.row_count for p in (current.temp_partitions if source.temporary else current.partitions))


def _light(plan: LogicalPlan) -> bool:
    """One scan under filters, projections and a limit, on the Arrow operators: all its work is done in the
    calling thread (then its CPU time is its cost, PlanCache.observe), where a join or DuckDB work on other
    threads too. Aggregates on the Arrow operators would qualify as well, but on the event loop the soak's
    group-bys (1-3 ms) delayed every other client's answer as much as they saved: statements/s stayed level."""
    top = plan
    while isinstance(plan, LogicalProject | LogicalFilter | LogicalLimit):
        plan = plan.input
    return isinstance(plan, LogicalScan) and not needs_duckdb(top)


def _same_reads(entry: _Entry, ctx: QueryContext) -> bool:
    try:
        return all(_same_value(ctx.variables(scope, name), value) for scope, name, value in entry.reads)
    except Exception:  # noqa: BLE001 - a variable that no longer resolves: plan again (and fail there)
        return False


def _same_value(a: Any, b: Any) -> bool:
    """The very same literal, not just ==: @x = 1, 1.0, 1.00 and TRUE are equal in Python but become
    different literals (types, and strings '1' / '1.0' / '1.00' against a VARCHAR column)."""
    return type(a) is type(b) and a == b and repr(a) == repr(b)


def _nondeterministic(expression: exp.Expression) -> bool:
    for node in expression.find_all(exp.Func):
        name = node.name if isinstance(node, exp.Anonymous) else node.sql_name()
        if name.lower() in _NONDETERMINISTIC:
            return True
    return False

