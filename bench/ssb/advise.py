"""The rollup advisor on SSB flat (`python -m bench.ssb.advise --sf 1`): from a log of the 13 queries on a base-only
`lineorder_flat`, `ADMIN SHOW ROLLUP ADVICE` proposes rollups; the bench builds them (ALTER TABLE ... ADD
ROLLUP, as the advice prints it) and times the suite, then builds the hand-designed rollups of
bench/ssb/schema.py instead and times it again, on the same server and data.

Reported: the advice (rollups, the queries each serves, its measured speedup on the sample, its estimated size),
the advisor's own run time, and per query the best of --repeat with the advised rollups, with the hand-designed
ones and on the base index, each answer checked against DuckDB. Target: the advised geomean within 1.3x of the
hand-designed one. Writes bench/out/ssb-sf<SF>-advice.md.
"""

from __future__ import annotations

import argparse
import math
import shutil
import tempfile
import time
from pathlib import Path

import duckdb
import pymysql

from bench.harness import dorislite_server, report
from bench.ssb.compare import diff
from bench.ssb.generate import flat_glob, sf_label
from bench.ssb.queries import QUERIES, duckdb_sql
from bench.ssb.rollups import explain_index, wait_rollups
from bench.ssb.run import Report, _best, ensure_data, load, open_database
from bench.ssb.schema import ROLLUP_BUCKETS, ROLLUPS, add_rollups_sql

TABLE = "lineorder_flat"
TARGET = 1.3  # advised geomean / hand-designed geomean
OUT = Path(__file__).resolve().parents[1] / "out"


def _rows(cur: pymysql.cursors.Cursor, sql: str) -> list[dict]:
    cur.execute(sql)
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]


def _suite(cur: pymysql.cursors.Cursor, repeat: int, expected: dict[str, list]) -> dict[str, tuple[float, str, str]]:
    """name -> (best seconds, index read, mismatch or '')."""
    out = {}
    for name, sql in QUERIES.items():
        index, _ = explain_index(cur, sql)
        seconds, rows = _best(lambda q=sql: (cur.execute(q), cur.fetchall())[1], repeat)
        mismatch = diff(rows, expected[name]) or ""
        out[name] = (seconds, index, mismatch)
        print(f"  {name}: {seconds * 1000:8.1f} ms ({index}) {mismatch}", flush=True)
    return out


def _geomean(times: dict[str, tuple[float, str, str]]) -> float:
    return math.exp(sum(math.log(t[0]) for t in times.values()) / len(times))


def run(sf: float, data: Path | None, repeat: int, buckets: int) -> list[str]:
    data, rows = ensure_data(sf, data)
    con = duckdb.connect()
    con.execute(f"CREATE VIEW {TABLE} AS SELECT * FROM read_parquet('{flat_glob(data)}')")
    expected = {name: con.execute(duckdb_sql(sql)).fetchall() for name, sql in QUERIES.items()}
    work = Path(tempfile.mkdtemp(prefix="ssb-advice-"))
    try:
        with dorislite_server(work / "data") as (port, _):
            conn, cur = open_database(port, timeout=7200)
            print(f"loading {rows:,} rows (base index only) ...", flush=True)
            load(cur, Report(sf=sf, rows=rows, buckets=buckets), data, work, warmup=False, rollups=False)
            print("the workload, once (the scan log) ...", flush=True)
            base = _suite(cur, 1, expected)
            t0 = time.perf_counter()
            advice = _rows(cur, f"ADMIN SHOW ROLLUP ADVICE FOR {TABLE}")
            advise_s = time.perf_counter() - t0
            print(f"advice in {advise_s:.1f} s: {len(advice)} rollups", flush=True)
            t0 = time.perf_counter()
            for a in advice:
                cur.execute(a["Statement"])
                wait_rollups(cur, TABLE)
            build_s = time.perf_counter() - t0
            print("with the advised rollups ...", flush=True)
            advised = _suite(cur, repeat, expected)
            cur.execute(f"ALTER TABLE {TABLE} DROP ROLLUP " + ", ".join(a["RollupName"] for a in advice))
            cur.execute(add_rollups_sql(TABLE))
            wait_rollups(cur, TABLE)
            print("with the hand-designed rollups ...", flush=True)
            hand = _suite(cur, repeat, expected)
            cur.execute("SET enable_rollup_selection = false")
            print("base index ...", flush=True)
            base = _suite(cur, repeat, expected)
            conn.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    ratio = _geomean(advised) / _geomean(hand)
    lines = [f"# Rollup advice on SSB flat, SF {sf_label(sf)} ({rows:,} rows, {buckets} buckets)", "",
             f"`ADMIN SHOW ROLLUP ADVICE FOR {TABLE}` after one run of the 13 queries on the base index: "
             f"{len(advice)} rollups in **{advise_s:.1f} s** (the advisor's own run: sample, build, replay); "
             f"building them took {build_s:.1f} s.", "",
             "| rank | rollup | keys | columns | queries | speedup on the sample | estimated size |",
             "|---:|---|---|---|---:|---:|---:|"]
    lines += [f"| {a['Rank']} | {a['RollupName']} | {a['KeyColumns']} | {a['Columns']} | {a['Queries']} | "
              f"{a['Speedup']}x | {a['EstimatedSize']} |" for a in advice]
    if advice:
        lines += ["", "The first row as `ADMIN SHOW ROLLUP ADVICE ... \\G` prints it:", "", "```"]
        lines += [f"{k}: {v}" for k, v in advice[0].items()] + ["```"]
    lines += ["", f"| query | advised ms (index) | hand-designed ms ({len(ROLLUPS)} rollups) (index) | base ms | "
              "advised / hand | correct |", "|---|---:|---:|---:|---:|---|"]
    for name in QUERIES:
        a, h, b = advised[name], hand[name], base[name]
        ok = "= DuckDB" if not (a[2] or h[2] or b[2]) else f"**MISMATCH** {a[2] or h[2] or b[2]}"
        lines.append(f"| {name} | {a[0] * 1000:,.1f} ({a[1]}) | {h[0] * 1000:,.1f} ({h[1]}) | {b[0] * 1000:,.1f} | "
                     f"{a[0] / h[0]:.2f} | {ok} |")
    lines.append(f"| **geomean** | {_geomean(advised) * 1000:,.1f} | {_geomean(hand) * 1000:,.1f} | "
                 f"{_geomean(base) * 1000:,.1f} | **{ratio:.2f}** | |")
    lines += ["", f"Target: advised within {TARGET}x of the hand-designed rollups: {ratio:.2f}x -> "
              f"{'met' if ratio <= TARGET else 'NOT met'}."]
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sf", type=float, default=1.0)
    ap.add_argument("--data", type=Path, default=None)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--buckets", type=int, default=ROLLUP_BUCKETS)
    args = ap.parse_args()
    report(OUT / f"ssb-sf{sf_label(args.sf)}-advice.md", run(args.sf, args.data, args.repeat, args.buckets))


if __name__ == "__main__":
    main()
