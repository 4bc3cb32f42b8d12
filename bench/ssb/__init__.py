"""Star Schema Benchmark (SSB): data generator, flat-table DDL, the 13 flat queries and a runner.

    python -m bench.ssb.generate --sf 1 --out bench/out/ssb-sf1
    python -m bench.ssb.run --sf 1
"""
