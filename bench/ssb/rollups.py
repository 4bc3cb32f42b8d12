"""SSB flat with rollups (`python -m bench.ssb.run --sf 1 --rollups`): each query with rollups, without, and
in DuckDB, in one run on one server.

1. loads `lineorder_flat` (Doris's DUPLICATE table, `bench.ssb.schema.flat_ddl`) with the rollups of
   `bench.ssb.schema.ROLLUPS` (2 buckets by default, `ROLLUP_BUCKETS`), built either by the load itself
   (`--rollup-build create`, the default: `CREATE TABLE ... ROLLUP (...)`, the load writes every index) or by
   one batch `ALTER TABLE ... ADD ROLLUP` job after the load (`--rollup-build alter`, timed until
   `SHOW ALTER TABLE ROLLUP` says FINISHED) -- at SF 0.1 the first is faster (18 s vs 18 + 9 s);
2. per query: `EXPLAIN` with and without rollup selection (the index read, PREAGGREGATION), then one
   warm-up and best of --repeat with rollups (the default), with `SET enable_rollup_selection = false`
   (the base index, same server, same data), and in DuckDB over the same Parquet files;
3. checks both dorislite answers equal DuckDB's, prints the Markdown table (three times, the ratios, the
   index hit, geometric means) and writes it to bench/out/ssb-sf<SF>-rollups.md; exits 1 on a mismatch.
"""

from __future__ import annotations

import math
import os
import platform
import re
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import pymysql

from bench.harness import dorislite_server
from bench.ssb.compare import diff
from bench.ssb.generate import flat_glob, sf_label
from bench.ssb.queries import QUERIES, duckdb_sql
from bench.ssb.run import Report, _best, ensure_data, load, open_database
from bench.ssb.schema import ROLLUP_BUCKETS, ROLLUPS, add_rollups_sql

BUILDS = ("create", "alter")
TARGET = 1.0  # geomean with rollups / DuckDB
_TABLE_RE = re.compile(r"TABLE: \S+?\((\w+)\), PREAGGREGATION: (ON|OFF)")


@dataclass
class RollupQuery:
    name: str
    rollup_s: float
    base_s: float
    duckdb_s: float
    index: str  # the index EXPLAIN names with rollup selection on
    preaggregation: str
    base_index: str  # ... and with it off (must be the base)
    rows: int
    mismatch: str | None


@dataclass
class RollupReport:
    sf: float
    rows: int
    buckets: int
    build: str
    load_s: float | None = None
    build_s: float | None = None
    queries: list[RollupQuery] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def geomean(self, attr: str, over: str | None = None) -> float:
        logs = [math.log(getattr(q, attr) / (getattr(q, over) if over else 1.0)) for q in self.queries]
        return math.exp(sum(logs) / len(logs))

    @property
    def correct(self) -> bool:
        return not self.errors and len(self.queries) == len(QUERIES) and all(q.mismatch is None for q in self.queries)

    def markdown(self) -> str:
        lines = [f"### SSB flat with rollups, SF {sf_label(self.sf)} ({self.rows:,} rows, DUPLICATE KEY"
                 f"(LO_ORDERDATE, LO_ORDERKEY), {self.buckets} buckets, {len(ROLLUPS)} rollups)", "",
                 f"Machine: {os.cpu_count()} cores, Python {platform.python_version()}, duckdb {duckdb.__version__}.",
                 ""]
        how = ("`ALTER TABLE … ADD ROLLUP` after the load, until `SHOW ALTER TABLE ROLLUP` FINISHED"
               if self.build == "alter" else "`CREATE TABLE … ROLLUP (…)`: the load writes every index")
        if self.load_s is not None:
            lines.append(f"Load {self.load_s:.1f} s" + (f"; rollup build {self.build_s:.1f} s" if self.build_s else "")
                         + f" ({how}).")
            lines.append("")
        if self.queries:
            lines += ["| query | rollups ms | base ms | DuckDB ms | rollups / DuckDB | base / DuckDB | "
                      "rollups / base | index (EXPLAIN) | rows | result |",
                      "|---|---:|---:|---:|---:|---:|---:|---|---:|---|"]
            for q in self.queries:
                ok = "= DuckDB" if q.mismatch is None else "**MISMATCH**"
                lines.append(f"| {q.name} | {q.rollup_s * 1000:,.0f} | {q.base_s * 1000:,.0f} | {q.duckdb_s * 1000:,.0f} | "
                             f"{q.rollup_s / q.duckdb_s:.2f} | {q.base_s / q.duckdb_s:.2f} | {q.rollup_s / q.base_s:.2f} | "
                             f"{q.index} | {q.rows} | {ok} |")
            lines.append(f"| **geomean** | {self.geomean('rollup_s') * 1000:,.0f} | {self.geomean('base_s') * 1000:,.0f} | "
                         f"{self.geomean('duckdb_s') * 1000:,.0f} | **{self.geomean('rollup_s', 'duckdb_s'):.2f}** "
                         f"(target < {TARGET:g}) | {self.geomean('base_s', 'duckdb_s'):.2f} | "
                         f"{self.geomean('rollup_s', 'base_s'):.2f} | | | |")
        ok = f"all {len(QUERIES)} queries equal DuckDB with and without rollups" if self.correct else "FAILED"
        lines += ["", f"Correctness: {ok}"]
        lines += [f"- {q.name}: {q.mismatch}" for q in self.queries if q.mismatch]
        lines += [f"- {e}" for e in self.errors]
        return "\n".join(lines) + "\n"


def explain_index(cur: pymysql.cursors.Cursor, sql: str) -> tuple[str, str]:
    """(index name, PREAGGREGATION) from the scan line of `EXPLAIN <sql>`."""
    cur.execute("EXPLAIN " + sql)
    text = "\n".join(str(r[0]) for r in cur.fetchall())
    m = _TABLE_RE.search(text)
    return (m.group(1), m.group(2)) if m else ("?", "?")


def wait_rollups(cur: pymysql.cursors.Cursor, table: str, timeout: float = 7200.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        cur.execute("SHOW ALTER TABLE ROLLUP")
        names = [d[0] for d in cur.description]
        jobs = [dict(zip(names, r, strict=True)) for r in cur.fetchall()]
        jobs = [j for j in jobs if j["TableName"] == table]
        if jobs and all(j["State"] in ("FINISHED", "CANCELLED") for j in jobs):
            bad = [j for j in jobs if j["State"] != "FINISHED"]
            if bad:
                raise RuntimeError(f"rollup job not finished: {bad}")
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"rollup jobs did not finish in {timeout:.0f} s: {jobs}")
        time.sleep(0.2)


def run_queries(cur: pymysql.cursors.Cursor, report: RollupReport, data: Path, repeat: int,
                only: list[str] | None = None) -> None:
    con = duckdb.connect()
    con.execute(f"CREATE VIEW lineorder_flat AS SELECT * FROM read_parquet('{flat_glob(data)}')")

    def fetch(sql: str) -> list[tuple]:
        cur.execute(sql)
        return cur.fetchall()

    for name, sql in QUERIES.items():
        if only and name not in only:
            continue
        try:
            cur.execute("SET enable_rollup_selection = true")
            index, preagg = explain_index(cur, sql)
            r_s, r_rows = _best(lambda q=sql: fetch(q), repeat)
            cur.execute("SET enable_rollup_selection = false")
            base_index, _ = explain_index(cur, sql)
            b_s, b_rows = _best(lambda q=sql: fetch(q), repeat)
            cur.execute("SET enable_rollup_selection = true")
        except pymysql.MySQLError as e:
            report.errors.append(f"{name} failed on dorislite: {e}")
            continue
        ddb_sql = duckdb_sql(sql)
        k_s, k_rows = _best(lambda q=ddb_sql: con.execute(q).fetchall(), repeat)
        mismatch = None
        if (m := diff(r_rows, k_rows)) is not None:
            mismatch = f"with rollups: {m}"
        elif (m := diff(b_rows, k_rows)) is not None:
            mismatch = f"without rollups: {m}"
        elif not k_rows:
            mismatch = "empty result (the generator guarantees rows)"
        report.queries.append(RollupQuery(name, r_s, b_s, k_s, index, preagg, base_index, len(r_rows), mismatch))
        print(f"  {name}: rollups {r_s * 1000:8.1f} ms ({index}, PREAGGREGATION {preagg})  "
              f"base {b_s * 1000:8.1f} ms ({base_index})  DuckDB {k_s * 1000:8.1f} ms  "
              f"{'ok' if mismatch is None else 'MISMATCH: ' + mismatch}", flush=True)
    con.close()


def run(sf: float, data: Path | None = None, repeat: int = 3, buckets: int = ROLLUP_BUCKETS,
        build: str = "create", keep: bool = False, only: list[str] | None = None) -> RollupReport:
    if build not in BUILDS:
        raise ValueError(f"build must be one of {BUILDS}")
    data, rows = ensure_data(sf, data)
    report = RollupReport(sf=sf, rows=rows, buckets=buckets, build=build)
    work = Path(tempfile.mkdtemp(prefix="ssb-rollups-"))
    try:
        with dorislite_server(work / "data") as (port, _):
            conn, cur = open_database(port, timeout=7200)
            print(f"loading {rows:,} rows ({build}) ...", flush=True)
            loaded = Report(sf=sf, rows=rows, buckets=buckets)
            load(cur, loaded, data, work, warmup=False, rollups=build == "create")
            report.errors += loaded.errors
            report.load_s = loaded.load_s
            print(f"  load {report.load_s:.1f} s", flush=True)
            if build == "alter":
                t0 = time.perf_counter()
                cur.execute(add_rollups_sql("lineorder_flat"))
                wait_rollups(cur, "lineorder_flat")
                report.build_s = time.perf_counter() - t0
                print(f"  rollup build {report.build_s:.1f} s", flush=True)
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
