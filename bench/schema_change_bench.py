"""Light schema change on a large table, through the server, against DuckDB on the same rows, in one run.

    python -m bench.schema_change_bench [--rows N] [--repeat R]

A DUPLICATE KEY table of N rows (default 10,000,000: k BIGINT key, g INT, v BIGINT, s VARCHAR) is loaded with
`INSERT ... SELECT * FROM local(parquet)`. Timed over MySQL: `ALTER TABLE ADD COLUMN` (light: the statement
returns once the catalog changed; best of R, each followed by a DROP COLUMN), `RENAME COLUMN`, and a scan that
reads the old rows through the new schema (`SELECT g, sum(v), sum(n) ... GROUP BY g` with `n` added after the
load) next to the same scan before the change. DuckDB runs the same ALTERs and scan on an in-memory table of the
same rows.

Then a heavy change, `MODIFY COLUMN g VARCHAR(10)` (the rows rewritten by a schema change job), timed from the
statement to FINISHED in SHOW ALTER TABLE COLUMN (rows/s), while one connection loads a row at a time and
another runs a query: their latencies during the job next to the same before it. DuckDB's `ALTER ... TYPE` of the
same column is the peer. Writes bench/out/schema-change.md.
"""

from __future__ import annotations

import argparse
import statistics
import threading
import time
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pymysql

from bench.harness import dorislite_server, scratch_dir

OUT = Path(__file__).resolve().parent / "out" / "schema-change.md"


def data(rows: int) -> pa.Table:
    rng = np.random.default_rng(7)
    return pa.table({
        "k": pa.array(np.arange(rows, dtype=np.int64)),
        "g": pa.array(rng.integers(0, 100, rows, dtype=np.int32)),
        "v": pa.array(rng.integers(0, 1_000_000, rows, dtype=np.int64)),
        "s": pa.array(np.char.add("s", (np.arange(rows) % 1000).astype(str)).astype(object)),
    })


def timed(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - started)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    table = data(args.rows)
    scan = "SELECT g, sum(v), sum(n) FROM t GROUP BY g ORDER BY g"
    scan_before = "SELECT g, sum(v) FROM t GROUP BY g ORDER BY g"
    results: dict[str, tuple[float, float]] = {}
    with scratch_dir("schema-change-") as work:
        parquet = work / "t.parquet"
        pq.write_table(table, parquet)
        ddb = duckdb.connect()
        ddb.execute("CREATE TABLE t AS SELECT * FROM read_parquet(?)", [str(parquet)])
        with dorislite_server(work / "data", timeout=120) as (port, _):
            conn = pymysql.connect(host="127.0.0.1", port=port, user="root", autocommit=True, read_timeout=3600)
            cur = conn.cursor()
            cur.execute("CREATE DATABASE b")
            cur.execute("USE b")
            cur.execute("CREATE TABLE t (k BIGINT, g INT, v BIGINT, s VARCHAR(10)) DUPLICATE KEY(k) "
                        "DISTRIBUTED BY HASH(k) BUCKETS 8 PROPERTIES ('replication_num' = '1')")
            started = time.perf_counter()
            cur.execute(f'INSERT INTO t SELECT * FROM local("file_path" = "{parquet}", "format" = "parquet")')
            load_s = time.perf_counter() - started
            cur.execute("SELECT count(*) FROM t")
            assert cur.fetchone()[0] == args.rows

            def both(name: str, mine, theirs) -> None:
                results[name] = (timed(mine, args.repeat), timed(theirs, args.repeat))

            def query(sql: str):
                def run() -> list:
                    cur.execute(sql)
                    return cur.fetchall()
                return run

            both("scan before the change", query(scan_before), lambda: ddb.execute(scan_before).fetchall())

            def add_drop(run) -> None:
                run("ALTER TABLE t ADD COLUMN x BIGINT DEFAULT '1'")
                run("ALTER TABLE t DROP COLUMN x")

            results["ADD COLUMN + DROP COLUMN"] = (timed(lambda: add_drop(cur.execute), args.repeat),
                                                   timed(lambda: add_drop(ddb.execute), args.repeat))
            mine = timed(lambda: cur.execute("ALTER TABLE t ADD COLUMN n BIGINT DEFAULT '2'"), 1)
            theirs = timed(lambda: ddb.execute("ALTER TABLE t ADD COLUMN n BIGINT DEFAULT 2"), 1)
            results["ADD COLUMN (once, kept)"] = (mine, theirs)
            both("scan reading the old rows through the new schema", query(scan),
                 lambda: ddb.execute(scan).fetchall())
            cur.execute(scan)
            assert [tuple(map(int, r)) for r in cur.fetchall()] == [tuple(map(int, r)) for r in ddb.execute(scan).fetchall()]
            results["RENAME COLUMN twice"] = (
                timed(lambda: (cur.execute("ALTER TABLE t RENAME COLUMN s s2"),
                               cur.execute("ALTER TABLE t RENAME COLUMN s2 s")), args.repeat),
                timed(lambda: (ddb.execute("ALTER TABLE t RENAME COLUMN s TO s2"),
                               ddb.execute("ALTER TABLE t RENAME COLUMN s2 TO s")), args.repeat))
            heavy = heavy_change(port, cur, ddb)
            conn.close()
    lines = [f"### Light schema change, {args.rows:,} rows (best of {args.repeat})", "",
             f"Load (INSERT ... SELECT from Parquet, on Spark): {load_s:.1f} s.", "",
             "| operation | dorislite ms | DuckDB ms | ratio |", "|---|---:|---:|---:|"]
    for name, (mine, theirs) in results.items():
        lines.append(f"| {name} | {mine * 1000:,.1f} | {theirs * 1000:,.1f} | {mine / theirs:.2f} |")
    seconds, theirs, latencies = heavy
    lines += ["", f"### Heavy schema change (`MODIFY COLUMN g VARCHAR(10)`, rows rewritten), {args.rows:,} rows", "",
              f"Job: {seconds:.1f} s, **{args.rows / seconds / 1e6:.2f} M rows/s** (one scheduler thread; DuckDB's "
              f"ALTER TYPE: {theirs:.1f} s).", "",
              "| during the job | median ms | p95 ms | n | before the job: median ms |", "|---|---:|---:|---:|---:|"]
    for name, (before, during) in latencies.items():
        lines.append(f"| {name} | {statistics.median(during) * 1000:.1f} | {_p95(during) * 1000:.1f} | {len(during)} | "
                     f"{statistics.median(before) * 1000:.1f} |")
    text = "\n".join(lines) + "\n"
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(text)
    print(text)


def _p95(xs: list[float]) -> float:
    return sorted(xs)[min(len(xs) - 1, int(len(xs) * 0.95))]


def heavy_change(port: int, cur, ddb) -> tuple[float, float, dict[str, tuple[list[float], list[float]]]]:
    """(job seconds, DuckDB's seconds, {activity: (latencies before, latencies during)})."""
    stop = threading.Event()
    phase = {"during": False}
    samples: dict[str, tuple[list[float], list[float]]] = {"INSERT one row": ([], []),
                                                           "SELECT g, sum(v) GROUP BY g": ([], [])}

    def worker(name: str, sql) -> None:
        conn = pymysql.connect(host="127.0.0.1", port=port, user="root", autocommit=True, database="b",
                               read_timeout=3600)
        c = conn.cursor()
        i = 0
        while not stop.is_set():
            started = time.perf_counter()
            try:
                c.execute(sql(i))
                c.fetchall()
            except pymysql.err.MySQLError:
                pass  # a load the swap overtook is refused whole; not timed
            else:
                samples[name][1 if phase["during"] else 0].append(time.perf_counter() - started)
            i += 1
            time.sleep(0.02)
        conn.close()

    threads = [threading.Thread(target=worker, args=("INSERT one row", lambda i: f"INSERT INTO t (k, g, v, s) VALUES "
                                                     f"({10**12 + i}, 1, 1, 'x')")),
               threading.Thread(target=worker, args=("SELECT g, sum(v) GROUP BY g",
                                                     lambda i: "SELECT g, sum(v) FROM t GROUP BY g"))]
    for t in threads:
        t.start()
    time.sleep(5)
    phase["during"] = True
    started = time.perf_counter()
    cur.execute("ALTER TABLE t MODIFY COLUMN g VARCHAR(10)")
    while True:
        cur.execute("SHOW ALTER TABLE COLUMN")
        state = cur.fetchall()[-1][9]
        if state in ("FINISHED", "CANCELLED"):
            break
        time.sleep(0.05)
    seconds = time.perf_counter() - started
    stop.set()
    for t in threads:
        t.join()
    assert state == "FINISHED", state
    cur.execute("DESC t")
    assert [r[1] for r in cur.fetchall()][1] == "VARCHAR(10)"
    started = time.perf_counter()
    ddb.execute("ALTER TABLE t ALTER g TYPE VARCHAR")
    return seconds, time.perf_counter() - started, samples


if __name__ == "__main__":
    main()
