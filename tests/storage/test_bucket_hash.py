"""The bucket hash must equal Spark's `pmod(hash(cols...), n)` bit for bit (Spark loads rely on it)."""

from __future__ import annotations

import datetime as dt
import decimal
import random

import numpy as np
import pyarrow as pa
import pytest

from storage.spark.java_runtime import ensure_java_home
from storage.tablet.bucket_hash import (
    hash_buckets,
    literal_bucket,
    random_buckets,
    spark_hash,
    spark_hash_values,
)

N_ROWS = 300
BUCKETS = 7


def _strings(rng: random.Random) -> list[str | None]:
    alphabet = "abcXYZ019 _-北京上海深圳é€😀"
    out: list[str | None] = ["", "a", "ab", "abc", "abcd", "abcde", "北京", "😀", None]
    while len(out) < N_ROWS:
        out.append(None if rng.random() < 0.1 else "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40))))
    return out


def _with_nulls(rng: random.Random, values: list) -> list:
    return [None if rng.random() < 0.1 else v for v in values]


def _sample_table() -> pa.Table:
    rng = random.Random(7)
    ints = [rng.randint(-(2**31), 2**31 - 1) for _ in range(N_ROWS)]
    longs = [rng.randint(-(2**63), 2**63 - 1) for _ in range(N_ROWS)]
    doubles = [rng.uniform(-1e6, 1e6) for _ in range(N_ROWS)]
    doubles[:4] = [0.0, -0.0, float("inf"), float("nan")]
    floats = list(doubles)
    dec_small = [decimal.Decimal(rng.randint(-10**9, 10**9)) / 100 for _ in range(N_ROWS)]
    dec_big = [decimal.Decimal(rng.randint(-10**37, 10**37)) for _ in range(N_ROWS)]
    dec_big[:6] = [decimal.Decimal(v) for v in (0, 1, -1, 127, 128, -129)]
    dec_wide = [decimal.Decimal(rng.randint(-10**20, 10**20)) / 10**4 for _ in range(N_ROWS)]
    dates = [dt.date(1970, 1, 1) + dt.timedelta(days=rng.randint(-30000, 30000)) for _ in range(N_ROWS)]
    stamps = [dt.datetime(2000, 1, 1) + dt.timedelta(microseconds=rng.randint(-10**15, 10**15)) for _ in range(N_ROWS)]
    return pa.table({
        "b": pa.array(_with_nulls(rng, [rng.random() < 0.5 for _ in range(N_ROWS)]), pa.bool_()),
        "i8": pa.array(_with_nulls(rng, [rng.randint(-128, 127) for _ in range(N_ROWS)]), pa.int8()),
        "i16": pa.array(_with_nulls(rng, [rng.randint(-32768, 32767) for _ in range(N_ROWS)]), pa.int16()),
        "i32": pa.array(_with_nulls(rng, ints), pa.int32()),
        "i64": pa.array(_with_nulls(rng, longs), pa.int64()),
        "f32": pa.array(_with_nulls(rng, floats), pa.float32()),
        "f64": pa.array(_with_nulls(rng, doubles), pa.float64()),
        "dec": pa.array(_with_nulls(rng, dec_small), pa.decimal128(12, 2)),
        "largeint": pa.array(_with_nulls(rng, dec_big), pa.decimal128(38, 0)),
        "dec_wide": pa.array(_with_nulls(rng, dec_wide), pa.decimal128(27, 4)),
        "d": pa.array(_with_nulls(rng, dates), pa.date32()),
        "ts": pa.array(_with_nulls(rng, stamps), pa.timestamp("us")),
        "s": pa.array(_strings(rng), pa.string()),
    })


COLUMN_SETS = [[c] for c in _sample_table().column_names] + [["i32", "s"], ["s", "d", "i64"], ["dec", "b", "f64"]]


@pytest.fixture(scope="module")
def spark():
    pyspark_sql = pytest.importorskip("pyspark.sql")
    ensure_java_home()
    session = (
        pyspark_sql.SparkSession.builder.master("local[1]")
        .appName("bucket-hash-test")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    yield session
    session.stop()


@pytest.mark.spark
def test_bucket_hash_matches_spark(spark) -> None:
    table = _sample_table()
    from pyspark.sql import functions as F

    df = spark.createDataFrame(table)
    exprs = [F.hash(*cols).alias(f"h{i}") for i, cols in enumerate(COLUMN_SETS)]
    exprs += [F.expr(f"pmod(hash({', '.join(cols)}), {BUCKETS})").alias(f"p{i}") for i, cols in enumerate(COLUMN_SETS)]
    rows = df.select(*exprs).collect()
    for i, cols in enumerate(COLUMN_SETS):
        expected_hash = np.array([r[f"h{i}"] for r in rows], dtype=np.int32)
        expected_bucket = np.array([r[f"p{i}"] for r in rows], dtype=np.int32)
        got_hash = spark_hash([table.column(c) for c in cols])
        mismatch = np.nonzero(got_hash != expected_hash)[0]
        assert len(mismatch) == 0, f"{cols}: first mismatching rows {mismatch[:5]} " \
            f"values {[table.column(cols[0])[int(j)] for j in mismatch[:3]]}"
        np.testing.assert_array_equal(hash_buckets(table, cols, BUCKETS), expected_bucket, err_msg=str(cols))


@pytest.mark.spark
def test_repartition_places_rows_in_their_bucket(spark) -> None:
    """The Spark load path relies on repartition(n, cols) using the same function."""
    table = _sample_table().select(["i32", "s"])
    from pyspark.sql import functions as F

    df = spark.createDataFrame(table).repartition(BUCKETS, "i32", "s").withColumn("pid", F.spark_partition_id())
    got = df.toArrow()
    np.testing.assert_array_equal(hash_buckets(got, ["i32", "s"], BUCKETS), got.column("pid").to_numpy())


def test_known_values() -> None:
    # Spark: SELECT hash(1) = -559580957 (hashInt(1, 42)); a NULL leaves the seed 42 unchanged.
    assert spark_hash([pa.array([1], pa.int32())])[0] == -559580957
    assert spark_hash([pa.array([None], pa.int32())])[0] == 42


def test_slices_and_chunks_hash_like_whole_arrays() -> None:
    table = _sample_table()
    whole = spark_hash([table.column("s"), table.column("largeint")])
    sliced = table.slice(17, 100)
    np.testing.assert_array_equal(spark_hash([sliced.column("s"), sliced.column("largeint")]), whole[17:117])
    chunked = pa.concat_tables([table.slice(0, 50), table.slice(50)])
    np.testing.assert_array_equal(spark_hash([chunked.column("s"), chunked.column("largeint")]), whole)


def test_literal_bucket_agrees_with_table_bucket() -> None:
    table = _sample_table().slice(0, 30)
    buckets = hash_buckets(table, ["i64", "d"], 5)
    for i in range(30):
        vals = [table.column("i64")[i].as_py(), table.column("d")[i].as_py()]
        assert literal_bucket(vals, [pa.int64(), pa.date32()], 5) == buckets[i]


def test_random_buckets_spread_evenly() -> None:
    b = random_buckets(100, 4)
    assert sorted(np.bincount(b, minlength=4).tolist()) == [25, 25, 25, 25]


@pytest.mark.parametrize("t", [pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint16(), pa.uint32(),
                               pa.uint64()])
def test_value_tuples_hash_as_their_arrays(t: pa.DataType) -> None:
    """The few-tuple path on Python ints (bucket pruning of `k = 5`) gives the arrays' hashes, extremes,
    negatives and NULLs included; values the type cannot hold and other types take the array path."""
    info = np.iinfo(t.to_pandas_dtype())
    rng = random.Random(str(t))
    values = [int(info.min), int(info.max), 0, 1, -1 if info.min < 0 else 2, None] + [
        rng.randint(int(info.min), int(info.max)) for _ in range(200)]
    for i in range(0, len(values) - 1, 2):
        rows = [(values[i], values[i + 1]), (values[i + 1], values[i])]
        want = spark_hash([pa.array([r[0] for r in rows], t), pa.array([r[1] for r in rows], t)])
        np.testing.assert_array_equal(spark_hash_values(rows, [t, t]), want)
    mixed = [(5, "a"), (None, "b")]
    np.testing.assert_array_equal(spark_hash_values(mixed, [t, pa.string()]),
                                  spark_hash([pa.array([5, None], t), pa.array(["a", "b"])]))
    many = [(v,) for v in values[6:30]]  # more tuples than the Python-int path takes
    np.testing.assert_array_equal(spark_hash_values(many, [t]), spark_hash([pa.array([v for (v,) in many], t)]))
