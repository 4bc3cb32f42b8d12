"""The web console's pages on a table of 1,000 tablets, and what serving them costs a concurrent query loop.

    python -m bench.console_bench [--tablets 1000] [--seconds 20]

A server holds `orders` with 10 partitions x 100 buckets (1,000 tablets), loaded in five increments. Each page is
fetched 20 times (median and worst ms; target < 200 ms). Then a client runs a loop of point queries (one tablet
each) for `--seconds` alone, and again while a viewer opens a console page every second (the pages in turn, as a
person clicking through them); the loop's queries/s with the viewer over without it is the cost (target >= 0.95). Writes bench/out/console.md.
"""

from __future__ import annotations

import argparse
import base64
import itertools
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
        cur.execute(f"SELECT city, amount FROM orders WHERE k = {(done * 7919) % 100000}")
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
            settle(proc.http_port)
            runs: dict[str, list[float]] = {"alone": [], "viewer": []}
            for _ in range(2):  # alternated, so background work drifting over time does not favour either
                runs["alone"].append(query_loop(port, args.seconds / 2))
                runs["viewer"].append(with_viewer_loop(port, fe_port, pages, args.seconds / 2))
            alone, with_viewer = statistics.mean(runs["alone"]), statistics.mean(runs["viewer"])
    lines = [f"# Console pages on {partitions * buckets:,} tablets", "",
             "| page | median ms | worst ms |", "|---|---:|---:|"]
    for p, t in timings.items():
        lines.append(f"| `{p}` | {statistics.median(t):.1f} | {t[-1]:.1f} |")
    lines += ["", f"Point-query loop alone: {alone:.1f} queries/s; with a viewer opening a page every second: "
              f"{with_viewer:.1f} queries/s (**{with_viewer / alone:.3f}x**, target >= 0.95; two alternated runs "
              "each, after compaction settled)."]
    report(OUT, lines)


def settle(be_port: int, quiet_seconds: float = 6, timeout: float = 600) -> None:
    """Until compaction has nothing left to merge: the rowset count stops changing."""
    last, since, deadline = None, time.monotonic(), time.monotonic() + timeout
    while time.monotonic() < deadline:
        with urllib.request.urlopen(f"http://127.0.0.1:{be_port}/metrics", timeout=30) as r:
            count = next(line.split()[-1] for line in r.read().decode().splitlines()
                         if line.startswith("doris_be_rowset_num "))
        if count != last:
            last, since = count, time.monotonic()
        elif time.monotonic() - since > quiet_seconds:
            return
        time.sleep(1)


def with_viewer_loop(port: int, fe_port: int, pages: list[str], seconds: float) -> float:
    stop = threading.Event()

    def viewer() -> None:
        for p in itertools.cycle(pages):
            tick = time.perf_counter()
            fetch(fe_port, p)
            if stop.wait(max(0.0, 1.0 - (time.perf_counter() - tick))):
                return

    thread = threading.Thread(target=viewer)
    thread.start()
    done = query_loop(port, seconds)
    stop.set()
    thread.join()
    return done


if __name__ == "__main__":
    main()
