"""Segment indexes: short key point lookup, bloom filter and bitmap index queries vs the same table without
those indexes vs DuckDB, on one DUPLICATE table, in one run.

    python -m bench.index_bench [--rows N] [--repeat R]

Two tables hold the same rows (sorted by k, DISTRIBUTED BY HASH(k) as a point-lookup table is): `t_idx` with
`bloom_filter_columns = "hc"` and a BITMAP index on `lc`, `t_plain` without them. Queries run from their text as
the server runs them (the plan cache's plan when valid, else parse + plan), timed best-of-R with warm caches,
as DuckDB's `con.sql(text)` is; the indexed query is also timed parsed and planned every time. Each answer is
checked against DuckDB's.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import sqlglot

from bench.harness import bench_engine, best_of, scratch_dir
from planner.context import QueryContext
from planner.olap_source import OlapTableSource
from planner.plan_cache import PlanCache
from planner.query import execute_cached, execute_query
from storage.catalog.model import (
    KEYS_DUP,
    Column,
    DistributionInfo,
    IndexDef,
    PartitionInfo,
    PartitionItem,
    TableSpec,
)
from storage.compaction.merge import compact_rowsets
from storage.engine import StorageEngine
from storage.stats import ScanStats

BATCH = 2_000_000
BUDGET = 0.5  # seconds of runs per timing at least (best_of)
BUCKETS = 4


def make_batch(start: int, rows: int, total: int, rng: np.random.Generator) -> pa.Table:
    k = np.arange(start, start + rows, dtype=np.int64)
    return pa.table({
        "k": pa.array(k),
        "hc": pa.array(rng.integers(0, 1 << 40, rows, dtype=np.int64)),  # high cardinality, random order
        "lc": pa.array(rng.integers(0, 2000, rows, dtype=np.int32)),  # low cardinality, random order
        "v": pa.array(rng.integers(0, 1_000_000, rows, dtype=np.int64)),
    })


def spec(name: str, indexed: bool) -> TableSpec:
    columns = (Column("k", "BIGINT", is_key=True, aggregation=None, nullable=False),
               Column("hc", "BIGINT", is_key=False, aggregation="NONE"),
               Column("lc", "INT", is_key=False, aggregation="NONE"),
               Column("v", "BIGINT", is_key=False, aggregation="NONE"))
    return TableSpec(
        name=name, keys_type=KEYS_DUP, columns=columns, short_key_column_count=1,
        partition_info=PartitionInfo("UNPARTITIONED"), partition_items=(PartitionItem(name),),
        distribution=DistributionInfo("HASH", ("k",), BUCKETS),
        properties=(("bloom_filter_columns", "hc"),) if indexed else (),
        index_defs=(IndexDef("idx_lc", ("lc",), "BITMAP"),) if indexed else (),
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=20_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    with scratch_dir("index_bench_") as root:
        run(root, args.rows, args.repeat)


def run(root: Path, rows: int, repeat: int) -> None:
    engine = bench_engine(root / "storage")
    tables = {name: engine.catalog.create_table("db", spec(name, name == "t_idx")) for name in ("t_idx", "t_plain")}
    rng = np.random.default_rng(11)
    con = duckdb.connect()
    t0 = time.perf_counter()
    probe_hc = None
    for start in range(0, rows, BATCH):
        batch = make_batch(start, min(BATCH, rows - start), rows, rng)
        if probe_hc is None:
            probe_hc = int(batch.column("hc")[12345 % batch.num_rows].as_py())
        for table in tables.values():
            engine.load(table, batch)
        con.register("b", batch)
        con.execute("CREATE TABLE IF NOT EXISTS t AS SELECT * FROM b LIMIT 0")
        con.execute("INSERT INTO t SELECT * FROM b")
        con.unregister("b")
    print(f"loaded {rows:,} rows into both tables and DuckDB in {time.perf_counter() - t0:.1f} s\n")

    point = rows // 2 + 7
    queries = [
        ("point lookup on sort key", f"SELECT k, hc, lc, v FROM {{t}} WHERE k = {point}"),
        ("bloom filter: hc equality", f"SELECT k, hc, lc, v FROM {{t}} WHERE hc = {probe_hc}"),
        # count(*) alone is answered by the bitmap index without reading a data page; sum(v) must read v
        # wherever a row matches, and with lc in random order that is nearly every page of v
        ("bitmap: lc equality, count(*)", "SELECT count(*) FROM {t} WHERE lc = 1234"),
        ("bitmap: lc range, count(*)", "SELECT count(*) FROM {t} WHERE lc >= 1990"),
        ("bitmap: lc equality, sum(v)", "SELECT count(*), sum(v) FROM {t} WHERE lc = 1234"),
        ("bitmap: lc range, sum(v)", "SELECT count(*), sum(v) FROM {t} WHERE lc >= 1990"),
    ]
    measure(engine, tables, con, queries, repeat)
    # then as Doris's background compaction leaves them: one rowset per tablet
    t0 = time.perf_counter()
    for table in tables.values():
        compact_fully(engine, table)
    print(f"\nafter compacting every tablet of both tables to one rowset ({time.perf_counter() - t0:.1f} s):\n")
    tables = {name: engine.catalog.get_table_by_id(t.table_id) for name, t in tables.items()}
    measure(engine, tables, con, queries, repeat)
    engine.close()


def compact_fully(engine: StorageEngine, table) -> None:
    """Merge each tablet's visible rowsets into one (what cumulative then base compaction end with)."""
    versions = engine.snapshot(table)
    for tablet in engine.catalog.tablets(table.table_id):
        rowsets = engine.catalog.rowsets(tablet.tablet_id, versions[tablet.partition_id])
        if len(rowsets) > 1:
            compact_rowsets(engine, table, table.base_index, tablet, rowsets, rowsets[0].start_version,
                            rowsets[-1].end_version)


def measure(engine: StorageEngine, tables: dict, con, queries: list[tuple[str, str]], repeat: int) -> None:
    print("| query | indexed (ms) | indexed, planned each run (ms) | no index (ms) | DuckDB (ms) | speedup vs no index "
          "| vs DuckDB | key-range rows | zone-map rows | bloom rows | bitmap rows | pages read / skipped |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    cache = PlanCache(lambda: engine.catalog.generation)
    for title, sql in queries:
        times, answers, stats = {}, {}, {}
        for name, table in tables.items():
            text = sql.format(t=name)
            scans: list = []
            ctx = QueryContext("db", lambda db, n, table=table, scans=scans: OlapTableSource(
                engine, table, db_name="db", profile=scans))

            def run(text=text, ctx=ctx, scans=scans) -> pa.Table:  # what the server does per statement
                ctx.now = None
                out = execute_cached(text, ctx, cache, scans)
                if out is None:
                    out = execute_query(sqlglot.parse_one(text, read="doris"), ctx, cache, text, scans)
                return out

            times[name], answers[name] = best_of(run, repeat, BUDGET)
            if name == "t_idx":
                times["planned"], _ = best_of(
                    lambda text=text, ctx=ctx: execute_query(sqlglot.parse_one(text, read="doris"), ctx), repeat, BUDGET)
            total = ScanStats()
            for s in scans[-1:]:  # the last run's scan
                total.merge(s.stats)
            stats[name] = total
        duck_sql = sql.format(t="t")
        times["duck"], duck = best_of(lambda q=duck_sql: con.sql(q).to_arrow_table(), repeat, BUDGET)
        for name in tables:
            got = sorted(tuple(r.values()) for r in answers[name].to_pylist())
            want = sorted(tuple(r.values()) for r in duck.to_pylist())
            assert got == want, (title, name, got[:3], want[:3])
        s = stats["t_idx"]
        ms = {k: v * 1000 for k, v in times.items()}
        print(f"| {title} | {ms['t_idx']:.2f} | {ms['planned']:.2f} | {ms['t_plain']:.2f} | {ms['duck']:.2f} "
              f"| {times['t_plain'] / times['t_idx']:.1f}x | {times['duck'] / times['t_idx']:.2f}x "
              f"| {s.rows_key_range_filtered:,} | {s.rows_stats_filtered:,} | {s.rows_bloom_filter_filtered:,} "
              f"| {s.rows_bitmap_index_filtered:,} | {s.pages_read:,} / {s.pages_skipped:,} |")


if __name__ == "__main__":
    main()
