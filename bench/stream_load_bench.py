"""Stream Load through the server against INSERT ... SELECT FROM local() of the same file and against Spark's own
Parquet write of it, in one run.

    python -m bench.stream_load_bench [--sf 1] [--request-mb 100] [--small 64]

SSB's lineorder_flat at scale factor `--sf` (6,000,000 rows at SF 1; generated into bench/out/ssb-sf<sf> when
missing) is written as one '|'-separated CSV and loaded into lineorder_flat tables three ways: Stream Load requests
of about `--request-mb` MB each through `PUT /api/db/t/_stream_load`; one `INSERT INTO t SELECT * FROM local(csv)`;
and, as the peer, a local[2] Spark session of its own reading the same CSV and writing Parquet (what Spark alone
does with the rows). Then `--small` concurrent Stream Loads of 1,000 rows each (loads/s and latency percentiles;
the table's group_commit_interval_ms is 500),
with group_commit off and on. Writes bench/out/stream-load.md.
"""

from __future__ import annotations

import argparse
import base64
import concurrent.futures
import http.client
import json
import os
import statistics
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pymysql

from bench.harness import dorislite_server, report, scratch_dir, wait_for_spark
from bench.ssb.generate import flat_schema, generate
from bench.ssb.schema import flat_ddl
from planner.loads.spark_sources import spark_type

OUT = Path(__file__).resolve().parent / "out" / "stream-load.md"
DDL = ("CREATE TABLE {name} (k BIGINT, d DATE, q INT, p INT, amount DECIMAL(15, 2), city VARCHAR(20), note "
       "VARCHAR(40)) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 8 PROPERTIES ('replication_num' = '1')")


def csv_lines(rows: int, start: int = 0) -> list[bytes]:
    rng = np.random.default_rng(start + 7)
    k = np.arange(start, start + rows)
    days = rng.integers(0, 2500, rows)
    dates = (np.datetime64("1992-01-01") + days).astype(str)
    q, p = rng.integers(1, 50, rows), rng.integers(1, 100000, rows)
    amount = rng.integers(0, 10_000_000, rows) / 100
    cities = np.array(["BEIJING", "SHANGHAI", "CHICAGO", "BERLIN", "TOKYO"])[rng.integers(0, 5, rows)]
    notes = np.char.add("note-", (k % 9973).astype(str))
    table = np.stack([k.astype(str), dates, q.astype(str), p.astype(str), np.char.mod("%.2f", amount), cities, notes],
                     axis=1)
    return [(",".join(r) + "\n").encode() for r in table]


def stream_load(port: int, db: str, table: str, body: bytes, label: str | None, group_commit: str = "",
                separator: str = ",") -> dict:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=3600)
    headers = {"Authorization": "Basic " + base64.b64encode(b"root:").decode(), "column_separator": separator,
               "Expect": "100-continue"}
    headers.update({"label": label} if label else {"group_commit": group_commit})
    conn.request("PUT", f"/api/{db}/{table}/_stream_load", body=body, headers=headers)
    reply = json.loads(conn.getresponse().read())
    conn.close()
    assert reply["Status"] == "Success", reply
    return reply


def flat_csv(sf: float, path: Path) -> int:
    """lineorder_flat at `sf` as one '|'-separated CSV without a header; its row count."""
    data = Path(__file__).resolve().parent / "out" / f"ssb-sf{sf:g}"
    if not (data / "_SUCCESS").exists():
        generate(sf, data)
    rows = 0
    with path.open("wb") as f:
        for part in sorted((data / "lineorder_flat").glob("*.parquet")):
            table = pq.read_table(part)
            rows += table.num_rows
            pacsv.write_csv(table, f, pacsv.WriteOptions(include_header=False, delimiter="|", quoting_style="none"))
    return rows


def requests_of(data: bytes, request_bytes: int) -> Iterator[bytes]:
    """The body cut into requests of about `request_bytes`, each ending at a line's end."""
    start = 0
    while start < len(data):
        end = data.find(b"\n", min(len(data) - 1, start + request_bytes))
        end = len(data) if end < 0 else end + 1
        yield data[start:end]
        start = end


def spark_parquet_seconds(csv: Path, out: Path) -> float:
    """The peer: Spark alone (local[2]) reading the CSV with the table's types and writing Parquet."""
    from pyspark.sql import SparkSession

    from storage.spark.java_runtime import ensure_java_home

    os.environ.setdefault("JAVA_HOME", str(ensure_java_home()))
    spark = (SparkSession.builder.master("local[2]").config("spark.driver.memory", "2g")
             .config("spark.sql.shuffle.partitions", "2").getOrCreate())
    try:
        ddl = ", ".join(f"`{f.name}` {spark_type(f.type)}" for f in flat_schema())
        started = time.perf_counter()
        spark.read.csv(str(csv), schema=ddl, sep="|").write.mode("overwrite").parquet(str(out))
        return time.perf_counter() - started
    finally:
        spark.stop()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sf", type=float, default=1.0)
    ap.add_argument("--request-mb", type=int, default=100)
    ap.add_argument("--small", type=int, default=64)
    args = ap.parse_args()
    with scratch_dir("stream-load-") as work:
        data = work / "data.csv"
        rows = flat_csv(args.sf, data)
        size = data.stat().st_size
        with dorislite_server(work / "data", timeout=120) as (port, proc):
            http_port = proc.http_port
            wait_for_spark(work / "server.log")  # started in the background: not in the timings
            conn = pymysql.connect(host="127.0.0.1", port=port, user="root", autocommit=True, read_timeout=7200)
            cur = conn.cursor()
            cur.execute("CREATE DATABASE b")
            cur.execute("USE b")
            for name in ("s", "i"):
                cur.execute(flat_ddl(name))
            # group commit's interval: Doris's default (10 s) is for throughput; small loads waiting on it use less
            cur.execute(DDL.format(name="small").replace("'replication_num' = '1'",
                                                         "'replication_num' = '1', 'group_commit_interval_ms' = '500'"))
            body = data.read_bytes()
            started = time.perf_counter()
            n = 0
            for n, request in enumerate(requests_of(body, args.request_mb * 1024 * 1024), start=1):
                stream_load(http_port, "b", "s", request, f"big_{n}", separator="|")
            stream_s = time.perf_counter() - started
            del body
            started = time.perf_counter()
            cur.execute(f'INSERT INTO i SELECT * FROM local("file_path" = "{data}", "format" = "csv", '
                        f'"column_separator" = "|")')
            insert_s = time.perf_counter() - started
            for name in ("s", "i"):
                cur.execute(f"SELECT count(*) FROM {name}")
                counts = cur.fetchone()
                assert counts[0] == rows, (name, counts)
            small_lines = csv_lines(1000 * args.small, start=10**9)
            bodies = [b"".join(small_lines[i * 1000:(i + 1) * 1000]) for i in range(args.small)]

            small: dict[str, tuple[float, list[float]]] = {}
            for mode in ("off_mode", "sync_mode"):
                def one(i: int, mode: str = mode) -> float:
                    t0 = time.perf_counter()
                    stream_load(http_port, "b", "small", bodies[i], f"small_{i}" if mode == "off_mode" else None,
                                mode)
                    return time.perf_counter() - t0

                started = time.perf_counter()
                with concurrent.futures.ThreadPoolExecutor(args.small) as pool:
                    latencies = sorted(pool.map(one, range(args.small)))
                small[mode] = (time.perf_counter() - started, latencies)
            cur.execute("SELECT count(*) FROM small")
            assert cur.fetchone()[0] == 2 * 1000 * args.small
            conn.close()
        spark_s = spark_parquet_seconds(data, work / "peer.parquet")
    mb = size / 1024 / 1024
    lines_out = [f"### Stream Load of SSB SF {args.sf:g} lineorder_flat, {rows:,} rows ({mb:,.0f} MB of CSV)", "",
                 "| path | seconds | rows/s | MB/s |", "|---|---:|---:|---:|",
                 f"| Stream Load, {n} requests of ~{args.request_mb} MB (in-process) | {stream_s:.1f} | "
                 f"{rows / stream_s:,.0f} | {mb / stream_s:.1f} |",
                 f"| INSERT INTO t SELECT * FROM local(csv) (Spark) | {insert_s:.1f} | {rows / insert_s:,.0f} | "
                 f"{mb / insert_s:.1f} |",
                 f"| peer: Spark local[2] CSV -> Parquet | {spark_s:.1f} | {rows / spark_s:,.0f} | "
                 f"{mb / spark_s:.1f} |", "",
                 f"Stream Load / INSERT rows/s: **{insert_s / stream_s:.2f}x** (target >= 1.0x); Stream Load / "
                 f"Spark's Parquet write: **{spark_s / stream_s:.2f}x**.", "",
                 f"{args.small} concurrent Stream Loads of 1,000 rows:", "",
                 "| group_commit | loads/s | median ms | p99 ms |", "|---|---:|---:|---:|"]
    for mode, (seconds, latencies) in small.items():
        p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))]
        lines_out.append(f"| {mode} | {args.small / seconds:.1f} | {statistics.median(latencies) * 1000:.0f} | "
                         f"{p99 * 1000:.0f} |")
    report(OUT, lines_out)


if __name__ == "__main__":
    main()
