"""The web console's pages on a table of 1,000 tablets, and what serving them costs a concurrent query loop.

    python -m bench.console_bench [--tablets 1000] [--seconds 20]

A server holds `orders` with 10 partitions x 100 buckets (1,000 tablets), loaded in five increments. Each page is
fetched 20 times (median and worst ms; target < 200 ms). Then a client runs a query loop for `--seconds` alone,
and again while a viewer reloads every console page once a second; the loop's queries/s with the viewer over
without it is the cost (target >= 0.95). Writes bench/out/console.md.
"""

from __future__ import annotations

import argparse
import base64
import statistics
import threading
import time
import urllib.request
from pathlib import Path

import pymysql

from bench.harness import dorislite_server, report, scratch_dir

OUT = Path(__file__).resolve().parent / "out" / "console.md"
AUTH = {"Authorization": "Basic " + base64.b64encode(b"root:").decode()}


def fetch(port: int, page: str) -> float:
    started = time.perf_counter()
    with urllib.request.urlopen(urllib.request.Request(f"http://127.0.0.1:{port}{page}", headers=AUTH),
                                timeout=60) as r:
        r.read()
        assert r.status == 200, (page, r.status)
    return (time.perf_counter() - started) * 1000


def query_loop(port: int, seconds: float) -> float:
    conn = pymysql.connect(host="127.0.0.1", port=port, user="root", database="b", autocommit=True)
    cur = conn.cursor()
    done, deadline = 0, time.perf_counter() + seconds
    started = time.perf_counter()
    while time.perf_counter() < deadline:
        cur.execute("SELECT city, sum(amount) FROM orders WHERE k % 7 = 1 GROUP BY city")
        cur.fetchall()
        done += 1
    conn.close()
    return done / (time.perf_counter() - started)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tablets", type=int, default=1000)
    ap.add_argument("--seconds", type=float, default=20)
    args = ap.parse_args()
    partitions = 10
    buckets = args.tablets // partitions
    with scratch_dir("console-") as work:
        overrides = {"spark_prestart": "false", "max_bucket_num_per_partition": str(max(768, buckets))}
        with dorislite_server(work / "data", timeout=120, fe_overrides=overrides) as (port, proc):
            fe_port = proc.fe_http_port
            conn = pymysql.connect(host="127.0.0.1", port=port, user="root", autocommit=True)
            cur = conn.cursor()
            cur.execute("CREATE DATABASE b")
            cur.execute("USE b")
            bounds = ", ".join(f"PARTITION p{i} VALUES LESS THAN ({(i + 1) * 10000})" for i in range(partitions))
            cur.execute(f"CREATE TABLE orders (k INT, city VARCHAR(20), amount INT) DUPLICATE KEY(k) PARTITION BY "
                        f"RANGE(k) ({bounds}) DISTRIBUTED BY HASH(k) BUCKETS {buckets} "
                        "PROPERTIES ('replication_num' = '1')")
            for step in range(5):
                cur.execute("INSERT INTO orders VALUES " + ", ".join(
                    f"({(i * 97 + step) % (partitions * 10000)}, 'city{i % 9}', {i})" for i in range(20000)))
            conn.close()
            pages = ["/console", "/console/db/b", "/console/table/b/orders", "/console/queries", "/console/loads"]
            timings = {p: sorted(fetch(fe_port, p) for _ in range(20)) for p in pages}
            alone = query_loop(port, args.seconds)
            stop = threading.Event()

            def viewer() -> None:
                while not stop.is_set():
                    tick = time.perf_counter()
                    for p in pages:
                        fetch(fe_port, p)
                    stop.wait(max(0.0, 1.0 - (time.perf_counter() - tick)))

            thread = threading.Thread(target=viewer)
            thread.start()
            with_viewer = query_loop(port, args.seconds)
            stop.set()
            thread.join()
    lines = [f"# Console pages on {partitions * buckets:,} tablets", "",
             "| page | median ms | worst ms |", "|---|---:|---:|"]
    for p, t in timings.items():
        lines.append(f"| `{p}` | {statistics.median(t):.1f} | {t[-1]:.1f} |")
    lines += ["", f"Query loop alone: {alone:.1f} queries/s; with a viewer reloading every page once a second: "
              f"{with_viewer:.1f} queries/s (**{with_viewer / alone:.3f}x**, target >= 0.95)."]
    report(OUT, lines)


if __name__ == "__main__":
    main()
