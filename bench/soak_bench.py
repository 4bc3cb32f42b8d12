"""Many clients at once: writers of small INSERT ... VALUES batches and readers of totals and group-bys, against
the server over the MySQL protocol, one run.

    python -m bench.soak_bench [--seconds 180] [--clients 16] [--modes off_mode,async_mode]

Per group_commit mode, on a fresh pair of tables (a DUPLICATE and an AGGREGATE one): half the clients write
10-row batches (alternating tables, each row a unique id), half read (`count(*), sum(v)` and a group-by). Reports
statements/s, p50 / p99 per statement kind, the most rowsets any tablet held (sampled every 2 s), and checks at
the end that every acknowledged row is there exactly once. Writes bench/out/soak.md.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import threading
import time
from pathlib import Path

import pymysql

from bench.harness import dorislite_server, report, run_threads, scratch_dir

OUT = Path(__file__).resolve().parent / "out" / "soak.md"
DDL = {
    "dup": "CREATE TABLE dup (id BIGINT, g INT, v INT) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 4 "
           "PROPERTIES ('replication_num' = '1')",
    "agg": "CREATE TABLE agg (g INT, v BIGINT SUM, n BIGINT SUM) AGGREGATE KEY(g) DISTRIBUTED BY HASH(g) BUCKETS 4 "
           "PROPERTIES ('replication_num' = '1')",
}
READS = ("SELECT count(*), sum(v) FROM dup", "SELECT g, count(*), sum(v) FROM dup GROUP BY g ORDER BY g",
         "SELECT sum(v), sum(n) FROM agg", "SELECT g, v, n FROM agg ORDER BY g")


def p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))] if ordered else 0.0


def soak(port: int, seconds: float, clients: int, mode: str) -> dict:
    ids = itertools.count(1)
    lock = threading.Lock()
    acked: dict[str, list[int]] = {"dup": [], "agg": []}
    latencies: dict[str, list[float]] = {"write": [], "read": []}
    errors: list[str] = []
    stop = time.monotonic() + seconds

    def writer(n: int) -> None:
        conn = pymysql.connect(host="127.0.0.1", port=port, user="root", database="soak", autocommit=True,
                               read_timeout=600)
        cur = conn.cursor()
        if mode != "off_mode":
            cur.execute(f"SET group_commit = {mode}")
        for i in itertools.count():
            if time.monotonic() > stop:
                break
            table = "dup" if (n + i) % 2 == 0 else "agg"
            with lock:
                batch = [next(ids) for _ in range(10)]
            values = ", ".join(f"({r}, {r % 10}, 1)" if table == "dup" else f"({r % 10}, 1, {r})" for r in batch)
            started = time.perf_counter()
            try:
                cur.execute(f"INSERT INTO {table} VALUES {values}")
            except pymysql.err.MySQLError as e:
                errors.append(str(e))
                continue
            latencies["write"].append(time.perf_counter() - started)
            with lock:
                acked[table].extend(batch)
        conn.close()

    def reader(n: int) -> None:
        conn = pymysql.connect(host="127.0.0.1", port=port, user="root", database="soak", autocommit=True,
                               read_timeout=600)
        cur = conn.cursor()
        for i in itertools.count():
            if time.monotonic() > stop:
                break
            started = time.perf_counter()
            cur.execute(READS[(n + i) % len(READS)])
            cur.fetchall()
            latencies["read"].append(time.perf_counter() - started)
        conn.close()

    rowsets: list[int] = []

    def sampler() -> None:
        conn = pymysql.connect(host="127.0.0.1", port=port, user="root", database="soak", autocommit=True)
        cur = conn.cursor()
        while time.monotonic() < stop:
            most = 0
            for table in ("dup", "agg"):
                cur.execute(f"SHOW TABLETS FROM {table}")
                names = [d[0] for d in cur.description]
                for row in cur.fetchall():
                    most = max(most, int(dict(zip(names, row, strict=True)).get("VersionCount") or 0))
            rowsets.append(most)
            time.sleep(2)
        conn.close()

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(clients // 2)]
    threads += [threading.Thread(target=reader, args=(n,)) for n in range(clients - clients // 2)]
    threads.append(threading.Thread(target=sampler))
    elapsed = run_threads(threads)
    time.sleep(12 if mode != "off_mode" else 0)  # an async batch becomes visible at its interval's end
    conn = pymysql.connect(host="127.0.0.1", port=port, user="root", database="soak", autocommit=True)
    cur = conn.cursor()
    cur.execute("SELECT count(*), count(DISTINCT id), min(id), max(id) FROM dup")
    dup_count, dup_distinct, *_ = cur.fetchone()
    cur.execute("SELECT sum(n), sum(v) FROM agg")
    agg_ids, agg_rows = cur.fetchone()
    conn.close()
    expected_agg = sum(acked["agg"])
    return {"statements": len(latencies["write"]) + len(latencies["read"]), "seconds": elapsed,
            "writes": latencies["write"], "reads": latencies["read"], "rowsets": rowsets, "errors": errors,
            "dup_ok": dup_count == dup_distinct == len(acked["dup"]),
            "dup": (dup_count, dup_distinct, len(acked["dup"])),
            "agg_ok": (agg_ids or 0) == expected_agg and (agg_rows or 0) == len(acked["agg"]),
            "agg": (int(agg_ids or 0), expected_agg, int(agg_rows or 0), len(acked["agg"]))}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=180)
    ap.add_argument("--clients", type=int, default=16)
    ap.add_argument("--modes", default="off_mode,async_mode")
    args = ap.parse_args()
    results = {}
    for mode in args.modes.split(","):
        with scratch_dir("soak-") as work, dorislite_server(work / "data", timeout=120,
                                                           fe_overrides={"spark_prestart": "false"}) as (port, _):
            conn = pymysql.connect(host="127.0.0.1", port=port, user="root", autocommit=True)
            cur = conn.cursor()
            cur.execute("CREATE DATABASE soak")
            cur.execute("USE soak")
            for ddl in DDL.values():
                cur.execute(ddl)
            conn.close()
            results[mode] = soak(port, args.seconds, args.clients, mode)
    lines = [f"# Soak: {args.clients} clients for {args.seconds:.0f} s (half writing 10-row INSERTs, half reading)",
             "", "| group_commit | statements/s | write p50 ms | write p99 ms | read p50 ms | read p99 ms | "
                 "max rowsets per tablet | errors | every row once |", "|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for mode, r in results.items():
        lines.append(f"| {mode} | {r['statements'] / r['seconds']:.1f} | {statistics.median(r['writes']) * 1000:.0f} | "
                     f"{p(r['writes'], 0.99) * 1000:.0f} | {statistics.median(r['reads']) * 1000:.0f} | "
                     f"{p(r['reads'], 0.99) * 1000:.0f} | {max(r['rowsets'], default=0)} | {len(r['errors'])} | "
                     f"{'yes' if r['dup_ok'] and r['agg_ok'] else 'NO ' + str((r['dup'], r['agg']))} |")
    lines += ["", "Most rowsets in any tablet, sampled every 2 s (every fifth sample shown):", ""]
    for mode, r in results.items():
        lines.append(f"- {mode}: " + " ".join(str(n) for n in r["rowsets"][::5]))
    report(OUT, lines)


if __name__ == "__main__":
    main()
