"""ADMIN SHOW ROLLUP ADVICE FOR t [LIMIT n]: rollups for the queries the scan log saw on `t` (planner/scan_log.py),
ranked by what they measurably save.

1. Shapes: each logged scan of `t` needs some columns (those it read and those its filters test); its filters
   order a candidate's keys as rollup selection rewards them (doris-reference §5.2: equality continues a prefix,
   a range ends it): equality / IN columns first, then range columns, each group most selective first (the share
   of sample rows the scan's own predicates keep). A DUPLICATE table gets DUPLICATE rollups (those keys, then the
   other columns); an AGGREGATE one keeps its aggregation (the key columns it needs, then its value columns); a
   UNIQUE one keeps every key. A candidate whose keys start another's and whose columns it holds is merged into it.
2. Measure: a sample of the table (whole tablets of every partition, then rows drawn from them, at most
   SAMPLE_ROWS) is loaded into a scratch storage root as the table restricted to the columns the candidates
   need, with every candidate as a rollup. Each distinct logged statement runs with `t` read there (the other
   tables it joins as they are) with rollup selection off (the base index) and on; the index of `t` it then reads
   is the candidate it would select, and the rows read from `t` and the time (best of REPEAT) with and without it
   are that candidate's. Replaying stops after REPLAY_SECONDS, the costliest logged statements first.
3. Advice: the candidates some statement selects and reads fewer rows through, most time saved first (weighted
   by how often the log saw each statement), with the storage a rollup would take at the table's size and the
   ALTER TABLE to create it.
"""

from __future__ import annotations

import math
import shutil
import time
import uuid
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import pyarrow as pa

from planner.bind.bind_alter import bind_create_rollups
from planner.bind.create_table import short_key_column_count
from planner.context import QueryContext, TableSource
from planner.logical import evolve
from planner.olap_source import OlapTableSource, ScanProfile, arrow_schema
from planner.query import execute_query
from planner.scan_log import SCAN_LOG, ScanRecord
from server.results import StatementError
from server.show import string_table
from server.show_data import index_data
from server.show_partitions import readable_size
from sql import statements as st
from sql.errors import SqlError, analysis_error
from sql.parse import parse
from sql.types import parse_type
from storage.catalog.model import KEYS_AGG, KEYS_DUP, Column, OlapTable, TableSpec
from storage.engine import ScanRequest, StorageEngine
from storage.predicate import ColumnPredicate, Op
from storage.tablet.predicate_filter import predicate_mask

SAMPLE_ROWS = 200_000
READ_CAP = 4_000_000  # rows read to draw the sample from
MAX_CANDIDATES = 16
MAX_STATEMENTS = 100  # distinct statements replayed (those the log saw take the most time)
REPEAT = 3
REPLAY_SECONDS = 60.0  # replaying stops after this long (the costliest statements in the log go first)
SLOW_SECONDS = 1.0
COLUMNS = ("Rank", "RollupName", "Type", "KeyColumns", "Columns", "Queries", "RowsReadWithout", "RowsReadWith",
           "TimeWithoutMs", "TimeWithMs", "Speedup", "EstimatedSize", "Statement")
_EQUALITY = (Op.EQ, Op.IN, Op.IS_NULL)
_MODEL = {KEYS_DUP: "DUPLICATE", KEYS_AGG: "AGGREGATE", "UNIQUE_KEYS": "UNIQUE"}
_NO_KEY_TYPES = ("FLOAT", "DOUBLE", "STRING", "JSON", "JSONB", "HLL", "BITMAP", "ARRAY", "MAP", "STRUCT", "VARIANT")


@dataclass
class Candidate:
    keys: tuple[str, ...]
    columns: tuple[str, ...]  # keys first
    name: str = ""
    statements: Counter = field(default_factory=Counter)  # statement text -> times the log saw it
    rows_without: int = 0
    rows_with: int = 0
    seconds_without: float = 0.0
    seconds_with: float = 0.0

    @property
    def saved(self) -> float:
        return self.seconds_without - self.seconds_with


def advise(engine: StorageEngine, db: str, table: OlapTable, limit: int | None, sql_mode: str,
           session: QueryContext) -> pa.Table:
    """The advice for `table` (db `db`); `session` resolves the other tables a replayed statement joins (read as they
    are) and carries the statement's guard (query_timeout and KILL bound the whole advice)."""
    records = [r for r in SCAN_LOG.records(table.table_id) if r.statement]
    if not records:
        raise analysis_error(f"No logged query reads table {table.name}: run the workload first (the scan log, "
                          "information_schema.rollup_candidates, keeps the last queries since the server started)")
    if limit is not None and limit <= 0:
        raise analysis_error("LIMIT of ADMIN SHOW ROLLUP ADVICE must be positive")
    by_name = {c.name.lower(): c for c in table.columns}
    sample = _sample(engine, table, sorted({n for r in records for n in _needed(r, by_name)}
                                           | _structural(table)))
    candidates = _candidates(table, records, sample, by_name)
    if not candidates:
        return string_table(COLUMNS, [])
    root = engine.root / "tmp" / f"rollup-advice-{uuid.uuid4().hex[:8]}"
    scratch = StorageEngine(root, dict(engine.config))
    scratch.arrow_type, scratch.convert = engine.arrow_type, engine.convert
    try:
        scratch.open()
        scratch.catalog.create_database(db)
        built = scratch.catalog.create_table(db, _scratch_spec(table, candidates, sample.column_names))
        assert built is not None
        scratch.load(built, sample)
        built = scratch.catalog.get_table_by_id(built.table_id)
        _replay(scratch, built, db, table, candidates, records, sql_mode, session)
        sizes = {d.name: d.size for d in index_data(scratch, built)}
    finally:
        scratch.close()
        shutil.rmtree(root, ignore_errors=True)
    scale = max(1.0, sum(p.row_count for p in table.partitions) / max(1, sample.num_rows))
    # advised: a candidate some statement selects and reads fewer rows through; ranked by the time it saved
    useful = sorted((c for c in candidates if c.statements and c.rows_with < c.rows_without),
                    key=lambda c: (-c.saved, c.rows_with - c.rows_without))
    rows = []
    for rank, c in enumerate(useful[:limit] if limit else useful, start=1):
        rows.append((rank, c.name, _MODEL.get(table.keys_type, table.keys_type), ", ".join(c.keys), ", ".join(c.columns),
                     sum(c.statements.values()), c.rows_without, c.rows_with, round(c.seconds_without * 1000, 1),
                     round(c.seconds_with * 1000, 1), round(c.seconds_without / max(c.seconds_with, 1e-9), 2),
                     readable_size(int(sizes.get(c.name, 0) * scale)), _statement(db, table, c)))
    return string_table(COLUMNS, rows)


# -- shapes and candidates -------------------------------------------------------------------------------------

def _needed(record: ScanRecord, by_name: dict[str, Column]) -> list[str]:
    names = list(record.columns) + [p.column for p in record.predicates]
    return [by_name[n.lower()].name for n in dict.fromkeys(names) if n.lower() in by_name]


def _structural(table: OlapTable) -> set[str]:
    """Columns the scratch table keeps whatever the queries read: the keys, partition and hash columns."""
    return {c.name for c in table.key_columns} | set(table.partition_info.columns) | set(table.distribution.columns)


def _selectivity(sample: pa.Table, predicates: Sequence[ColumnPredicate], column: str) -> float:
    own = [p for p in predicates if p.column.lower() == column.lower()]
    if not own or sample.num_rows == 0:
        return 1.0
    try:
        return float(np.count_nonzero(predicate_mask(sample.select([column]), own))) / sample.num_rows
    except Exception:  # noqa: BLE001 - a predicate the sample's type cannot evaluate: no preference
        return 1.0


def _keys(record: ScanRecord, sample: pa.Table, by_name: dict[str, Column], table: OlapTable) -> tuple[str, ...]:
    filters: dict[str, bool] = {}  # column -> only equality predicates
    for p in record.predicates:
        column = by_name.get(p.column.lower())
        if column is None or parse_type(column.type).name in _NO_KEY_TYPES:
            continue
        filters[column.name] = filters.get(column.name, True) and p.op in _EQUALITY
    order = sorted(filters, key=lambda n: (not filters[n], _selectivity(sample, record.predicates, n)))
    if table.keys_type == KEYS_DUP:
        return tuple(order)
    keys = [c.name for c in table.key_columns]
    if table.keys_type == KEYS_AGG and record.shape.aggregated:  # an aggregate above: only the keys it needs
        needed = set(_needed(record, by_name))
        keys = [k for k in keys if k in needed]
    return tuple([k for k in order if k in keys] + [k for k in keys if k not in order])


def _candidates(table: OlapTable, records: Sequence[ScanRecord], sample: pa.Table,
                by_name: dict[str, Column]) -> list[Candidate]:
    found: dict[tuple[tuple[str, ...], frozenset[str]], Candidate] = {}
    weight: Counter = Counter()
    position = {c.name: i for i, c in enumerate(table.columns)}
    for r in records:
        keys = _keys(r, sample, by_name, table)
        needed = _needed(r, by_name)
        if not keys:
            keys = tuple(n for n in needed if parse_type(by_name[n.lower()].type).name not in _NO_KEY_TYPES)[:1]
        if not keys:
            continue
        values = sorted((n for n in needed if n not in keys), key=position.__getitem__)
        if table.keys_type != KEYS_DUP:  # key columns first, in their key order; then the values
            values = [n for n in values if not by_name[n.lower()].is_key]
        key = (keys, frozenset(needed) | frozenset(keys))
        c = found.setdefault(key, Candidate(keys, keys + tuple(values)))
        c.statements[r.statement] += 1
        weight[key] += r.seconds
    ranked = sorted(found.values(), key=lambda c: -weight[(c.keys, frozenset(c.columns))])
    merged: list[Candidate] = []
    for c in ranked:  # keys one starts the other's: one rollup, the longer keys, every column of both
        host = next((m for m in merged if m.keys[:len(c.keys)] == c.keys or c.keys[:len(m.keys)] == m.keys), None)
        if host is None:
            merged.append(c)
            continue
        host.keys = max(host.keys, c.keys, key=len)
        host.columns = host.keys + tuple(n for n in dict.fromkeys(host.columns + c.columns) if n not in host.keys)
        host.statements.update(c.statements)
    existing = {(tuple(k.name for k in i.columns if k.is_key), tuple(k.name for k in i.columns))
                for i in table.indexes}
    out = [c for c in merged if (c.keys, c.columns) not in existing][:MAX_CANDIDATES]
    taken = {i.name.lower() for i in table.indexes}
    for c in out:
        name, n = f"r_{c.keys[0].lower()}", 2
        while name in taken:
            name, n = f"r_{c.keys[0].lower()}_{n}", n + 1
        taken.add(name)
        c.name = name
    return out


# -- the sample and the scratch table --------------------------------------------------------------------------

def _sample(engine: StorageEngine, table: OlapTable, columns: list[str]) -> pa.Table:
    """Rows drawn uniformly from whole tablets (a bucket is a hash sample of its partition): from every partition
    its share of twice SAMPLE_ROWS, at least one tablet, as long as that reads at most READ_CAP rows (else from
    partitions picked at random up to it; one tablet is read whole, however large)."""
    ordered = [c.name for c in table.columns if c.name in set(columns)]
    rng = np.random.default_rng(0)
    filled = [p for p in table.partitions if p.row_count > 0]
    total = sum(p.row_count for p in filled)
    picks: list[tuple[int, int]] = []  # (partition_id, tablets of it to read)
    planned = 0.0
    for i in rng.permutation(len(filled)) if filled else []:
        p = filled[int(i)]
        per_tablet = p.row_count / max(1, p.buckets)
        n = min(p.buckets, max(1, math.ceil(2 * SAMPLE_ROWS * p.row_count / total / per_tablet)))
        if picks and planned + n * per_tablet > READ_CAP:
            continue
        picks.append((p.partition_id, n))
        planned += n * per_tablet
    ids: list[int] = []
    for pid, n in picks:
        tablets = engine.catalog.tablets(table.table_id, pid, table.base_index_id)
        ids += [tablets[int(j)].tablet_id for j in rng.choice(len(tablets), min(n, len(tablets)), replace=False)]
    result = engine.scan(ScanRequest(table=table, schema=arrow_schema(table), columns=ordered, tablet_ids=ids))
    rows = result.table.combine_chunks()
    if rows.num_rows > SAMPLE_ROWS:
        picked = np.sort(np.random.default_rng(1).choice(rows.num_rows, SAMPLE_ROWS, replace=False))
        rows = rows.take(pa.array(picked))
    return rows


def _scratch_spec(table: OlapTable, candidates: Sequence[Candidate], columns: Sequence[str]) -> TableSpec:
    kept = tuple(c for c in table.columns if c.name in set(columns))
    keys = [parse_type(c.type) for c in kept if c.is_key]
    spec = TableSpec(table.name, table.keys_type, kept, short_key_column_count(keys), table.partition_info,
                     tuple(p.item for p in table.partitions), replace(table.distribution, buckets=1, auto=False))
    descs: list[st.RollupDesc] = []
    for c in candidates:  # the very statements the advice prints, bound as CREATE TABLE binds its ROLLUP clause
        (stmt,) = parse(_statement("d", table, c), "")
        assert isinstance(stmt, st.AddRollup)
        descs.extend(stmt.rollups)
    return replace(spec, rollups=bind_create_rollups(kept, table.keys_type, table.name, descs))


def _statement(db: str, table: OlapTable, c: Candidate) -> str:
    cols = ", ".join(f"`{n}`" for n in c.columns)
    dup = f" DUPLICATE KEY ({', '.join(f'`{k}`' for k in c.keys)})" if table.keys_type == KEYS_DUP else ""
    return f"ALTER TABLE `{db}`.`{table.name}` ADD ROLLUP `{c.name}` ({cols}){dup}"


# -- replay ----------------------------------------------------------------------------------------------------

def _replay(scratch: StorageEngine, built: OlapTable, db: str, table: OlapTable, candidates: Sequence[Candidate],
            records: Sequence[ScanRecord], sql_mode: str, session: QueryContext) -> None:
    """Each distinct statement over the sample without and with the candidates (the costliest in the log first,
    for at most REPLAY_SECONDS); what it saves goes to the candidate it selects."""
    by_name = {c.name: c for c in candidates}
    seen = Counter(r.statement for r in records)
    cost = Counter()
    for r in records:
        cost[r.statement] += r.seconds
    deadline = time.monotonic() + REPLAY_SECONDS
    for text in sorted(seen, key=lambda s: -cost[s])[:MAX_STATEMENTS]:
        if time.monotonic() > deadline:
            break
        expression = _query(text, sql_mode)
        if expression is None:
            continue
        base = _run(scratch, built, db, table, expression, False, session)
        with_ = _run(scratch, built, db, table, expression, True, session)
        if base is None or with_ is None:
            continue
        chosen = [n for n in with_[2] if n in by_name]
        if not chosen:
            continue
        c = by_name[chosen[0]]
        n = seen[text]
        c.rows_without += base[1] * n
        c.rows_with += with_[1] * n
        c.seconds_without += base[0] * n
        c.seconds_with += with_[0] * n
        for other in candidates:  # the statement counts for the candidate it selects, not the one it made
            if other is not c:
                other.statements.pop(text, None)
        c.statements[text] = n


def _query(text: str, sql_mode: str):
    try:
        statements = parse(text, sql_mode)
    except Exception:  # noqa: BLE001 - a logged text that no longer parses is not replayed
        return None
    if len(statements) != 1 or not isinstance(statements[0], st.Query):
        return None
    return statements[0].expression


def _run(scratch: StorageEngine, built: OlapTable, db: str, table: OlapTable, expression, rollups: bool,
         session: QueryContext) -> tuple[float, int, list[str]] | None:
    """(best seconds, rows read from the table, indexes of it read) of one statement, the table being its sample
    and any other table the real one; None when it cannot run so (a column the sample lacks, a name of another
    database ...). A KILL or the statement's query_timeout ends the whole advice."""
    best, rows, indexes = math.inf, 0, []
    for _ in range(REPEAT):
        scans: list[ScanProfile] = []

        def resolve(name_db: str | None, name: str, scans: list[ScanProfile] = scans) -> TableSource:
            if (name_db or db).lower() == db.lower() and name.lower() == table.name.lower():
                return OlapTableSource(scratch, built, db_name=db, profile=scans, logged=False)
            other = session.resolve_table(name_db or db, name)
            return evolve(other, logged=False) if isinstance(other, OlapTableSource) else other

        def variables(scope: str, name: str) -> object:
            if name == "enable_rollup_selection":
                return "true" if rollups else "false"
            return session.variables(scope, name)

        ctx = evolve(session, current_db=db, resolve_table=resolve, variables=variables, now=None,
                     check_access=None, source_override=None)
        started = time.perf_counter()
        try:
            execute_query(expression, ctx)
        except (SqlError, StatementError):  # not replayable here (but a KILL or the timeout ends the advice)
            if session.guard is not None:
                session.guard.check()
            return None
        best = min(best, time.perf_counter() - started)
        if best > SLOW_SECONDS:  # one run of a slow statement is measure enough
            break
        rows = sum(s.stats.raw_rows_read for s in scans)
        indexes = [s.index for s in scans]
    return best, rows, indexes
