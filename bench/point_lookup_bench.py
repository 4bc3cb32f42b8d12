"""Point lookups from many clients: the index bench's 20M-row table behind the server, 16 MySQL connections each
running `SELECT k, hc, lc, v FROM t_idx WHERE k = <random key>` as fast as answers come, alone and while a
loader Stream Loads batches into the same table; DuckDB (the same rows, one cursor per thread) as the peer.

    python -m bench.point_lookup_bench [--rows 20000000] [--seconds 30] [--clients 16]

Every answer is checked (one row, the asked key). Writes bench/out/point_lookup.md.
"""

from __future__ import annotations

import argparse
import base64
import http.client
import random
import statistics
import threading
import time
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.csv as pcsv
import pymysql

from bench.harness import bench_engine, dorislite_server, report, run_threads, scratch_dir
from bench.index_bench import BATCH, compact_fully, make_batch, spec

OUT = Path(__file__).resolve().parent / "out" / "point_lookup.md"
LOAD_ROWS = 100_000  # rows per Stream Load of the concurrent loader
WARM_SECONDS = 10.0  # lookups before each measured run, not counted


def build(storage: Path, rows: int, con: duckdb.DuckDBPyConnection) -> None:
    engine = bench_engine(storage)
    table = engine.catalog.create_table("db", spec("t_idx", True))
    rng = np.random.default_rng(11)
    for start in range(0, rows, BATCH):
        batch = make_batch(start, min(BATCH, rows - start), rows, rng)
        engine.load(table, batch)
        con.register("b", batch)
        con.execute("CREATE TABLE IF NOT EXISTS t AS SELECT * FROM b LIMIT 0")
        con.execute("INSERT INTO t SELECT * FROM b")
        con.unregister("b")
    compact_fully(engine, engine.catalog.get_table_by_id(table.table_id))
    engine.close()


def lookups(run_one, seconds: float, clients: int, rows: int) -> dict:
    """`run_one(state, key)` answers one lookup; each client thread keeps its own state (a connection)."""
    stop = time.monotonic() + seconds
    latencies: list[list[float]] = [[] for _ in range(clients)]
    wrong: list[str] = []

    def client(n: int) -> None:
        rng = random.Random(n)
        state: dict = {}
        while time.monotonic() < stop:
            key = rng.randrange(rows)
            started = time.perf_counter()
            got = run_one(state, key)
            latencies[n].append(time.perf_counter() - started)
            if len(got) != 1 or got[0][0] != key:
                wrong.append(f"k={key}: {got!r}"[:200])
        if "close" in state:
            state["close"]()

    elapsed = run_threads([threading.Thread(target=client, args=(n,)) for n in range(clients)])
    every = sorted(x for per in latencies for x in per)
    return {"qps": len(every) / elapsed, "p50": statistics.median(every) * 1000,
            "p99": every[min(len(every) - 1, int(len(every) * 0.99))] * 1000, "wrong": wrong}


def server_lookup(port: int):
    def run_one(state: dict, key: int) -> list:
        if "cur" not in state:
            conn = pymysql.connect(host="127.0.0.1", port=port, user="root", database="db", autocommit=True)
            state["cur"], state["close"] = conn.cursor(), conn.close
        state["cur"].execute(f"SELECT k, hc, lc, v FROM t_idx WHERE k = {key}")
        return list(state["cur"].fetchall())
    return run_one


def duckdb_lookup(con: duckdb.DuckDBPyConnection):
    def run_one(state: dict, key: int) -> list:
        if "cur" not in state:
            state["cur"] = con.cursor()
        return state["cur"].execute(f"SELECT k, hc, lc, v FROM t WHERE k = {key}").fetchall()
    return run_one


def loader(http_port: int, first_key: int, stop: threading.Event, loaded: list[int]) -> None:
    """Stream Loads of LOAD_ROWS new rows each (keys above the table's) until stopped."""
    auth = "Basic " + base64.b64encode(b"root:").decode()
    start = first_key
    while not stop.is_set():
        keys = np.arange(start, start + LOAD_ROWS, dtype=np.int64)
        body = pa.BufferOutputStream()
        pcsv.write_csv(pa.table({"k": keys, "hc": keys, "lc": (keys % 2000).astype(np.int32), "v": keys}), body,
                       pcsv.WriteOptions(include_header=False))
        conn = http.client.HTTPConnection("127.0.0.1", http_port, timeout=600)
        conn.request("PUT", "/api/db/t_idx/_stream_load", body=body.getvalue().to_pybytes(),
                     headers={"Authorization": auth, "column_separator": ",", "Expect": "100-continue"})
        reply = conn.getresponse().read()
        conn.close()
        if b'"Success"' not in reply:
            raise RuntimeError(reply[:500])
        loaded.append(LOAD_ROWS)
        start += LOAD_ROWS


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=20_000_000)
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("--clients", type=int, default=16)
    args = ap.parse_args()
    with scratch_dir("point_lookup_") as root:
        con = duckdb.connect()
        t0 = time.perf_counter()
        build(root / "storage", args.rows, con)
        print(f"built {args.rows:,} rows in {time.perf_counter() - t0:.0f} s")
        lookups(duckdb_lookup(con), WARM_SECONDS, args.clients, args.rows)
        peer = lookups(duckdb_lookup(con), args.seconds, args.clients, args.rows)
        with dorislite_server(root / "storage", timeout=180, fe_overrides={"spark_prestart": "false"}) as (port, proc):
            # the plan and the column cache warm: a segment's first lookup decodes its key and asked columns
            # whole (four 5M-row segments here: the first seconds after a start answer a few lookups a second)
            lookups(server_lookup(port), WARM_SECONDS, args.clients, args.rows)
            alone = lookups(server_lookup(port), args.seconds, args.clients, args.rows)
            stop, loaded, failure = threading.Event(), [], []

            def load() -> None:
                try:
                    loader(proc.http_port, args.rows, stop, loaded)
                except Exception as e:  # noqa: BLE001 - reported below
                    failure.append(str(e))

            thread = threading.Thread(target=load)
            thread.start()
            loading_started = time.perf_counter()
            with_load = lookups(server_lookup(port), args.seconds, args.clients, args.rows)
            stop.set()
            thread.join()
            load_seconds = time.perf_counter() - loading_started
    lines = [f"# Point lookups: {args.clients} clients for {args.seconds:.0f} s on {args.rows:,} rows "
             "(t_idx of the index bench, one rowset per tablet)", "",
             f"Each peer answered lookups for {WARM_SECONDS:.0f} s before its first measured run (the server's "
             "first lookup of a segment decodes its columns into the column cache).", "",
             "| run | lookups/s | p50 ms | p99 ms | vs DuckDB | wrong answers |", "|---|---:|---:|---:|---:|---:|"]
    for name, r in (("DuckDB, one cursor per thread", peer), ("dorislite, MySQL protocol", alone),
                    ("dorislite, while Stream Loads run", with_load)):
        lines.append(f"| {name} | {r['qps']:.0f} | {r['p50']:.2f} | {r['p99']:.2f} | "
                     f"{r['qps'] / peer['qps']:.2f}x | {len(r['wrong'])} |")
    lines += ["", f"The loader Stream Loaded {sum(loaded):,} rows in {len(loaded)} loads of {LOAD_ROWS:,} "
                  f"({sum(loaded) / load_seconds:,.0f} rows/s) during the second run"
                  + (f"; it failed: {failure[0]}" if failure else "") + "."]
    report(OUT, lines)


if __name__ == "__main__":
    main()
