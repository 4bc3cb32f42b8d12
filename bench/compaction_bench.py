"""Compaction under a stream of small loads (issue 7): query latency, versions per tablet, write
amplification and compaction throughput, with auto compaction on and off, in one run.

    python -m bench.compaction_bench [--rows 1000000] [--loads 1000] [--rows-per-load 20] [--buckets 4]

For each mode (on, then off) a fresh storage root gets an AGGREGATE table (k BIGINT, g INT keys; v BIGINT
SUM, m INT MAX; DISTRIBUTED BY HASH(k)) loaded with `--rows` rows in one load, then `--loads` small loads
(direct engine loads, as index_bench does: `--rows-per-load` rows each, keys drawn from the loaded range
so they merge) while a thread runs a query loop (a full-scan GROUP BY that merges every rowset, and a
point lookup), each query through the planner. "on" runs the server's compaction producer
(storage.compaction.manager) with conf/be.conf's compaction settings except two that would only measure
waiting: cumulative_compaction_skip_window_seconds (`--skip-window`, default 0; 30 in be.conf: the whole
load phase lasts about a minute) and min_compaction_failure_interval_sec (`--failure-interval`, default 1;
600 in be.conf, 5 in Doris 2.x): a round that finds fewer than cumulative_compaction_min_deltas rowsets to
merge counts as a failure, as in Doris, and parks the tablet that long. "off" has disable_auto_compaction =
true.

Reported: latency over time (per tenth of the loads), versions per tablet (max / mean visible rowsets)
over time, loads refused (-235), query latency after the loads vs the same table freshly compacted (every
tablet merged into one rowset; "after the loads" is the first run of each query once the last load returned,
"settled" once the versions stopped changing), write amplification (bytes compaction wrote / bytes loaded) and compaction
throughput (rows read by compaction per second of merge time). Target: "on" after the loads within 1.5x
of the freshly compacted table, no load refused.
"""

from __future__ import annotations

import argparse
import statistics
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import sqlglot

from bench.harness import bench_engine, best_of, scratch_dir
from planner.context import QueryContext
from planner.olap_source import OlapTableSource
from planner.query import execute_query
from server.config import DEFAULT_CONF_DIR, parse_conf
from storage.catalog.model import (
    KEYS_AGG,
    Column,
    DistributionInfo,
    OlapTable,
    PartitionInfo,
    PartitionItem,
    TableSpec,
)
from storage.compaction.manager import CompactionManager
from storage.compaction.merge import compact_rowsets
from storage.compaction.version_limit import tablet_visible_rowsets
from storage.engine import StorageEngine
from storage.errors import StorageError

KEY_SPACE_FACTOR = 4  # initial keys are 0 .. 4 x rows, one in four present
QUERIES = {
    "group by": "SELECT g, SUM(v), MAX(m), COUNT(*) FROM t GROUP BY g",
    "point": "SELECT * FROM t WHERE k = {k}",
}


def spec(buckets: int) -> TableSpec:
    columns = (Column("k", "BIGINT", is_key=True, aggregation=None, nullable=False),
               Column("g", "INT", is_key=True, aggregation=None, nullable=False),
               Column("v", "BIGINT", is_key=False, aggregation="SUM"),
               Column("m", "INT", is_key=False, aggregation="MAX"))
    return TableSpec(name="t", keys_type=KEYS_AGG, columns=columns, short_key_column_count=2,
                     partition_info=PartitionInfo("UNPARTITIONED"), partition_items=(PartitionItem("t"),),
                     distribution=DistributionInfo("HASH", ("k",), buckets))


def batch(keys: np.ndarray, rng: np.random.Generator) -> pa.Table:
    n = len(keys)
    return pa.table({"k": pa.array(keys.astype(np.int64)), "g": pa.array((keys % 16).astype(np.int32)),
                     "v": pa.array(rng.integers(0, 100, n, dtype=np.int64)),
                     "m": pa.array(rng.integers(0, 1_000_000, n).astype(np.int32))})


@dataclass
class Mode:
    name: str
    samples: list[tuple[float, str, float]] = field(default_factory=list)  # (t, query, seconds)
    versions: list[tuple[int, float, int, float]] = field(default_factory=list)  # (loads, t, max, mean)
    refused: int = 0
    loaded_bytes: int = 0
    initial_bytes: int = 0
    load_seconds: float = 0.0
    after: dict[str, float] = field(default_factory=dict)
    fresh: dict[str, float] = field(default_factory=dict)
    settled: dict[str, float] = field(default_factory=dict)
    settle_seconds: float = 0.0
    settled_versions: tuple[int, float] = (0, 0.0)
    counters: object = None
    answers_equal: bool = True


def query_fn(engine: StorageEngine, table: OlapTable, sql: str):
    expression = sqlglot.parse_one(sql, read="doris")
    ctx = QueryContext("db", lambda db, n: OlapTableSource(engine, engine.catalog.get_table_by_id(table.table_id),
                                                           db_name="db"))
    return lambda: execute_query(expression, ctx)


def once(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def version_stats(engine: StorageEngine, table: OlapTable) -> tuple[int, float]:
    counts = [len(tablet_visible_rowsets(engine.catalog, t.tablet_id)) for t in engine.catalog.tablets(table.table_id)]
    return max(counts), statistics.fmean(counts)


def compact_fully(engine: StorageEngine, table: OlapTable) -> None:
    """Every tablet merged into one rowset (the "freshly compacted" reference)."""
    table = engine.catalog.get_table_by_id(table.table_id)
    for tablet in engine.catalog.tablets(table.table_id):
        rowsets = tablet_visible_rowsets(engine.catalog, tablet.tablet_id)
        if len(rowsets) > 1:
            compact_rowsets(engine, table, table.base_index, tablet, rowsets, rowsets[0].start_version,
                            rowsets[-1].end_version)


def run_mode(root: Path, on: bool, args: argparse.Namespace) -> Mode:
    mode = Mode("on" if on else "off")
    conf = {k: v for k, v in parse_conf((DEFAULT_CONF_DIR / "be.conf").read_text()).items()}
    conf.update(cumulative_compaction_skip_window_seconds=str(args.skip_window),
                min_compaction_failure_interval_sec=str(args.failure_interval),
                cumulative_compaction_min_deltas=str(args.min_deltas),
                disable_auto_compaction="false" if on else "true", tablet_rowset_stale_sweep_time_sec="0")
    engine = bench_engine(root / mode.name, conf)
    manager = CompactionManager(engine)
    table = engine.catalog.create_table("db", spec(args.buckets))
    rng = np.random.default_rng(7)
    keys = np.sort(rng.choice(args.rows * KEY_SPACE_FACTOR, args.rows, replace=False))
    engine.load(table, batch(keys, rng))
    mode.initial_bytes = sum(rs.data_size for t in engine.catalog.tablets(table.table_id)
                             for rs in tablet_visible_rowsets(engine.catalog, t.tablet_id))
    probe = int(keys[len(keys) // 2])
    queries = {name: query_fn(engine, table, sql.format(k=probe)) for name, sql in QUERIES.items()}
    baseline = {name: fn() for name, fn in queries.items()}
    commit = engine.commit

    def counted_commit(txn_id, staged, partition_ids):  # the bytes each load writes
        versions = commit(txn_id, staged, partition_ids)
        mode.loaded_bytes += sum(s.data_size for s in staged)
        return versions

    engine.commit = counted_commit
    manager.start()
    stop = threading.Event()
    started = time.perf_counter()

    def query_loop() -> None:
        while not stop.is_set():
            for name, fn in queries.items():
                t0 = time.perf_counter()
                fn()
                mode.samples.append((t0 - started, name, time.perf_counter() - t0))

    loop = threading.Thread(target=query_loop, daemon=True)
    loop.start()
    t_load = time.perf_counter()
    for i in range(args.loads):
        rows = batch(rng.choice(keys, args.rows_per_load), rng)
        try:
            engine.load(table, rows)
        except StorageError as e:
            if "[E-235]" not in e.message:
                raise
            mode.refused += 1
        if i % max(1, args.loads // 20) == 0 or i == args.loads - 1:
            mx, mean = version_stats(engine, table)
            mode.versions.append((i + 1, time.perf_counter() - started, mx, mean))
    mode.load_seconds = time.perf_counter() - t_load
    stop.set()
    loop.join()
    mx, mean = version_stats(engine, table)
    mode.versions.append((args.loads, time.perf_counter() - started, mx, mean))
    mode.after = {name: once(fn) for name, fn in queries.items()}  # the first queries after the last load
    # then let compaction catch up: until the versions stop changing for 3 s (at most --settle seconds)
    t_settle = time.perf_counter()
    last, steady_since = (mx, mean), time.perf_counter()
    while time.perf_counter() - t_settle < args.settle and time.perf_counter() - steady_since < 3:
        time.sleep(0.2)
        now = version_stats(engine, table)
        if now != last:
            last, steady_since = now, time.perf_counter()
    manager.wait_idle()
    mode.settle_seconds = max(0.0, steady_since - t_settle)
    mode.settled_versions = version_stats(engine, table)
    mode.settled = {name: best_of(fn, 5)[0] for name, fn in queries.items()}
    manager.stop()  # waits for running compactions
    mode.counters = manager.counters
    expected = {name: fn() for name, fn in queries.items()}
    compact_fully(engine, table)
    mode.fresh = {name: best_of(fn, 5)[0] for name, fn in queries.items()}
    for name, fn in queries.items():
        got = fn()
        mode.answers_equal &= got.sort_by([(c, "ascending") for c in got.column_names]).equals(
            expected[name].sort_by([(c, "ascending") for c in got.column_names]))
    del baseline
    engine.close()
    return mode


def report(modes: list[Mode], args: argparse.Namespace) -> None:
    print(f"## Compaction under small loads: {args.rows:,} rows, {args.loads:,} loads of {args.rows_per_load} rows, "
          f"{args.buckets} buckets (skip window {args.skip_window} s, failure interval {args.failure_interval} s, "
          f"min deltas {args.min_deltas})\n")
    print("| mode | loads/s | loads refused | versions/tablet after the loads (max / mean) | query | first run after "
          "the loads (ms) | settled, best of 5 (ms) | freshly compacted, best of 5 (ms) | after / fresh "
          "| settled / fresh |")
    print("|---|---:|---:|---|---|---:|---:|---:|---:|---:|")
    for m in modes:
        _, _, mx, mean = m.versions[-1]
        smx, smean = m.settled_versions
        for name in QUERIES:
            print(f"| {m.name} | {args.loads / m.load_seconds:.0f} | {m.refused} | {mx} / {mean:.1f} "
                  f"(settled after {m.settle_seconds:.0f} s: {smx} / {smean:.1f}) | {name} "
                  f"| {m.after[name] * 1e3:.1f} | {m.settled[name] * 1e3:.1f} | {m.fresh[name] * 1e3:.1f} "
                  f"| **{m.after[name] / m.fresh[name]:.2f}x** | {m.settled[name] / m.fresh[name]:.2f}x |")
    print("\nLatency over time (median ms of the queries that started in each tenth of the load phase) and "
          "versions per tablet (max) at its end:\n")
    print("| loads done | " + " | ".join(f"{m.name}: group by | {m.name}: point | {m.name}: versions"
                                        for m in modes) + " |")
    print("|---:|" + "---:|---:|---:|" * len(modes))
    for tenth in range(10):
        cells = []
        loads_done = args.loads * (tenth + 1) // 10
        for m in modes:
            end_t = next((t for n, t, _, _ in m.versions if n >= loads_done), m.versions[-1][1])
            start_t = next((t for n, t, _, _ in m.versions if n >= args.loads * tenth // 10), 0.0) if tenth else 0.0
            for name in QUERIES:
                xs = [s for t, q, s in m.samples if q == name and start_t <= t < end_t]
                cells.append(f"{statistics.median(xs) * 1e3:.1f}" if xs else "-")
            cells.append(str(next((mx for n, _, mx, _ in m.versions if n >= loads_done), m.versions[-1][2])))
        print(f"| {loads_done} | " + " | ".join(cells) + " |")
    on = next(m for m in modes if m.name == "on")
    c = on.counters
    total_loaded = on.loaded_bytes + on.initial_bytes
    print(f"\nCompaction (on): {c.cumulative_tasks} cumulative + {c.base_tasks} base tasks, {c.rowsets_merged:,} rowsets "
          f"merged, {c.rows_merged:,} rows read -> {c.rows_written:,} written, {c.bytes_written / 2**20:.1f} MiB written "
          f"in {c.seconds:.1f} s of merge time")
    print(f"Write amplification: {c.bytes_written / max(on.loaded_bytes, 1):.1f}x the small loads' bytes "
          f"({on.loaded_bytes / 2**20:.2f} MiB), {c.bytes_written / max(total_loaded, 1):.2f}x all bytes loaded "
          f"({total_loaded / 2**20:.1f} MiB, the initial load included)")
    print(f"Compaction throughput: {c.rows_merged / max(c.seconds, 1e-9):,.0f} rows/s "
          f"({c.bytes_read / 2**20 / max(c.seconds, 1e-9):.1f} MiB/s of input)")
    print("Same answers after the full compaction: " + ", ".join(f"{m.name}: {m.answers_equal}" for m in modes))
    ratio = on.after["group by"] / on.fresh["group by"]
    settled = on.settled["group by"] / on.fresh["group by"]
    print(f"\nTarget: on / freshly compacted <= 1.5x (group by): first run after the loads {ratio:.2f}x -> "
          f"{'met' if ratio <= 1.5 else 'NOT met'}; settled ({on.settle_seconds:.0f} s later) {settled:.2f}x -> "
          f"{'met' if settled <= 1.5 else 'NOT met'}; "
          f"loads refused: {on.refused} -> {'met' if on.refused == 0 else 'NOT met'}")


def load_arguments(ap: argparse.ArgumentParser) -> None:
    """The table and its stream of small loads (shared with bench/time_travel_bench.py)."""
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--loads", type=int, default=1000)
    ap.add_argument("--rows-per-load", type=int, default=20)
    ap.add_argument("--buckets", type=int, default=4)


def main() -> None:
    ap = argparse.ArgumentParser()
    load_arguments(ap)
    ap.add_argument("--skip-window", type=int, default=0)
    ap.add_argument("--failure-interval", type=int, default=1)
    ap.add_argument("--min-deltas", type=int, default=5, help="be.conf cumulative_compaction_min_deltas")
    ap.add_argument("--settle", type=float, default=60.0, help="seconds compaction may take to catch up")
    args = ap.parse_args()
    with scratch_dir("compaction_bench_") as root:
        modes = [run_mode(root, True, args), run_mode(root, False, args)]
        report(modes, args)


if __name__ == "__main__":
    main()
