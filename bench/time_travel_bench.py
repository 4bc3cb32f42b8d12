"""Time travel under compaction (issue 17): a query at the table version 100 loads back against the same query
at the current version, and what a one-day `time_travel_retention` costs on disk while compaction runs.

    python -m bench.time_travel_bench [--rows 1000000] [--loads 1000] [--rows-per-load 20] [--buckets 4]

Twice, on fresh storage roots: the compaction bench's AGGREGATE table (bench/compaction_bench.py), with and
without `"time_travel_retention" = "1d"`, gets `--rows` rows in one load and then `--loads` small loads while
the server's compaction producer runs (the compaction bench's "on" settings). Once compaction has settled, the
bench's queries (a GROUP BY merging every rowset, a point lookup) run at the current version and `FOR VERSION
AS OF <current - 100>` through the planner, best of 5 each; the older answer is checked against the one the
same query gave when that version was current. Storage: the bytes of the visible rowsets, of the retained
(stale) ones, and of the data folder, with and without the retention. Target: as of 100 loads back within 1.5x
of the current version. Writes bench/out/time_travel.md.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pyarrow as pa
import sqlglot

from bench.compaction_bench import KEY_SPACE_FACTOR, QUERIES, batch, load_arguments, spec, version_stats
from bench.harness import bench_engine, best_of, report, scratch_dir
from planner.context import QueryContext
from planner.olap_source import OlapTableSource
from planner.query import execute_query
from server.config import DEFAULT_CONF_DIR, parse_conf
from sql.dialect import DorisLite
from storage.catalog.table_versions import RETENTION_PROPERTY
from storage.compaction.manager import CompactionManager
from storage.engine import StorageEngine
from storage.errors import StorageError

OUT = Path(__file__).resolve().parent / "out" / "time_travel.md"
BACK = 100  # versions back


def _query(engine: StorageEngine, table_id: int, sql: str):
    expression = sqlglot.parse_one(sql, dialect=DorisLite)
    ctx = QueryContext("db", lambda db, n: OlapTableSource(engine, engine.catalog.get_table_by_id(table_id),
                                                           db_name="db"))
    return lambda: execute_query(expression, ctx)


def _sorted(t: pa.Table) -> pa.Table:
    return t.sort_by([(c, "ascending") for c in t.column_names])


def _folder_bytes(root: Path) -> int:
    return sum(f.stat().st_size for f in root.rglob("*.dat"))


def run(root: Path, retained: bool, args: argparse.Namespace) -> dict:
    conf = dict(parse_conf((DEFAULT_CONF_DIR / "be.conf").read_text()))
    conf.update(cumulative_compaction_skip_window_seconds="0", min_compaction_failure_interval_sec="1",
                disable_auto_compaction="false", tablet_rowset_stale_sweep_time_sec="0")
    engine = bench_engine(root, conf)
    manager = CompactionManager(engine)
    table = engine.catalog.create_table("db", replace(spec(args.buckets), properties=(
        ((RETENTION_PROPERTY, "1d"),) if retained else ())))
    rng = np.random.default_rng(7)
    keys = np.sort(rng.choice(args.rows * KEY_SPACE_FACTOR, args.rows, replace=False))
    engine.load(table, batch(keys, rng))
    probe = int(keys[len(keys) // 2])
    current = {name: _query(engine, table.table_id, sql.format(k=probe)) for name, sql in QUERIES.items()}
    versions = engine.catalog.table_versions(table.table_id)
    last = versions[-1].version
    target = last + args.loads - BACK  # the version 100 loads before the last one (if none is refused)
    then: dict[str, pa.Table] = {}
    manager.start()
    refused = 0
    t0 = time.perf_counter()
    for _ in range(args.loads):
        try:
            engine.load(table, batch(rng.choice(keys, args.rows_per_load), rng))
            last += 1
        except StorageError as e:
            if "[E-235]" not in e.message:
                raise
            refused += 1
        if last == target and not then:  # the answers while that version is the current one
            then = {name: fn() for name, fn in current.items()}
    load_seconds = time.perf_counter() - t0
    deadline = time.monotonic() + args.settle
    previous = None
    while time.monotonic() < deadline:  # until compaction stops changing the versions
        time.sleep(1.0)
        now = version_stats(engine, table)
        if now == previous:
            break
        previous = now
    manager.wait_idle()
    manager.stop()
    target = last - BACK
    old = {name: _query(engine, table.table_id, sql.format(k=probe).replace(" FROM t", f" FROM t FOR VERSION AS OF "
                                                                                           f"{target}"))
           for name, sql in QUERIES.items()}
    out: dict = {"retained": retained, "refused": refused, "loads/s": args.loads / load_seconds,
                 "versions": version_stats(engine, table), "target": target, "last": last}
    for name in QUERIES:
        out[f"{name} current"], _ = best_of(current[name], 5)
        if retained:
            out[f"{name} as of"], got = best_of(old[name], 5)
            out[f"{name} equal"] = bool(then) and _sorted(got).equals(_sorted(then[name]))
    fresh = engine.catalog.get_table_by_id(table.table_id)
    out["visible bytes"] = sum(p.data_size for p in fresh.partitions)
    out["retained bytes"] = sum(engine.catalog.retained_bytes(table.table_id).values())
    out["folder bytes"] = _folder_bytes(engine.data_dir)
    out["stale rowsets"] = len(engine.catalog.stale_rowsets())
    engine.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    load_arguments(ap)
    ap.add_argument("--settle", type=float, default=60.0, help="seconds compaction may take to catch up")
    args = ap.parse_args()
    with scratch_dir("time_travel_bench_") as root:
        kept = run(root / "retained", True, args)
        plain = run(root / "plain", False, args)
    mib = 2 ** 20
    lines = [f"# Time travel: {args.rows:,} rows, {args.loads:,} loads of {args.rows_per_load} rows, "
             f"{args.buckets} buckets, compaction on", "",
             f"Query at version {kept['target']} (the current one is {kept['last']}: {BACK} loads back), best of 5; "
             "its answers checked against those the query gave while that version was current.", "",
             "| query | current version (ms) | 100 loads back (ms) | back / current | same answer as then |",
             "|---|---:|---:|---:|---|"]
    for name in QUERIES:
        ratio = kept[f"{name} as of"] / kept[f"{name} current"]
        lines.append(f"| {name} | {kept[f'{name} current'] * 1e3:.1f} | {kept[f'{name} as of'] * 1e3:.1f} | "
                     f"**{ratio:.2f}x** | {kept[f'{name} equal']} |")
    lines += ["", "| table | visible data (MiB) | retained for older versions (MiB) | data folder (MiB) | stale "
              "rowsets kept | versions/tablet (max / mean) | loads/s | loads refused |",
              "|---|---:|---:|---:|---:|---|---:|---:|"]
    for name, r in (("time_travel_retention 1d", kept), ("no retention", plain)):
        mx, mean = r["versions"]
        lines.append(f"| {name} | {r['visible bytes'] / mib:.1f} | {r['retained bytes'] / mib:.1f} | "
                     f"{r['folder bytes'] / mib:.1f} | {r['stale rowsets']:,} | {mx} / {mean:.1f} | "
                     f"{r['loads/s']:.0f} | {r['refused']} |")
    extra = kept["folder bytes"] - plain["folder bytes"]
    worst = max(kept[f"{name} as of"] / kept[f"{name} current"] for name in QUERIES)
    lines += ["", f"The 1-day retention keeps {extra / mib:.1f} MiB more on disk "
              f"({extra / max(plain['folder bytes'], 1) * 100:.0f}% of the table without it).",
              f"Target: 100 loads back <= 1.5x the current version: worst {worst:.2f}x -> "
              f"{'met' if worst <= 1.5 else 'NOT met'}."]
    report(OUT, lines)


if __name__ == "__main__":
    main()
