"""Spark loads and reads through the dorislite data source, checked against the in-process engine.

A table loaded through `run_spark_load` + `engine.commit` must scan exactly like a twin loaded with
`engine.load` (same routing, bucket hash and per-model aggregation), every row must sit in the tablet its
bucket hash names, failures and crashes must leave nothing, and `spark.read.format("dorislite")` must give
what `engine.scan` gives.
"""

from __future__ import annotations

import datetime as dt
import sqlite3
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from storage_specs import key, spec, table_rows, value

from storage.catalog.model import KEYS_AGG, KEYS_DUP, KEYS_UNIQUE, OlapTable, PartitionInfo, PartitionItem
from storage.engine import ScanRequest, StorageEngine
from storage.spark.load import run_spark_load, spark_load_progress
from storage.spark.session import spark_session
from storage.spark.tables import encode_schema
from storage.tablet.bucket_hash import hash_buckets
from storage.tablet.partition_router import route_partitions

pytestmark = pytest.mark.spark

SCHEMA = pa.schema([("k1", pa.int32()), ("d", pa.date32()), ("k2", pa.string()), ("v_sum", pa.int64()),
                    ("v_max", pa.int32()), ("v_min", pa.decimal128(10, 2)), ("v_rep", pa.string())])
AGGS = {KEYS_AGG: ("SUM", "MAX", "MIN", "REPLACE"), KEYS_UNIQUE: ("NONE",) * 4, KEYS_DUP: ("NONE",) * 4}
PARTITIONS = (PartitionInfo("RANGE", ("d",)), (
    PartitionItem("p1", lower=("0000-01-01",), upper=("2024-02-01",)),
    PartitionItem("p2", lower=("2024-02-01",), upper=("2024-03-01",)),
    PartitionItem("p3", lower=("2024-03-01",), upper=("2024-04-01",), buckets=2),  # fewer buckets than tasks
))


def table_spec(name: str, keys_type: str, distribution: str = "HASH"):
    sum_, max_, min_, rep = AGGS[keys_type]
    cols = [key("k1", "INT"), key("d", "DATE"), key("k2", "VARCHAR(10)"), value("v_sum", "BIGINT", sum_),
            value("v_max", "INT", max_), value("v_min", "DECIMAL(10, 2)", min_), value("v_rep", "VARCHAR(20)", rep)]
    return spec(name, keys_type, cols, buckets=3, hash_cols=("k1", "k2"), partition=PARTITIONS,
                distribution=distribution)


def make_rows(n: int, seed: int, keys_type: str) -> pa.Table:
    """Rows over ~Jan-Apr 2024 (April has no partition). UNIQUE gets distinct keys per load and REPLACE a
    value fixed by the key within one load: Spark's shuffle order is not the load order, and Doris does not
    define which duplicate wins inside one load either."""
    rng = np.random.default_rng(seed)
    if keys_type == KEYS_UNIQUE:
        ids = rng.choice(600, size=min(n, 600), replace=False)
        n = len(ids)
    else:
        ids = rng.integers(0, 600, n)
    k1 = (ids % 40).astype(np.int32)
    days = (ids * 7) % 105  # up to mid April
    d = [dt.date(2024, 1, 1) + dt.timedelta(days=int(x)) for x in days]
    k2 = [f"s{i % 11}" if i % 17 else None for i in ids]
    v_sum = rng.integers(-1000, 1000, n)
    v_max = rng.integers(0, 10_000, n).astype(np.int32)
    v_min = [Decimal(int(x)) / 100 for x in rng.integers(-99_999, 99_999, n)]
    v_rep = [f"r{i}-{seed}" for i in ids]
    return pa.Table.from_arrays([pa.array(k1), pa.array(d, pa.date32()), pa.array(k2, pa.string()),
                                 pa.array(v_sum), pa.array(v_max), pa.array(v_min, pa.decimal128(10, 2)),
                                 pa.array(v_rep)], schema=SCHEMA)


@pytest.fixture(scope="session")
def spark():
    return spark_session({"spark_master": "local[2]", "spark.sql.shuffle.partitions": "4"})


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[StorageEngine]:
    e = StorageEngine(tmp_path / "storage")
    e.open()
    e.catalog.create_database("db")
    yield e
    e.close()


def spark_load(engine: StorageEngine, spark, table: OlapTable, data: pa.Table, job: str = "job",
               **options: str):
    txn_id = engine.catalog.begin_txn(table.db_id, table.table_id)
    result = run_spark_load(engine, table, spark.createDataFrame(data), txn_id, job, SCHEMA, options=options)
    engine.commit(txn_id, result.staged, result.partition_ids)
    return result


def scan(engine: StorageEngine, table: OlapTable, **kw) -> pa.Table:
    return engine.scan(ScanRequest(engine.catalog.get_table_by_id(table.table_id), SCHEMA, SCHEMA.names, **kw)).table


def spark_read(spark, engine: StorageEngine, table: OlapTable, **options: str):
    reader = spark.read.format("dorislite").option("root", str(engine.root)).option("database", "db") \
        .option("table", table.name)
    for k, v in options.items():
        reader = reader.option(k, v)
    return reader.load()


def spark_rows(df) -> list[tuple]:
    return table_rows(df.toArrow())


@pytest.fixture(scope="module")
def loaded(spark, tmp_path_factory) -> Iterator[tuple[StorageEngine, dict[str, tuple[OlapTable, OlapTable]]]]:
    """Each model loaded twice (so reads merge two versions) through Spark and, as a twin, in-process."""
    e = StorageEngine(tmp_path_factory.mktemp("models") / "storage")
    e.open()
    e.catalog.create_database("db")
    tables = {}
    for keys_type in (KEYS_AGG, KEYS_UNIQUE, KEYS_DUP):
        name = keys_type.split("_")[0].lower()
        via_spark = e.catalog.create_table("db", table_spec(f"{name}_spark", keys_type))
        in_process = e.catalog.create_table("db", table_spec(f"{name}_local", keys_type))
        for seed in (1, 2):
            data = make_rows(900, seed, keys_type)
            result = spark_load(e, spark, via_spark, data, job=f"{name}-{seed}")
            local = e.load(in_process, data, strict=False)
            assert (result.loaded_rows, result.filtered_rows) == (local.num_rows, local.filtered_rows)
            assert result.filtered_rows > 0  # April rows: no partition
        tables[keys_type] = (via_spark, in_process)
    yield e, tables
    e.close()


@pytest.mark.parametrize("keys_type", [KEYS_AGG, KEYS_UNIQUE, KEYS_DUP])
def test_spark_load_equals_in_process_load(loaded, keys_type: str) -> None:
    engine, tables = loaded
    via_spark, in_process = tables[keys_type]
    got = scan(engine, via_spark)
    assert got.num_rows > 0
    assert table_rows(got) == table_rows(scan(engine, in_process))
    assert table_rows(scan(engine, via_spark, merge=False)) != [] and \
        len(table_rows(scan(engine, via_spark, merge=False))) >= got.num_rows


@pytest.mark.parametrize("keys_type", [KEYS_AGG, KEYS_DUP])
def test_every_row_sits_in_its_bucket_tablet(loaded, keys_type: str) -> None:
    engine, tables = loaded
    table = engine.catalog.get_table_by_id(tables[keys_type][0].table_id)
    by_id = {p.partition_id: (pos, p) for pos, p in enumerate(table.partitions)}
    seen = 0
    for tablet in engine.catalog.tablets(table.table_id):
        rows = scan(engine, table, tablet_ids=[tablet.tablet_id], merge=False)
        pos, partition = by_id[tablet.partition_id]
        assert (hash_buckets(rows, ["k1", "k2"], partition.buckets) == tablet.bucket).all()
        assert (route_partitions(table, rows) == pos).all()
        seen += rows.num_rows
    assert seen == scan(engine, table, merge=False).num_rows > 0


@pytest.mark.parametrize("keys_type", [KEYS_AGG, KEYS_UNIQUE, KEYS_DUP])
def test_spark_read_equals_engine_scan(spark, loaded, keys_type: str) -> None:
    engine, tables = loaded
    table = tables[keys_type][0]
    df = spark_read(spark, engine, table, schema=encode_schema(SCHEMA))
    assert df.columns == SCHEMA.names
    assert spark_rows(df) == table_rows(scan(engine, table))
    # the schema is found from the segments when not given
    assert spark_rows(spark_read(spark, engine, table)) == table_rows(scan(engine, table))


def test_spark_read_pushdown_pruning_and_snapshot(spark, loaded) -> None:
    engine, tables = loaded
    table = engine.catalog.get_table_by_id(tables[KEYS_AGG][0].table_id)
    full = scan(engine, table)
    # key and value predicates: value predicates apply after the merge (AGG), as the engine does
    filtered = spark_read(spark, engine, table, pushdown="true").filter(
        "k1 = 3 AND v_sum > 0 AND k2 IS NOT NULL AND d >= DATE'2024-02-01'")
    plan = filtered._jdf.queryExecution().executedPlan().toString()
    assert "Filter" not in plan.replace("RuntimeFilters", "")  # all pushed into the tablet scan
    expected = [r for r in table_rows(full) if r[0] == 3 and r[3] > 0 and r[2] is not None
                and r[1] >= dt.date(2024, 2, 1)]
    assert spark_rows(filtered) == expected and expected
    # without pushdown (the default) a DataFrame can be reused across queries (see the module docstring)
    df = spark_read(spark, engine, table)
    assert spark_rows(df.filter("k1 = 3")) == [r for r in table_rows(full) if r[0] == 3]
    assert spark_rows(df.filter("k2 IN ('s1', 's2') OR v_max < 10")) == [
        r for r in table_rows(full) if r[2] in ("s1", "s2") or r[4] < 10]
    assert df.count() == len(full)
    # column pruning: by option and by a reader schema
    pruned = spark_read(spark, engine, table, columns="k2,v_sum")
    assert pruned.columns == ["k2", "v_sum"]
    assert sorted(spark_rows(pruned), key=repr) == sorted(
        [(r[2], r[3]) for r in table_rows(full)], key=repr)
    by_schema = spark.read.format("dorislite").schema("k1 INT, v_max INT").option("root", str(engine.root)) \
        .option("database", "db").option("table", table.name).load()
    assert sorted(spark_rows(by_schema)) == sorted((r[0], r[4]) for r in table_rows(full))
    # an older snapshot: only the first load
    first = {str(p.partition_id): p.visible_version - 1 for p in table.partitions}
    import json
    old = spark_read(spark, engine, table, versions=json.dumps(first))
    assert spark_rows(old) == table_rows(scan(engine, table, versions={int(k): v for k, v in first.items()}))
    assert spark_rows(old) != table_rows(full)


def test_read_while_a_writer_holds_the_catalog(spark, loaded) -> None:
    engine, tables = loaded
    table = tables[KEYS_DUP][0]
    expected = table_rows(scan(engine, table))
    other = sqlite3.connect(engine.root / "catalog.db", isolation_level=None)
    try:
        other.execute("BEGIN IMMEDIATE")  # a server mid-DDL/publish: holds the write lock
        other.execute("UPDATE counters SET value = value WHERE name = 'id'")
        assert spark_rows(spark_read(spark, engine, table)) == expected
    finally:
        other.execute("ROLLBACK")
        other.close()


def test_error_rows_are_counted_and_sampled(spark, engine: StorageEngine) -> None:
    table = engine.catalog.create_table("db", table_spec("errs", KEYS_DUP))
    data = make_rows(300, 7, KEYS_DUP)
    bad = np.arange(data.num_rows) % 10 == 0
    errors = pa.array(np.where(bad, "too long for column v_rep", None), pa.string())
    with_errors = data.append_column("__dl_error", errors)
    no_partition = int((route_partitions(table, data) == -1)[~bad].sum())
    assert no_partition > 0
    txn_id = engine.catalog.begin_txn(table.db_id, table.table_id)
    result = run_spark_load(engine, table, spark.createDataFrame(with_errors), txn_id, "errs", SCHEMA)
    assert result.filtered_rows == int(bad.sum()) + no_partition
    assert result.loaded_rows == data.num_rows - result.filtered_rows
    reasons = {reason for _, reason in result.error_samples}
    assert reasons <= {"too long for column v_rep", "no partition for this tuple"} and len(reasons) == 2
    assert 0 < len(result.error_samples) <= 10 and all(text for text, _ in result.error_samples)
    engine.commit(txn_id, result.staged, result.partition_ids)
    assert scan(engine, table).num_rows == result.loaded_rows
    done, total = spark_load_progress("errs")
    assert done == total > 0


def test_random_distribution(spark, engine: StorageEngine) -> None:
    via_spark = engine.catalog.create_table("db", table_spec("rnd_spark", KEYS_DUP, "RANDOM"))
    data = make_rows(500, 3, KEYS_DUP)
    result = spark_load(engine, spark, via_spark, data)
    got = scan(engine, via_spark)
    assert got.num_rows == result.loaded_rows
    in_process = engine.catalog.create_table("db", table_spec("rnd_local", KEYS_DUP, "RANDOM"))
    engine.load(in_process, data, strict=False)
    assert table_rows(got) == table_rows(scan(engine, in_process))


def test_failing_task_leaves_nothing_after_abort(spark, engine: StorageEngine) -> None:
    table = engine.catalog.create_table("db", table_spec("fails", KEYS_AGG))
    txn_id = engine.catalog.begin_txn(table.db_id, table.table_id)
    df = spark.createDataFrame(make_rows(400, 5, KEYS_AGG))
    with pytest.raises(Exception, match="injected failure"):
        run_spark_load(engine, table, df, txn_id, "fails", SCHEMA, options={"test_fail_partition": "1"})
    assert any(p.is_file() for p in engine.staging_dir(txn_id).rglob("*.dat"))  # the failed task wrote files
    engine.abort(txn_id, "spark load failed")
    assert not engine.staging_dir(txn_id).exists()
    assert scan(engine, table).num_rows == 0
    assert not any(p.is_file() for p in engine.data_dir.rglob("*"))
    assert engine.catalog.get_txn(txn_id).status == "ABORTED"


def test_crash_between_tasks_and_commit_leaves_nothing(spark, engine: StorageEngine, tmp_path: Path) -> None:
    table = engine.catalog.create_table("db", table_spec("crash", KEYS_UNIQUE))
    spark_load(engine, spark, table, make_rows(200, 1, KEYS_UNIQUE))
    before = table_rows(scan(engine, table))
    txn_id = engine.catalog.begin_txn(table.db_id, table.table_id)
    result = run_spark_load(engine, table, spark.createDataFrame(make_rows(200, 2, KEYS_UNIQUE)), txn_id,
                            "crash", SCHEMA)
    assert result.staged and any(engine.staging_dir(txn_id).rglob("*.dat"))
    engine.close()  # the server dies here: tasks wrote everything, nothing was published
    restarted = StorageEngine(engine.root)
    restarted.open()
    try:
        assert not restarted.staging_dir(txn_id).exists()
        assert table_rows(scan(restarted, table)) == before
        published = {f"{r}" for r in restarted.catalog.all_rowset_ids()}
        on_disk = {p.name.rsplit("_", 1)[0] for p in restarted.data_dir.rglob("*.dat")}
        assert on_disk == published
    finally:
        restarted.close()
        engine.catalog = StorageEngine(engine.root).catalog  # the fixture closes it again


def test_retried_task_attempts_count_once(engine: StorageEngine) -> None:
    """A re-run attempt of a Spark partition replaces its predecessor's manifest: one per partition, and
    only the surviving attempt's rowsets are committed (no Spark needed: the task code runs directly)."""
    from storage.spark.task_writer import WriteTask, read_manifests

    table = engine.catalog.create_table("db", table_spec("retry", KEYS_DUP))
    txn_id = engine.catalog.begin_txn(table.db_id, table.table_id)
    task = WriteTask(root=str(engine.root), txn_id=txn_id, table=table, tablets=engine.tablet_map(table),
                     target=SCHEMA, max_segment_bytes=1 << 30)
    data = make_rows(100, 9, KEYS_DUP)
    first = task.run(data.to_batches(), spark_partition=0, attempt=0)
    second = task.run(data.to_batches(), spark_partition=0, attempt=1)
    manifests = read_manifests(engine.root, txn_id)
    assert [(m.spark_partition, m.attempt) for m in manifests] == [(0, 1)]
    assert {s.rowset_id for s in manifests[0].staged} == {s.rowset_id for s in second.staged}
    engine.commit(txn_id, manifests[0].staged, sorted({s.partition_id for s in second.staged}))
    assert scan(engine, table).num_rows == second.loaded_rows == first.loaded_rows
    assert not engine.staging_dir(txn_id).exists()  # the first attempt's files went with the staging folder


def test_spark_conf_comes_from_fe_conf() -> None:
    from storage.spark.session import spark_conf

    conf = spark_conf({"spark_master": "spark://h:7077", "spark.executor.memory": "3g", "other": "x"})
    assert conf["spark.master"] == "spark://h:7077" and conf["spark.executor.memory"] == "3g"
    assert conf["spark.ui.enabled"] == "false" and "other" not in conf
    assert spark_conf({})["spark.master"] == "local[*]" and spark_conf({})["spark.driver.memory"] == "2g"


def test_spark_conf_runs_the_servers_python(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from storage.spark.session import spark_conf, worker_python

    monkeypatch.delenv("PYSPARK_PYTHON", raising=False)
    assert worker_python({}) == sys.executable
    monkeypatch.setenv("PYSPARK_PYTHON", "/opt/py/bin/python3")
    assert worker_python({}) == "/opt/py/bin/python3"
    # fe.conf's Spark setting comes before the environment, as in spark-submit
    assert spark_conf({"spark.pyspark.python": "/srv/py/bin/python"})["spark.pyspark.python"] == "/srv/py/bin/python"
    # a source checkout (this one) is put on the workers' path, after the user's own entries
    conf = spark_conf({"spark.executorEnv.PYTHONPATH": "/u/lib"})
    root = str(Path(__file__).resolve().parents[2])
    assert conf["spark.executorEnv.PYTHONPATH"].split(":") == ["/u/lib", root]


def test_failing_task_names_its_exception(spark, engine: StorageEngine) -> None:
    from storage.errors import StorageError
    from storage.spark.errors import spark_errors

    table = engine.catalog.create_table("db", table_spec("fails_named", KEYS_DUP))
    txn_id = engine.catalog.begin_txn(table.db_id, table.table_id)
    with pytest.raises(StorageError) as e, spark_errors("Load", "/some/python"):
        run_spark_load(engine, table, spark.createDataFrame(make_rows(100, 5, KEYS_DUP)), txn_id, "named",
                       SCHEMA, options={"test_fail_partition": "0"})
    assert e.value.message == ("errCode = 2, detailMessage = Load failed on Spark: "
                               "RuntimeError: injected failure in Spark partition 0")
    engine.abort(txn_id, "failed")


def test_reading_a_missing_table_names_the_cause(spark, engine: StorageEngine) -> None:
    from storage.errors import StorageError
    from storage.spark.errors import spark_errors

    with pytest.raises(StorageError) as e, spark_errors("Read", "/some/python"):
        spark.read.format("dorislite").option("root", str(engine.root)).option("database", "db") \
            .option("table", "nope").load().count()
    assert e.value.message == "errCode = 2, detailMessage = Read failed on Spark: StorageError: Unknown table 'db.nope'"


def test_empty_sources_load_nothing(spark, engine: StorageEngine) -> None:
    """A table without data reads as no rows (Spark hands read() InputPartition(None)), and an empty frame,
    which Spark may run as fewer tasks than buckets, loads nothing."""
    source = engine.catalog.create_table("db", table_spec("empty_src", KEYS_AGG))
    df = spark.read.format("dorislite").option("root", str(engine.root)).option("database", "db") \
        .option("table", "empty_src").option("schema", encode_schema(SCHEMA)).load()
    assert df.count() == 0
    target = engine.catalog.create_table("db", table_spec("empty_dst", KEYS_AGG))
    for i, frame in enumerate((df, spark.createDataFrame(make_rows(10, 1, KEYS_AGG)).where("1 = 0"))):
        txn_id = engine.catalog.begin_txn(target.db_id, target.table_id)
        result = run_spark_load(engine, target, frame, txn_id, f"empty{i}", SCHEMA)
        assert (result.loaded_rows, result.filtered_rows, result.partition_ids) == (0, 0, [])
        engine.abort(txn_id, "no data")
    assert scan(engine, source).num_rows == scan(engine, target).num_rows == 0
