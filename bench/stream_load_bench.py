"""Stream Load through the server against INSERT ... SELECT FROM local() of the same file, in one run.

    python -m bench.stream_load_bench [--rows N] [--request-mb M] [--small 64]

A CSV of N rows (default 2,000,000; an SSB-like line: key, date, two ints, a decimal, two strings) is loaded into
a DUPLICATE KEY table three ways: Stream Load requests of about M MB each (default 100) through
`PUT /api/db/t/_stream_load`; one `INSERT INTO t SELECT * FROM local(csv)`; and then `--small` concurrent Stream
Loads of 1,000 rows each (loads/s and latency percentiles). Writes bench/out/stream-load.md.
"""

from __future__ import annotations

import argparse
import base64
import concurrent.futures
import http.client
import json
import statistics
import time
from pathlib import Path

import numpy as np
import pymysql

from bench.harness import dorislite_server, report, scratch_dir

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


def stream_load(port: int, db: str, table: str, body: bytes, label: str | None, group_commit: str = "") -> dict:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=3600)
    headers = {"Authorization": "Basic " + base64.b64encode(b"root:").decode(), "column_separator": ",",
               "Expect": "100-continue"}
    headers.update({"label": label} if label else {"group_commit": group_commit})
    conn.request("PUT", f"/api/{db}/{table}/_stream_load", body=body, headers=headers)
    reply = json.loads(conn.getresponse().read())
    conn.close()
    assert reply["Status"] == "Success", reply
    return reply


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--request-mb", type=int, default=100)
    ap.add_argument("--small", type=int, default=64)
    args = ap.parse_args()
    lines = csv_lines(args.rows)
    with scratch_dir("stream-load-") as work:
        data = work / "data.csv"
        data.write_bytes(b"".join(lines))
        size = data.stat().st_size
        with dorislite_server(work / "data", timeout=120) as (port, proc):
            http_port = proc.http_port
            log = work / "server.log"  # Spark starts in the background (spark_prestart): not during the timings
            deadline = time.monotonic() + 180
            while "Spark started" not in log.read_text() and time.monotonic() < deadline:
                time.sleep(0.5)
            conn = pymysql.connect(host="127.0.0.1", port=port, user="root", autocommit=True, read_timeout=3600)
            cur = conn.cursor()
            cur.execute("CREATE DATABASE b")
            cur.execute("USE b")
            for name in ("s", "i", "small"):
                cur.execute(DDL.format(name=name))
            started = time.perf_counter()
            request, size_now, n = [], 0, 0
            for line in lines:
                request.append(line)
                size_now += len(line)
                if size_now >= args.request_mb * 1024 * 1024:
                    stream_load(http_port, "b", "s", b"".join(request), f"big_{n}")
                    request, size_now, n = [], 0, n + 1
            if request:
                stream_load(http_port, "b", "s", b"".join(request), f"big_{n}")
                n += 1
            stream_s = time.perf_counter() - started
            started = time.perf_counter()
            cur.execute(f'INSERT INTO i SELECT * FROM local("file_path" = "{data}", "format" = "csv", '
                        f'"column_separator" = ",")')
            insert_s = time.perf_counter() - started
            for name in ("s", "i"):
                cur.execute(f"SELECT count(*), sum(q) FROM {name}")
                counts = cur.fetchone()
                assert counts[0] == args.rows, (name, counts)
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
    mb = size / 1024 / 1024
    lines_out = [f"### Stream Load, {args.rows:,} rows ({mb:.0f} MB of CSV)", "",
                 "| path | seconds | rows/s | MB/s |", "|---|---:|---:|---:|",
                 f"| Stream Load, {n} requests of ~{args.request_mb} MB (in-process) | {stream_s:.1f} | "
                 f"{args.rows / stream_s:,.0f} | {mb / stream_s:.1f} |",
                 f"| INSERT INTO t SELECT * FROM local(csv) (Spark) | {insert_s:.1f} | {args.rows / insert_s:,.0f} | "
                 f"{mb / insert_s:.1f} |", "",
                 f"Stream Load / INSERT rows/s: **{insert_s / stream_s:.2f}x** (target >= 1.0x).", "",
                 f"{args.small} concurrent Stream Loads of 1,000 rows:", "",
                 "| group_commit | loads/s | median ms | p99 ms |", "|---|---:|---:|---:|"]
    for mode, (seconds, latencies) in small.items():
        p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))]
        lines_out.append(f"| {mode} | {args.small / seconds:.1f} | {statistics.median(latencies) * 1000:.0f} | "
                         f"{p99 * 1000:.0f} |")
    report(OUT, lines_out)


if __name__ == "__main__":
    main()
