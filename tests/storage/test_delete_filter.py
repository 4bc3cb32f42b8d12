"""storage.tablet.delete_filter and DELETE versions in the tablet scan: the JSON forms round-trip, key sets
match exactly (NULL equal to NULL), a DELETE applies only to older rowsets, before the merge, counted in
RowsDelFiltered, and segment pruning and bucket pruning still work next to DELETE rowsets."""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from storage_specs import key, spec, value

from storage.catalog.delete_jobs import DeleteInfo
from storage.catalog.model import KEYS_AGG, KEYS_DUP, KEYS_UNIQUE, Rowset
from storage.engine import ScanRequest, StorageEngine
from storage.jobs.delete import delete_label, publish_key_delete, publish_predicate_delete
from storage.predicate import ColumnPredicate, Op
from storage.tablet.delete_filter import (
    apply_deletes,
    delete_columns,
    deletes_above,
    encode_key_set,
    encode_predicates,
    key_set_mask,
    parse_delete_predicate,
)


def _delete(version: int, text: str) -> Rowset:
    return Rowset(f"d{version}", 1, version, version, 0, 0, 0, 1, kind="DELETE", delete_predicate=text)


def test_predicates_round_trip_with_typed_values() -> None:
    preds = [ColumnPredicate("d", Op.EQ, (dt.date(2024, 1, 2),)),
             ColumnPredicate("t", Op.LT, (dt.datetime(2024, 1, 2, 3, 4, 5, 6),)),
             ColumnPredicate("m", Op.IN, (Decimal("1.50"), None)),
             ColumnPredicate("s", Op.NOT_IN, ("a", "b")), ColumnPredicate("k", Op.IS_NULL),
             ColumnPredicate("b", Op.NE, (True,))]
    cond = parse_delete_predicate(encode_predicates(preds))
    assert cond.predicates == tuple(preds) and cond.key_set is None
    assert cond.columns == ("d", "t", "m", "s", "k", "b")


def test_key_set_mask_matches_tuples_and_null_keys() -> None:
    rows = pa.table({"k1": pa.array([1, 1, 2, None, 3, None], pa.int64()),
                     "k2": pa.array(["a", "b", "a", "x", None, None])})
    keys = pa.table({"k1": pa.array([1, None, 3], pa.int64()), "k2": pa.array(["b", "x", None])})
    assert key_set_mask(rows, keys).tolist() == [False, True, False, True, True, False]
    cond = parse_delete_predicate(encode_key_set(keys))
    assert cond.key_set is not None and cond.key_set.equals(keys)
    # types are matched to the rows' (an int32 key set against int64 rows)
    assert key_set_mask(rows, pa.table({"k1": pa.array([2], pa.int32()), "k2": ["a"]})).tolist() == [
        False, False, True, False, False, False]


def test_apply_deletes_all_terms_must_match_and_nulls_do_not() -> None:
    rows = pa.table({"k": pa.array([1, 2, 3, 4], pa.int64()), "v": pa.array([10, None, 30, 40], pa.int32())})
    both = _delete(5, encode_predicates([ColumnPredicate("k", Op.GE, (2,)), ColumnPredicate("v", Op.LT, (35,))]))
    kept, removed = apply_deletes(rows, [both])
    assert (kept.column("k").to_pylist(), removed) == ([1, 2, 4], 1)  # v NULL: `v < 35` is not true
    null_rows = _delete(6, encode_predicates([ColumnPredicate("v", Op.IS_NULL)]))
    kept, removed = apply_deletes(rows, [both, null_rows])
    assert (kept.column("k").to_pylist(), removed) == ([1, 4], 2)
    assert apply_deletes(rows, []) == (rows, 0)
    assert deletes_above([both, null_rows], 5) == [null_rows]
    assert delete_columns([both, null_rows]) == ["k", "v"]


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[StorageEngine]:
    e = StorageEngine(tmp_path / "root")
    e.open()
    e.catalog.create_database("db")
    yield e
    e.close()


def _info(table, conditions=("c",)) -> DeleteInfo:  # noqa: ANN001
    return DeleteInfo(table.db_id, table.table_id, table.name, delete_label(), (table.name,), True,
                      tuple(conditions), time.time())


def _predicate_delete(engine: StorageEngine, table, *preds: ColumnPredicate) -> None:  # noqa: ANN001
    publish_predicate_delete(engine, table, [p.partition_id for p in table.partitions], preds, _info(table))


DUP_SCHEMA = pa.schema([("k", pa.int64()), ("v", pa.int32())])


def test_dup_delete_on_a_value_column_applies_to_older_rowsets_only(engine: StorageEngine) -> None:
    table = engine.catalog.create_table("db", spec("t", KEYS_DUP, (key("k", "BIGINT"), value("v", "INT")), buckets=2))
    engine.load(table, pa.table({"k": pa.array(range(100), pa.int64()), "v": pa.array(np.arange(100) % 10, pa.int32())}))
    _predicate_delete(engine, table, ColumnPredicate("v", Op.EQ, (3,)))
    engine.load(table, pa.table({"k": pa.array([1000], pa.int64()), "v": pa.array([3], pa.int32())}))

    result = engine.scan(ScanRequest(table=table, schema=DUP_SCHEMA, columns=["k"]))
    ks = sorted(result.table.column("k").to_pylist())
    assert ks == sorted([k for k in range(100) if k % 10 != 3] + [1000])  # the later row with v = 3 stays
    assert result.stats.rows_del_filtered == 10 and result.stats.rows_returned == 91
    # COUNT(*) reads no column of its own: the delete's column is read for it
    assert engine.scan(ScanRequest(table=table, schema=DUP_SCHEMA, columns=[])).table.num_rows == 91
    # pushed predicates and the delete together; segment zone maps still rule segments out
    result = engine.scan(ScanRequest(table=table, schema=DUP_SCHEMA, columns=["k", "v"],
                                     predicates=[ColumnPredicate("k", Op.GE, (500,))]))
    assert result.table.to_pylist() == [{"k": 1000, "v": 3}]
    assert result.stats.segments_filtered >= 1
    # a snapshot from before the delete does not see it
    before = {p.partition_id: 2 for p in table.partitions}
    assert engine.scan(ScanRequest(table=table, schema=DUP_SCHEMA, columns=["k"], versions=before)).table.num_rows == 100


def test_agg_delete_is_applied_before_the_merge(engine: StorageEngine) -> None:
    columns = (key("k", "BIGINT"), value("v", "BIGINT", "SUM"))
    table = engine.catalog.create_table("db", spec("a", KEYS_AGG, columns, buckets=1))
    schema = pa.schema([("k", pa.int64()), ("v", pa.int64())])
    load = lambda ks, vs: engine.load(table, pa.table({"k": pa.array(ks, pa.int64()), "v": pa.array(vs, pa.int64())}))  # noqa: E731
    load([1, 2], [10, 20])
    load([1, 2], [1, 2])
    _predicate_delete(engine, table, ColumnPredicate("k", Op.EQ, (1,)))
    load([1], [5])  # after the delete: the only value of k = 1 now
    for merge in (True, False):  # merge-on-read, and the raw rows a pre-aggregating query reads
        got = engine.scan(ScanRequest(table=table, schema=schema, columns=["k", "v"], merge=merge)).table
        sums: dict[int, int] = {}
        for r in got.to_pylist():
            sums[r["k"]] = sums.get(r["k"], 0) + r["v"]
        assert sums == {1: 5, 2: 22}


def test_unique_key_delete_and_reinsert(engine: StorageEngine) -> None:
    columns = (key("k", "BIGINT"), key("s", "VARCHAR(8)"), value("v", "INT", "REPLACE"))
    table = engine.catalog.create_table("db", spec("u", KEYS_UNIQUE, columns, buckets=3))
    schema = pa.schema([("k", pa.int64()), ("s", pa.string()), ("v", pa.int32())])

    def load(ks: list, ss: list, vs: list) -> None:
        engine.load(table, pa.table({"k": pa.array(ks, pa.int64()), "s": pa.array(ss, pa.string()),
                                     "v": pa.array(vs, pa.int32())}))

    load(list(range(20)), [None if k % 5 == 0 else f"s{k}" for k in range(20)], list(range(20)))
    matched = engine.scan(ScanRequest(table=table, schema=schema, columns=["k", "s"],
                                      predicates=[ColumnPredicate("v", Op.LT, (6,))])).table
    result = publish_key_delete(engine, table, matched, "lbl")
    assert result is not None and result.rows == 6
    rows = engine.scan(ScanRequest(table=table, schema=schema, columns=["k"])).table
    assert sorted(rows.column("k").to_pylist()) == list(range(6, 20))
    load([0, 3], [None, "s3"], [100, 103])  # loaded again later: visible again
    rows = engine.scan(ScanRequest(table=table, schema=schema, columns=["k", "v"])).table
    assert sorted(rows.to_pylist(), key=lambda r: r["k"])[:3] == [{"k": 0, "v": 100}, {"k": 3, "v": 103},
                                                                  {"k": 6, "v": 6}]
    # each tablet holds only its own keys: the rowsets' key sets add up to the matched keys
    texts = [rs.delete_predicate for t in engine.catalog.tablets(table.table_id)
             for rs in engine.catalog.all_rowsets(t.tablet_id) if rs.kind == "DELETE"]
    assert sum(parse_delete_predicate(x).key_set.num_rows for x in texts) == 6
    assert publish_key_delete(engine, table, matched.slice(0, 0), "none") is None


def test_delete_reaches_rollup_tablets(engine: StorageEngine) -> None:
    columns = (key("k", "BIGINT"), key("g", "INT"), value("v", "BIGINT", "SUM"))
    table = engine.catalog.create_table("db", spec("r", KEYS_AGG, columns, buckets=2))
    rollup = engine.catalog.add_index(table.table_id, "r_g", (columns[1], columns[2]), 1)
    table = engine.catalog.get_table_by_id(table.table_id)
    engine.load(table, pa.table({"k": pa.array([1, 2, 3], pa.int64()), "g": pa.array([7, 7, 8], pa.int32()),
                                 "v": pa.array([1, 2, 4], pa.int64())}))
    _predicate_delete(engine, table, ColumnPredicate("g", Op.EQ, (7,)))
    schema = pa.schema([("k", pa.int64()), ("g", pa.int32()), ("v", pa.int64())])
    got = engine.scan(ScanRequest(table=table, schema=schema, columns=["g", "v"], index_id=rollup.index_id)).table
    assert got.to_pylist() == [{"g": 8, "v": 4}]
    # bucket pruning: one tablet of the base, with the delete applied there too
    tablets = engine.catalog.tablets(table.table_id, index_id=table.base_index_id)
    total = sum(engine.scan(ScanRequest(table=table, schema=schema, columns=["k"], tablet_ids=[t.tablet_id]))
                .table.num_rows for t in tablets)
    assert total == 1


def test_rename_delete_columns_rewrites_both_forms() -> None:
    from storage.predicate import ColumnPredicate, Op
    from storage.tablet.delete_filter import (
        encode_key_set,
        encode_predicates,
        parse_delete_predicate,
        rename_delete_columns,
    )

    text = encode_predicates([ColumnPredicate("V", Op.EQ, (1,)), ColumnPredicate("k", Op.GT, (2,))])
    renamed = parse_delete_predicate(rename_delete_columns(text, "v", "w"))
    assert [p.column for p in renamed.predicates] == ["w", "k"]
    keys = pa.table({"k": pa.array([1, 2], pa.int32()), "g": pa.array(["a", "b"])})
    renamed = parse_delete_predicate(rename_delete_columns(encode_key_set(keys), "K", "id"))
    assert renamed.key_set.column_names == ["id", "g"]
    assert renamed.key_set.column("id").to_pylist() == [1, 2]
