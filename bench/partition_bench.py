"""Partition pruning: a query on one day of a 365-partition table vs the same query on an unpartitioned
copy of the same rows, in one run.

    python -m bench.partition_bench [--rows-per-day N] [--repeat R]

Both tables are DUPLICATE KEY(event_id) with a DATE column `dt` (not a key, so neither the short key index
nor the sort order helps the unpartitioned copy), loaded the same way: one load per 30 days of data, rows
shuffled within the load. `t_part` is PARTITION BY RANGE(dt) with one partition per day of 2024 (the
batch FROM .. TO .. INTERVAL 1 DAY form) and BUCKETS 2; `t_flat` has one partition and BUCKETS 2. Queries
run through the planner (execute_query over OlapTableSource), best of R; answers are checked against each
other. EXPLAIN's partition line shows what the planner kept.
"""

from __future__ import annotations

import argparse
import datetime as dt
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import sqlglot

from bench.harness import bench_engine, best_of, scratch_dir
from planner.context import QueryContext
from planner.explain import explain_query
from planner.olap_source import OlapTableSource
from planner.query import execute_query
from storage.catalog.model import KEYS_DUP, Column, DistributionInfo, PartitionInfo, PartitionItem, TableSpec

DAYS = 366  # 2024 is a leap year: 2024-01-01 .. 2024-12-31
FIRST = dt.date(2024, 1, 1)


def spec(name: str, partitioned: bool) -> TableSpec:
    columns = (Column("event_id", "BIGINT", is_key=True, aggregation=None, nullable=False),
               Column("dt", "DATE", is_key=False, aggregation="NONE", nullable=False),
               Column("user_id", "INT", is_key=False, aggregation="NONE"),
               Column("v", "BIGINT", is_key=False, aggregation="NONE"))
    if partitioned:
        days = [FIRST + dt.timedelta(days=i) for i in range(DAYS)]
        items = tuple(PartitionItem(f"p{d:%Y%m%d}", lower=(d.isoformat(),),
                                    upper=((d + dt.timedelta(days=1)).isoformat(),)) for d in days)
        info = PartitionInfo("RANGE", ("dt",))
    else:
        items, info = (PartitionItem(name),), PartitionInfo("UNPARTITIONED")
    return TableSpec(name=name, keys_type=KEYS_DUP, columns=columns, short_key_column_count=1,
                     partition_info=info, partition_items=items,
                     distribution=DistributionInfo("HASH", ("event_id",), 2))


def batches(rows_per_day: int, rng: np.random.Generator):
    for start in range(0, DAYS, 30):
        days = np.arange(start, min(start + 30, DAYS))
        n = len(days) * rows_per_day
        day = np.repeat(days, rows_per_day)
        rng.shuffle(day)
        first_id = start * rows_per_day
        yield pa.table({
            "event_id": pa.array(np.arange(first_id, first_id + n, dtype=np.int64)),
            "dt": pa.array(np.datetime64(FIRST) + day.astype("timedelta64[D]")),
            "user_id": pa.array(rng.integers(0, 100_000, n, dtype=np.int32)),
            "v": pa.array(rng.integers(0, 1000, n, dtype=np.int64)),
        })


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows-per-day", type=int, default=20_000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    with scratch_dir("partition_bench_") as root:
        run(root, args.rows_per_day, args.repeat)


def run(root: Path, rows_per_day: int, repeat: int) -> None:
    engine = bench_engine(root / "storage")
    tables = {n: engine.catalog.create_table("db", spec(n, n == "t_part")) for n in ("t_part", "t_flat")}
    t0 = time.perf_counter()
    for batch in batches(rows_per_day, np.random.default_rng(7)):
        for table in tables.values():
            engine.load(table, batch)
    print(f"loaded {DAYS * rows_per_day:,} rows into both tables in {time.perf_counter() - t0:.1f} s\n")
    tables = {n: engine.catalog.get_table_by_id(t.table_id) for n, t in tables.items()}
    queries = [
        ("one day", "SELECT count(*), sum(v) FROM {t} WHERE dt = '2024-06-01'"),
        ("one week", "SELECT count(*), sum(v) FROM {t} WHERE dt >= '2024-06-01' AND dt < '2024-06-08'"),
        ("one day, group by", "SELECT user_id % 10 AS g, count(*) FROM {t} WHERE dt = '2024-06-01' GROUP BY g"),
    ]
    print("| query | partitioned (ms) | unpartitioned (ms) | speedup | partitions read |")
    print("|---|---:|---:|---:|---|")
    for title, sql in queries:
        times, answers = {}, {}
        for name, table in tables.items():
            expression = sqlglot.parse_one(sql.format(t=name), read="doris")
            ctx = QueryContext("db", lambda db, n, table=table: OlapTableSource(engine, table, db_name="db"))
            times[name], answers[name] = best_of(lambda e=expression, c=ctx: execute_query(e, c), repeat)
            if name == "t_part":
                plan = explain_query(expression, ctx)
                line = next((x.strip() for x in plan if "partitions=" in x), "")
                line = line if len(line) < 60 else line[:57] + "...)"
        got = sorted(tuple(r.values()) for r in answers["t_part"].to_pylist())
        want = sorted(tuple(r.values()) for r in answers["t_flat"].to_pylist())
        assert got == want, (title, got[:3], want[:3])
        print(f"| {title} | {times['t_part'] * 1000:.1f} | {times['t_flat'] * 1000:.1f} "
              f"| {times['t_flat'] / times['t_part']:.1f}x | {line} |")
    engine.close()


if __name__ == "__main__":
    main()
