"""SSB flat benchmark: load rate vs Spark's Parquet write, 13 query times vs DuckDB, results checked.

    python -m bench.ssb.run --sf 1 [--repeat 3] [--load-repeat 1] [--buckets 8] [--data DIR] [--skip-spark]
    python -m bench.ssb.run --sf 1 --rollups [--rollup-build create|alter] [--buckets 2]   (bench.ssb.rollups)

In one run:

1. generates the SF's Parquet files if they are missing (`bench.ssb.generate`);
2. starts a dorislite server (`python -m server serve`, free port, temporary storage root), creates
   `lineorder_flat` (Doris's SSB-flat DDL, `bench.ssb.schema`) and loads it with
   `INSERT INTO lineorder_flat SELECT * FROM local("file_path" = "<glob>", "format" = "parquet")`,
   timing the statement -> rows/s. A small warm-up load into another table first starts the server's
   Spark, so the timed load measures loading, not JVM start-up;
3. measures Spark writing the same files as Parquet with the server's Spark settings
   (`bench.ssb.spark_write`, its own process) -> rows/s; the load/Spark ratio is the figure (target >= 0.5);
4. runs each query over MySQL (pymysql) and in DuckDB over the same Parquet files (`read_parquet`
   view), one warm-up then best of --repeat each, checks every result equals DuckDB's (rows in any order,
   numeric tolerance) and reports per-query times, ratios and their geometric mean (target <= 5);
5. prints a Markdown table and writes it to bench/out/ssb-sf<SF>.md. Exits 1 when a result differs
   (after printing everything), so a wrong answer is never just a line in a table.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import pyarrow.parquet as pq
import pymysql

from bench.harness import best_of, dorislite_server
from bench.ssb.compare import diff
from bench.ssb.generate import default_out, flat_glob, generate, is_generated, sf_label
from bench.ssb.queries import QUERIES, duckdb_sql
from bench.ssb.schema import DEFAULT_BUCKETS, ROLLUP_BUCKETS, flat_ddl

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "bench" / "out"
DATABASE = "ssb"
LOAD_TARGET = 0.5
QUERY_TARGET = 5.0


@dataclass
class QueryResult:
    name: str
    dorislite_s: float
    duckdb_s: float
    rows: int
    mismatch: str | None

    @property
    def ratio(self) -> float:
        return self.dorislite_s / self.duckdb_s


@dataclass
class Report:
    sf: float
    rows: int
    buckets: int
    load_repeat: int = 1
    load_s: float | None = None
    warmup_load_s: float | None = None
    spark_s: float | None = None
    queries: list[QueryResult] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @property
    def load_rate(self) -> float | None:
        return self.rows / self.load_s if self.load_s else None

    @property
    def spark_rate(self) -> float | None:
        return self.rows / self.spark_s if self.spark_s else None

    @property
    def geomean(self) -> float | None:
        if not self.queries:
            return None
        return math.exp(sum(math.log(q.ratio) for q in self.queries) / len(self.queries))

    @property
    def correct(self) -> bool:
        return not self.errors and len(self.queries) == len(QUERIES) and all(q.mismatch is None for q in self.queries)

    def markdown(self) -> str:
        lines = [f"### SSB flat, SF {sf_label(self.sf)} ({self.rows:,} rows, {self.buckets} buckets)", "",
                 f"Machine: {os.cpu_count()} cores, Python {platform.python_version()}, "
                 f"duckdb {duckdb.__version__}.", ""]
        best = f", best of {self.load_repeat}" if self.load_repeat > 1 else ""
        lines += [f"| load{best} | rows/s | seconds |", "|---|---:|---:|"]
        if self.load_s:
            lines.append(f"| dorislite `INSERT … SELECT * FROM local(…)` | {self.load_rate:,.0f} | {self.load_s:.1f} |")
        if self.spark_s:
            lines.append(f"| Spark `read.parquet → write.parquet` | {self.spark_rate:,.0f} | {self.spark_s:.1f} |")
        if self.load_s and self.spark_s:
            ratio = self.load_rate / self.spark_rate
            lines.append(f"| **ratio dorislite / Spark** | **{ratio:.2f}** (target ≥ {LOAD_TARGET}) | |")
        if self.warmup_load_s is not None:
            lines += ["", f"(Warm-up load before the timed one, includes starting the server's Spark: "
                          f"{self.warmup_load_s:.1f} s.)"]
        if self.queries:
            lines += ["", "| query | dorislite ms | DuckDB ms | ratio | rows | result |",
                      "|---|---:|---:|---:|---:|---|"]
            for q in self.queries:
                ok = "= DuckDB" if q.mismatch is None else "**MISMATCH**"
                lines.append(f"| {q.name} | {q.dorislite_s * 1000:,.0f} | {q.duckdb_s * 1000:,.0f} | "
                             f"{q.ratio:.2f} | {q.rows} | {ok} |")
            lines.append(f"| **geomean** | | | **{self.geomean:.2f}** (target ≤ {QUERY_TARGET:g}) | | |")
        lines += ["", f"Correctness: {'all ' + str(len(QUERIES)) + ' queries equal DuckDB' if self.correct else 'FAILED'}"]
        for q in self.queries:
            if q.mismatch:
                lines.append(f"- {q.name}: {q.mismatch}")
        lines += [f"- {e}" for e in self.errors]
        return "\n".join(lines) + "\n"


def _local_insert(table: str, glob: str) -> str:
    return f'INSERT INTO {table} SELECT * FROM local("file_path" = "{glob}", "format" = "parquet")'


def _best(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    fn()  # warm-up: caches, lazily built state
    return best_of(fn, repeat)


def write_warmup_file(data: Path, work: Path) -> Path:
    """The first 10,000 flat rows: the warm-up input of both the server's load and Spark's write."""
    warm = work / "warmup.parquet"
    if not warm.exists():
        first = sorted((data / "lineorder_flat").glob("*.parquet"))[0]
        pq.write_table(pq.read_table(first).slice(0, 10_000), warm)
    return warm


def load(cur: pymysql.cursors.Cursor, report: Report, data: Path, work: Path, warmup: bool = True,
         load_repeat: int = 1, rollups: bool = False) -> None:
    """Warm-up load of a small file into a scratch table, then the timed load of every flat file (best
    of `load_repeat`, each into a freshly created table)."""
    if warmup:
        cur.execute(flat_ddl("lineorder_flat_warmup", report.buckets))
        t0 = time.perf_counter()
        cur.execute(_local_insert("lineorder_flat_warmup", str(write_warmup_file(data, work))))
        report.warmup_load_s = time.perf_counter() - t0
        cur.execute("DROP TABLE lineorder_flat_warmup")

    for i in range(load_repeat):
        if i:
            cur.execute("DROP TABLE lineorder_flat")
        cur.execute(flat_ddl("lineorder_flat", report.buckets, rollups=rollups))
        t0 = time.perf_counter()
        cur.execute(_local_insert("lineorder_flat", flat_glob(data)))
        seconds = time.perf_counter() - t0
        report.load_s = min(seconds, report.load_s or seconds)
    cur.execute("SELECT COUNT(*) FROM lineorder_flat")
    loaded = cur.fetchone()[0]
    if loaded != report.rows:
        report.errors.append(f"loaded {loaded:,} rows, the files hold {report.rows:,}")


def spark_write(report: Report, data: Path, work: Path, repeat: int = 1) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "bench.ssb.spark_write", "--src", flat_glob(data), "--repeat", str(repeat),
         "--warmup", str(write_warmup_file(data, work)), "--dst", str(work / "spark-out")],
        cwd=ROOT, capture_output=True, text=True)
    if out.returncode != 0:
        report.errors.append(f"Spark write failed: {out.stderr[-2000:]}")
        return
    result = json.loads(out.stdout.strip().splitlines()[-1])
    if result["rows"] != report.rows:
        report.errors.append(f"Spark wrote {result['rows']:,} rows, expected {report.rows:,}")
    report.spark_s = result["seconds"]
    shutil.rmtree(work / "spark-out", ignore_errors=True)


def run_queries(cur: pymysql.cursors.Cursor, report: Report, data: Path, repeat: int,
                only: list[str] | None = None) -> None:
    con = duckdb.connect()
    con.execute(f"CREATE VIEW lineorder_flat AS SELECT * FROM read_parquet('{flat_glob(data)}')")

    def on_dorislite(sql: str) -> Callable[[], tuple]:
        def go() -> tuple:
            cur.execute(sql)
            return cur.fetchall()
        return go

    for name, sql in QUERIES.items():
        if only and name not in only:
            continue
        ddb_sql = duckdb_sql(sql)
        try:
            d_s, d_rows = _best(on_dorislite(sql), repeat)
        except pymysql.MySQLError as e:
            report.errors.append(f"{name} failed on dorislite: {e}")
            continue
        k_s, k_rows = _best(lambda q=ddb_sql: con.execute(q).fetchall(), repeat)
        mismatch = diff(d_rows, k_rows)
        if not k_rows:
            mismatch = mismatch or "empty result (the generator guarantees rows)"
        report.queries.append(QueryResult(name, d_s, k_s, len(d_rows), mismatch))
        print(f"  {name}: dorislite {d_s * 1000:8.1f} ms  DuckDB {k_s * 1000:8.1f} ms  "
              f"{'ok' if mismatch is None else 'MISMATCH: ' + mismatch}", flush=True)
    con.close()


def ensure_data(sf: float, data: Path | None) -> tuple[Path, int]:
    """The Parquet folder for `sf` (generated if missing) and its lineorder_flat row count."""
    data = Path(data or default_out(sf))
    if not is_generated(data):
        print(f"generating SSB SF {sf_label(sf)} into {data} ...", flush=True)
        generate(sf, data)
    rows = sum(pq.ParquetFile(p).metadata.num_rows for p in (data / "lineorder_flat").glob("*.parquet"))
    return data, rows


def open_database(port: int, timeout: int) -> tuple[pymysql.connections.Connection, pymysql.cursors.Cursor]:
    """A connection to a fresh server with the benchmark database created and in use."""
    conn = pymysql.connect(host="127.0.0.1", port=port, user="root", password="", autocommit=True,
                           read_timeout=timeout, write_timeout=timeout)
    cur = conn.cursor()
    cur.execute(f"CREATE DATABASE {DATABASE}")
    cur.execute(f"USE {DATABASE}")
    return conn, cur


def run(sf: float, data: Path | None = None, repeat: int = 3, buckets: int = DEFAULT_BUCKETS,
        spark: bool = True, keep: bool = False, only: list[str] | None = None, warmup: bool = True,
        load_repeat: int = 1) -> Report:
    """The whole benchmark; `warmup=False` skips the warm-up load (tests: correctness, not timing)."""
    data, rows = ensure_data(sf, data)
    report = Report(sf=sf, rows=rows, buckets=buckets, load_repeat=load_repeat)
    work = Path(tempfile.mkdtemp(prefix="ssb-run-"))
    try:
        with dorislite_server(work / "data") as (port, _):
            conn, cur = open_database(port, timeout=3600)
            print(f"loading {rows:,} rows ...", flush=True)
            load(cur, report, data, work, warmup, load_repeat)
            print(f"  load {report.load_s:.1f} s = {report.load_rate:,.0f} rows/s", flush=True)
            if spark:
                print("Spark Parquet write ...", flush=True)
                spark_write(report, data, work, load_repeat)
                if report.spark_s:
                    print(f"  Spark {report.spark_s:.1f} s = {report.spark_rate:,.0f} rows/s", flush=True)
            print("queries ...", flush=True)
            run_queries(cur, report, data, repeat, only)
            conn.close()
    except Exception as e:  # noqa: BLE001 - reported in the table, then the run fails
        report.errors.append(f"{type(e).__name__}: {e}")
        if keep:
            print(f"server storage and log kept in {work}")
    finally:
        if not keep or report.correct:
            shutil.rmtree(work, ignore_errors=True)
    return report


def _write(text: str, name: str) -> None:
    print()
    print(text)
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / name
    path.write_text(text)
    print(f"written to {path.relative_to(ROOT)}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sf", type=float, default=1.0)
    ap.add_argument("--data", type=Path, default=None, help="Parquet folder (default bench/out/ssb-sf<SF>)")
    ap.add_argument("--repeat", type=int, default=3, help="timed runs per query (best is reported)")
    ap.add_argument("--load-repeat", type=int, default=1,
                    help="timed loads and Spark writes (best is reported; the shared machine is noisy)")
    ap.add_argument("--buckets", type=int, default=None,
                    help=f"buckets per partition (default {DEFAULT_BUCKETS}; {ROLLUP_BUCKETS} with --rollups)")
    ap.add_argument("--skip-spark", action="store_true", help="skip the Spark Parquet write baseline")
    ap.add_argument("--query", action="append", help="run only this query (repeatable), e.g. Q2.1")
    ap.add_argument("--keep", action="store_true", help="keep the server's storage folder on failure")
    ap.add_argument("--rollups", action="store_true",
                    help="rollups mode (bench.ssb.rollups): each query with rollups, without, and in DuckDB, "
                         "the index hit, written to bench/out/ssb-sf<SF>-rollups.md (no Spark, no warm-up load)")
    ap.add_argument("--rollup-build", choices=("create", "alter"), default="create",
                    help="rollups mode: CREATE TABLE ... ROLLUP, the load writes them (default, faster), or "
                         "ALTER TABLE ADD ROLLUP after the load, timed until FINISHED")
    args = ap.parse_args()
    if args.rollups:
        from bench.ssb import rollups

        result = rollups.run(args.sf, args.data, args.repeat, args.buckets or ROLLUP_BUCKETS, args.rollup_build,
                             args.keep, args.query)
        _write(result.markdown(), f"ssb-sf{sf_label(args.sf)}-rollups.md")
        if not result.correct:
            raise SystemExit(1)
        return
    report = run(args.sf, args.data, args.repeat, args.buckets or DEFAULT_BUCKETS, not args.skip_spark, args.keep, args.query,
                 load_repeat=args.load_repeat)
    _write(report.markdown(), f"ssb-sf{sf_label(args.sf)}.md")
    if not report.correct:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
