"""What the TPC-H and TPC-DS runners share: one dorislite server, the kit's tables created with Doris's DDL and
loaded from its Parquet files, each query over MySQL and in DuckDB over the same files, answers compared, a
Markdown report. A `Kit` says what differs (tables, DDL, views, queries, the DuckDB spelling, the comparison).

In one run (`run`):

1. generates the SF's Parquet files with DuckDB's generator if they are missing (`Kit.generate`, in its own
   virtualenv; timed);
2. starts a dorislite server (`python -m server serve`, free port, temporary storage root), creates the tables
   with the kit's DDL and loads each with
   `INSERT INTO t SELECT * FROM local("file_path" = "<dir>/*.parquet", "format" = "parquet")`, smallest first
   (timed per table; the first load also starts the server's Spark), checks the row counts, then creates the
   kit's views;
3. runs each query (one or more statements) over MySQL (pymysql, `SET query_timeout`) and in DuckDB over the
   same files (views over `read_parquet`, after `Kit.duckdb_setup`), one warm-up then best of --repeat each (a
   query whose warm-up took more than --slow seconds is timed by that one run), and compares the answers of
   each statement (`Kit.check`). A query that fails or differs does not stop the run;
4. reads the server's peak RSS (VmHWM in /proc/<pid>/status, and that of its child processes: Spark's JVM
   and workers), prints a Markdown table (per query: times, ratio, rows, = DuckDB / DIFFERENT / ERROR; the
   geometric mean of the ratios over the correct queries, how many are correct) and writes it to
   bench/out/<kit>-sf<SF>[-<variant>].md.

Exits 0 whatever the queries answer (the report says how many are right); 1 when the harness itself broke
(the server did not start, a table was refused or loaded the wrong row count, DuckDB failed a query).
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import re
import shutil
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import pyarrow.parquet as pq
import pymysql

from bench.dbgen import OUT, default_out, is_generated, sf_label, table_glob
from bench.harness import ROOT, best_of, dorislite_server

SLOW_S = 60.0
TIMEOUT_S = 600
LOAD_TIMEOUT_S = 3600

Rows = Sequence[Sequence[Any]]


@dataclass(frozen=True)
class Reference:
    """DuckDB's side of one statement, for comparisons that need more than its rows (re-running it)."""
    con: duckdb.DuckDBPyConnection
    sql: str  # the DuckDB text that ran
    columns: tuple[str, ...]  # its result's column names


@dataclass(frozen=True)
class Kit:
    name: str  # "TPC-H"
    slug: str  # "tpch": bench/out/<slug>-sf<SF> and (as an identifier, `database`) the database name
    tables: tuple[str, ...]  # in CREATE order
    ddl: Callable[[str], str]
    queries: Callable[[str], Mapping[str, str]]  # variant -> name -> text (one or more statements)
    variants: tuple[str, ...]
    duckdb_sql: Callable[[str], str]
    generate: Callable[[float, Path], Mapping[str, int]]
    check: Callable[[Rows, Rows, Reference], tuple[str | None, str | None]]  # -> (difference, note)
    views: tuple[tuple[str, str], ...] = ()  # (name, CREATE VIEW) after the loads, also in DuckDB
    duckdb_setup: tuple[str, ...] = ()

    @property
    def query_count(self) -> int:
        return len(self.queries(self.variants[0]))

    @property
    def database(self) -> str:
        """The slug as a database name: "ssb-star" -> ssb_star."""
        return self.slug.replace("-", "_")

    def out(self, sf: float) -> Path:
        return default_out(self.slug, sf)


@dataclass
class QueryResult:
    name: str
    dorislite_s: float | None
    duckdb_s: float | None
    rows: int | None
    error: str | None = None  # dorislite's error (its first line is in the table)
    difference: str | None = None
    note: str | None = None  # how a match was reached, when not exactly

    @property
    def correct(self) -> bool:
        return self.error is None and self.difference is None and self.dorislite_s is not None

    @property
    def ratio(self) -> float | None:
        if self.dorislite_s is None or not self.duckdb_s:
            return None
        return self.dorislite_s / self.duckdb_s


@dataclass
class Report:
    sf: float
    variant: str
    rows: dict[str, int]
    generate_s: float | None = None
    load_s: dict[str, float] = field(default_factory=dict)
    peak_rss_kb: int | None = None
    children_rss_kb: int | None = None
    queries: list[QueryResult] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # dorislite refused something the run could do without
    errors: list[str] = field(default_factory=list)  # the harness broke: exit 1
    kit_name: str = "TPC-H"
    query_count: int = 22  # how many queries the kit has

    @property
    def correct(self) -> list[QueryResult]:
        return [q for q in self.queries if q.correct]

    @property
    def geomean(self) -> float | None:
        ratios = [q.ratio for q in self.correct if q.ratio]
        if not ratios:
            return None
        return math.exp(sum(math.log(r) for r in ratios) / len(ratios))

    def markdown(self) -> str:
        total = sum(self.rows.values())
        variant = "" if self.variant == "base" else f", Doris's queries/{self.variant} texts"
        lines = [f"### {self.kit_name}, SF {sf_label(self.sf)} ({total:,} rows in {len(self.rows)} tables{variant})",
                 "", f"Machine: {os.cpu_count()} cores, Python {platform.python_version()}, "
                 f"duckdb {duckdb.__version__}.", ""]
        if self.generate_s is not None:
            lines.append(f"Generation (Parquet): {self.generate_s:.1f} s.")
        if self.load_s:
            loaded = ", ".join(f"{t} {self.rows.get(t, 0):,} rows {s:.1f} s" for t, s in self.load_s.items())
            lines.append(f"Load `INSERT … SELECT * FROM local(…)`: {sum(self.load_s.values()):.1f} s in all "
                         f"({loaded}; the first includes starting the server's Spark).")
        if self.peak_rss_kb is not None:
            kids = (f"; its child processes (Spark's JVM, workers) {self.children_rss_kb / 1024:,.0f} MiB"
                    if self.children_rss_kb else "")
            lines.append(f"Server peak RSS (VmHWM): {self.peak_rss_kb / 1024:,.0f} MiB{kids}.")
        lines += ["", "| query | dorislite ms | DuckDB ms | ratio | rows | result |", "|---|---:|---:|---:|---:|---|"]
        for q in self.queries:
            if q.error is not None:
                result = "ERROR: " + _cell(_first_line(q.error), 120)
            elif q.difference is not None:
                result = "**DIFFERENT**"
            else:
                result = "= DuckDB"
            lines.append(f"| {q.name} | {_ms(q.dorislite_s)} | {_ms(q.duckdb_s)} | "
                         f"{'' if q.ratio is None else f'{q.ratio:.2f}'} | {'' if q.rows is None else q.rows} | "
                         f"{result} |")
        gm = self.geomean
        lines.append(f"| **geomean** (correct queries) | | | **{'—' if gm is None else f'{gm:.2f}'}** | | |")
        subset = "" if len(self.queries) == self.query_count else f" (a subset of the {self.query_count} was run)"
        lines += ["", f"Correct: {len(self.correct)}/{len(self.queries)} queries equal DuckDB" + subset]
        slowest = sorted((q for q in self.correct if q.ratio), key=lambda q: q.ratio or 0, reverse=True)[:10]
        if len(self.queries) > 22 and slowest:
            lines.append("Slowest correct queries (ratio): "
                         + ", ".join(f"{q.name} {q.ratio:.2f}" for q in slowest) + ".")
        lines.append("")
        for q in self.queries:
            if q.error is not None:
                lines.append(f"- {q.name} ERROR: {_one_line(q.error)}")
            elif q.difference is not None:
                lines.append(f"- {q.name} DIFFERENT: {q.difference}")
            elif q.note:
                lines.append(f"- {q.name}: {q.note}")
        lines += [f"- note: {n}" for n in self.notes]
        lines += [f"- harness error: {e}" for e in self.errors]
        return "\n".join(lines) + "\n"


def _ms(seconds: float | None) -> str:
    return "" if seconds is None else f"{seconds * 1000:,.0f}"


def _first_line(text: str) -> str:
    lines = [ln.strip() for ln in str(text).splitlines() if ln.strip()]
    return lines[0] if lines else ""


def _one_line(text: str, limit: int = 600) -> str:
    """A multi-line message (a syntax error's caret lines) on one line, ` / ` between its lines."""
    text = " / ".join(" ".join(ln.split()) for ln in str(text).splitlines() if ln.strip())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _cell(text: str, limit: int) -> str:
    text = text if len(text) <= limit else text[: limit - 1] + "…"
    return text.replace("|", "\\|")


_STATEMENT_END = re.compile(r"'(?:[^']|'')*'|\"[^\"]*\"|`[^`]*`|--[^\n]*|/\*.*?\*/|;", re.DOTALL)


def split_statements(text: str) -> list[str]:
    """The statements of a query file, without their `;` (semicolons inside quotes or comments do not count)."""
    out, start = [], 0
    for m in _STATEMENT_END.finditer(text):
        if m.group() == ";":
            out.append(text[start:m.start()])
            start = m.end()
    out.append(text[start:])
    return [s.strip() for s in out if s.strip()]


def vm_hwm_kb(pid: int) -> int | None:
    """Peak resident set size of a live process (VmHWM, kB), None once it is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def descendants(pid: int) -> list[int]:
    """Every live process below `pid` (children of all its threads, recursively)."""
    found: list[int] = []
    todo = [pid]
    while todo:
        p = todo.pop()
        for task in Path(f"/proc/{p}/task").glob("*"):
            try:
                kids = [int(k) for k in (task / "children").read_text().split()]
            except OSError:
                continue
            found += kids
            todo += kids
    return found


def connect(port: int, database: str, timeout: int, create: bool = False) -> tuple[
        pymysql.connections.Connection, pymysql.cursors.Cursor]:
    """A connection to `database` (created first with `create`) whose statements end after `timeout` seconds
    (`query_timeout`; the client itself gives up a minute later)."""
    conn = pymysql.connect(host="127.0.0.1", port=port, user="root", password="", autocommit=True,
                           read_timeout=timeout + 60, write_timeout=timeout + 60)
    cur = conn.cursor()
    if create:
        cur.execute(f"CREATE DATABASE {database}")
    cur.execute(f"USE {database}")
    cur.execute(f"SET query_timeout = {timeout}")
    return conn, cur


def _alive(conn: pymysql.connections.Connection) -> bool:
    try:
        conn.ping(reconnect=False)
        return True
    except Exception:  # noqa: BLE001 - any failure means a new connection
        return False


def create_and_load(kit: Kit, cur: pymysql.cursors.Cursor, report: Report, data: Path) -> None:
    """The tables (a refused one is a harness error), each loaded (smallest first) and counted, then the views."""
    for table in kit.tables:
        cur.execute(kit.ddl(table))
    for table in sorted(kit.tables, key=lambda t: report.rows[t]):
        t0 = time.perf_counter()
        cur.execute(f'INSERT INTO {table} SELECT * FROM local("file_path" = "{table_glob(data, table)}", '
                    '"format" = "parquet")')
        report.load_s[table] = time.perf_counter() - t0
        print(f"  {table:24}{report.rows[table]:>12,} rows {report.load_s[table]:6.1f} s", flush=True)
        cur.execute(f"SELECT COUNT(*) FROM {table}")
        loaded = cur.fetchone()[0]
        if loaded != report.rows[table]:
            report.errors.append(f"{table}: loaded {loaded:,} rows, the files hold {report.rows[table]:,}")
    for name, view in kit.views:
        try:
            cur.execute(view)
        except pymysql.MySQLError as e:  # the queries reading it will say so too
            report.notes.append(f"CREATE VIEW {name} refused: {_first_line(e.args[-1] if e.args else e)}")


def duckdb_reference(kit: Kit, data: Path) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    for statement in kit.duckdb_setup:
        con.execute(statement)
    for table in kit.tables:
        con.execute(f"CREATE VIEW {table} AS SELECT * FROM read_parquet('{table_glob(data, table)}')")
    for _, view in kit.views:
        con.execute(view)
    return con


def _timed(fn: Callable[[], Any], repeat: int, slow: float) -> tuple[float, Any]:
    """One warm-up run, then best of `repeat`; a warm-up slower than `slow` seconds is the measurement."""
    t0 = time.perf_counter()
    out = fn()
    took = time.perf_counter() - t0
    if took > slow:
        return took, out
    return best_of(fn, repeat)


def _error_text(e: BaseException) -> str:
    if isinstance(e, pymysql.MySQLError) and len(e.args) >= 2:
        return f"({e.args[0]}) {e.args[1]}"
    return f"{type(e).__name__}: {e}"


def _on_duckdb(con: duckdb.DuckDBPyConnection, statements: list[str]) -> list[tuple[list[tuple], tuple[str, ...]]]:
    out = []
    for s in statements:
        cur = con.execute(s)
        rows = cur.fetchall()
        out.append((rows, tuple(d[0] for d in cur.description or ())))
    return out


def _on_dorislite(cur: pymysql.cursors.Cursor, statements: list[str]) -> list[tuple]:
    out = []
    for s in statements:
        cur.execute(s)
        out.append(cur.fetchall())
    return out


def _check(kit: Kit, con: duckdb.DuckDBPyConnection, ddb_statements: list[str], mine: list[tuple],
           theirs: list[tuple[list[tuple], tuple[str, ...]]]) -> tuple[str | None, str | None]:
    """(difference, note) over every statement; with several, each part says which statement it is about."""
    differences, notes = [], []
    for i, (sql, actual, (expected, columns)) in enumerate(zip(ddb_statements, mine, theirs, strict=True)):
        difference, note = kit.check(actual, expected, Reference(con, sql, columns))
        label = f"statement {i + 1}: " if len(mine) > 1 else ""
        if difference is not None:
            differences.append(label + difference)
        if note:
            notes.append(label + note)
    return ("; ".join(differences) or None), ("; ".join(notes) or None)


def run_queries(kit: Kit, port: int, report: Report, data: Path, repeat: int, only: list[str] | None,
                timeout: int, slow: float) -> None:
    con = duckdb_reference(kit, data)
    conn, cur = connect(port, kit.database, timeout)
    for name, text in kit.queries(report.variant).items():
        if only and name not in only:
            continue
        statements = split_statements(text)
        ddb_statements = [kit.duckdb_sql(s) for s in statements]
        try:
            k_s, k_out = _timed(lambda q=ddb_statements: _on_duckdb(con, q), repeat, slow)
        except duckdb.Error as e:
            report.errors.append(f"{name} failed in DuckDB: {_first_line(str(e))}")
            k_s, k_out = None, None
        try:
            d_s, d_out = _timed(lambda q=statements, c=cur: _on_dorislite(c, q), repeat, slow)
        except Exception as e:  # noqa: BLE001 - any failure is this query's result, the run goes on
            result = QueryResult(name, None, k_s, None, error=_error_text(e))
            if not _alive(conn):  # lost (client timeout, server crash): the next query gets a new one
                conn, cur = connect(port, kit.database, timeout)
        else:
            rows = sum(len(r) for r in d_out)
            if k_out is None:
                result = QueryResult(name, d_s, None, rows, error="no DuckDB answer to compare with")
            else:
                difference, note = _check(kit, con, ddb_statements, d_out, k_out)
                result = QueryResult(name, d_s, k_s, rows, difference=difference, note=note)
        report.queries.append(result)
        status = ("ok" if result.correct else "ERROR: " + _first_line(result.error) if result.error
                  else "DIFFERENT: " + (result.difference or ""))
        print(f"  {name:4} dorislite {_ms(result.dorislite_s):>9} ms  DuckDB {_ms(result.duckdb_s):>8} ms  "
              f"{status[:300]}", flush=True)
    conn.close()
    con.close()


def ensure_data(kit: Kit, sf: float, data: Path | None, report_gen: list[float]) -> tuple[Path, dict[str, int]]:
    """The Parquet folder for `sf` (generated if missing: the seconds go to `report_gen`) and its row counts."""
    data = Path(data or kit.out(sf))
    if not is_generated(data):
        print(f"generating {kit.name} SF {sf_label(sf)} into {data} ...", flush=True)
        t0 = time.perf_counter()
        kit.generate(sf, data)
        report_gen.append(time.perf_counter() - t0)
        print(f"  generated in {report_gen[-1]:.1f} s", flush=True)
    rows = {t: sum(pq.ParquetFile(p).metadata.num_rows for p in (data / t).glob("*.parquet")) for t in kit.tables}
    return data, rows


def run(kit: Kit, sf: float, data: Path | None = None, repeat: int = 3, only: list[str] | None = None,
        variant: str = "base", timeout: int = TIMEOUT_S, slow: float = SLOW_S, keep: bool = False) -> Report:
    """The whole benchmark."""
    gen: list[float] = []
    data, rows = ensure_data(kit, sf, data, gen)
    report = Report(sf=sf, variant=variant, rows=rows, generate_s=gen[0] if gen else None, kit_name=kit.name,
                    query_count=kit.query_count)
    work = Path(tempfile.mkdtemp(prefix=f"{kit.slug}-run-"))
    try:
        with dorislite_server(work / "data") as (port, proc):
            conn, cur = connect(port, kit.database, LOAD_TIMEOUT_S, create=True)
            print(f"loading {sum(rows.values()):,} rows ...", flush=True)
            create_and_load(kit, cur, report, data)
            conn.close()
            print(f"  load {sum(report.load_s.values()):.1f} s", flush=True)
            print("queries ...", flush=True)
            run_queries(kit, port, report, data, repeat, only, timeout, slow)
            report.peak_rss_kb = vm_hwm_kb(proc.pid)
            kids = [k for k in (vm_hwm_kb(p) for p in descendants(proc.pid)) if k]
            report.children_rss_kb = sum(kids) if kids else None
    except Exception as e:  # noqa: BLE001 - reported in the table, then the run fails
        report.errors.append(f"{type(e).__name__}: {e}")
    finally:
        if keep and report.errors:
            print(f"server storage and log kept in {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    return report


def main(kit: Kit, description: str, argv: Sequence[str] | None = None) -> None:
    """The runner's command line: run, print the report, write it to bench/out/<kit>-sf<SF>[-<variant>].md."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--sf", type=float, default=1.0)
    ap.add_argument("--data", type=Path, default=None, help=f"Parquet folder (default bench/out/{kit.slug}-sf<SF>)")
    ap.add_argument("--repeat", type=int, default=3, help="timed runs per query after a warm-up (best is reported)")
    ap.add_argument("--query", action="append", help="run only this query (repeatable), e.g. q3")
    if len(kit.variants) > 1:
        ap.add_argument("--variant", choices=kit.variants, default=kit.variants[0],
                        help="which of Doris's query folders (see the kit's queries module)")
    ap.add_argument("--timeout", type=int, default=TIMEOUT_S, help="dorislite query_timeout, seconds")
    ap.add_argument("--slow", type=float, default=SLOW_S,
                    help="a query whose warm-up takes longer (seconds) is timed by that run alone")
    ap.add_argument("--keep", action="store_true", help="keep the server's storage folder and log on a harness error")
    args = ap.parse_args(argv)
    variant = getattr(args, "variant", kit.variants[0])
    report = run(kit, args.sf, args.data, args.repeat, args.query, variant, args.timeout, args.slow, args.keep)
    text = report.markdown()
    print()
    print(text)
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"{kit.slug}-sf{sf_label(args.sf)}{'' if variant == 'base' else '-' + variant}.md"
    path.write_text(text)
    print(f"written to {path.relative_to(ROOT)}")
    if report.errors:
        raise SystemExit(1)
