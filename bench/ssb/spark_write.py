"""Spark's own Parquet write rate on the SSB flat files: the yardstick for dorislite's load.

    python -m bench.ssb.spark_write --src '<glob>' --warmup <small.parquet> --dst <folder>

Runs in its own process (the runner's process stays JVM-free) with the server's Spark settings
(`storage.spark.session.spark_conf`: local[*], driver memory, Arrow batch size ...). After a warm-up job
on a small file (JVM and Parquet code paths warm, as the server's Spark is before the timed INSERT), it
times `spark.read.parquet(src).write.parquet(dst)` (best of --repeat) and prints one JSON line: rows and seconds.
"""

from __future__ import annotations

import argparse
import json
import time


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--src", required=True)
    ap.add_argument("--warmup", required=True)
    ap.add_argument("--dst", required=True)
    ap.add_argument("--repeat", type=int, default=1, help="timed writes (best is reported)")
    args = ap.parse_args()

    from storage.spark.java_runtime import ensure_java_home
    from storage.spark.session import spark_conf

    ensure_java_home()
    from pyspark.sql import SparkSession

    builder = SparkSession.builder
    for key, value in {**spark_conf(), "spark.app.name": "ssb-spark-parquet-write"}.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    try:
        spark.read.parquet(args.warmup).write.mode("overwrite").parquet(args.dst + "-warmup")
        seconds = float("inf")
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            spark.read.parquet(args.src).write.mode("overwrite").parquet(args.dst)
            seconds = min(seconds, time.perf_counter() - t0)
        rows = spark.read.parquet(args.dst).count()  # outside the timing: proves every row was written
    finally:
        spark.stop()
    print(json.dumps({"rows": rows, "seconds": seconds}))


if __name__ == "__main__":
    main()
