"""INSERT ... SELECT of SSB SF 1 on a two-worker Spark standalone cluster against local[2], same machine, one run.

    python -m bench.spark_cluster_bench [--sf 1]

For each Spark (fe.conf spark_master `local[2]`, then `spark://` of a master and two one-core workers started as
separate processes here, as tests/server/test_spark_cluster.py starts them) a fresh server loads lineorder_flat:
`INSERT INTO lineorder_flat SELECT * FROM local(<the Parquet files>)` (from files), then `INSERT INTO copy SELECT *
FROM lineorder_flat` (from a table). Spark's start is waited for before the timings. Writes bench/out/spark-cluster.md.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import pymysql

from bench.harness import dorislite_server, report, scratch_dir, wait_for_spark
from bench.ssb.generate import flat_glob, generate
from bench.ssb.schema import flat_ddl

OUT = Path(__file__).resolve().parent / "out" / "spark-cluster.md"


def _run(work: Path, files: str, master: str, extra: dict[str, str]) -> dict[str, float]:
    overrides = {"spark_master": master, "insert_spark_threshold_mb": "0", "spark_prestart": "true", **extra}
    with dorislite_server(work / "data", timeout=120, fe_overrides=overrides) as (port, _proc):
        wait_for_spark(work / "server.log")  # started in the background: not in the timings
        conn = pymysql.connect(host="127.0.0.1", port=port, user="root", autocommit=True, read_timeout=7200)
        cur = conn.cursor()
        cur.execute("CREATE DATABASE b")
        cur.execute("USE b")
        cur.execute(flat_ddl("lineorder_flat"))
        cur.execute(flat_ddl("copy"))
        out: dict[str, float] = {}
        started = time.perf_counter()
        cur.execute(f"INSERT INTO lineorder_flat SELECT * FROM local('file_path' = '{files}', 'format' = 'parquet')")
        out["files"] = time.perf_counter() - started
        started = time.perf_counter()
        cur.execute("INSERT INTO copy SELECT * FROM lineorder_flat")
        out["table"] = time.perf_counter() - started
        cur.execute("SELECT count(*) FROM copy")
        out["rows"] = float(cur.fetchone()[0])
        conn.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sf", type=float, default=1.0)
    args = ap.parse_args()
    data = Path(__file__).resolve().parent / "out" / f"ssb-sf{args.sf:g}"
    if not (data / "_SUCCESS").exists():
        generate(args.sf, data)
    files = flat_glob(data)
    from tests.server.test_spark_cluster import Cluster  # the test's cluster: one way to start it

    results: dict[str, dict[str, float]] = {}
    with scratch_dir("spark-local-") as work:
        results["local[2]"] = _run(work, files, "local[2]", {})
    with scratch_dir("spark-cluster-") as work:
        cluster = Cluster(work)
        try:
            results["cluster"] = _run(work, files, cluster.url, {
                "spark.executor.memory": "1500m", "spark.executor.cores": "1"})
        finally:
            cluster.stop()
    rows = int(results["local[2]"]["rows"])
    lines = [f"# INSERT ... SELECT of SSB SF {args.sf:g} lineorder_flat ({rows:,} rows): two-worker standalone "
             "cluster vs local[2]", "",
             "One run each, same machine (2 cores): the cluster's master and two one-core workers are separate "
             "processes here, so the comparison shows the cost of executors outside the server, not more hardware.",
             "", "| INSERT ... SELECT | local[2] s | cluster s | cluster / local | local rows/s | cluster rows/s |",
             "|---|---:|---:|---:|---:|---:|"]
    for what, label in (("files", "from Parquet files (local())"), ("table", "from a table")):
        loc, clu = results["local[2]"][what], results["cluster"][what]
        lines.append(f"| {label} | {loc:.1f} | {clu:.1f} | {clu / loc:.2f} | {rows / loc:,.0f} | {rows / clu:,.0f} |")
    report(OUT, lines)


if __name__ == "__main__":
    main()
