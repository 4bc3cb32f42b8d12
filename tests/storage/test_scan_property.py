"""Property test: tables with random data and random bloom filter / bitmap indexes answer random predicates
exactly as a plain full scan does, and the scan counters add up: rows in the segments = rows removed by
the short key range + zone maps + bloom filters + bitmap indexes + the exact predicate + rows returned."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pyarrow as pa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from storage_specs import key, spec, value

from storage.catalog.model import KEYS_DUP, IndexDef
from storage.engine import ScanRequest, StorageEngine
from storage.predicate import ColumnPredicate, Op
from storage.tablet.predicate_filter import predicate_mask

SCHEMA = pa.schema([("k", pa.int64()), ("a", pa.int32()), ("b", pa.int64()), ("s", pa.string())])
VALUE_COLUMNS = ("a", "b", "s")
OPS = (Op.EQ, Op.NE, Op.LT, Op.LE, Op.GT, Op.GE, Op.IN, Op.NOT_IN, Op.IS_NULL, Op.IS_NOT_NULL)

def make_data(seed: int, rows: int, cardinality: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    nulls = rng.random(rows) < 0.05
    return pa.table({
        "k": pa.array(np.sort(rng.integers(0, rows * 2, rows))),
        "a": pa.array(rng.integers(0, cardinality, rows).astype(np.int32), mask=nulls),
        "b": pa.array(rng.integers(0, 1 << 40, rows)),
        "s": pa.array([f"v{x}" for x in rng.integers(0, cardinality, rows)], pa.string()),
    })

def literal(column: str, n: int, rows: int, cardinality: int):
    if column == "k":
        return n % (rows * 2)
    if column == "s":
        return f"v{n % cardinality}"
    return n % cardinality if column == "a" else n

predicate_strategy = st.tuples(st.sampled_from(("k", "a", "b", "s")), st.sampled_from(OPS),
                               st.lists(st.integers(0, 1 << 40), min_size=1, max_size=3))

@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 1000), rows=st.integers(1, 40_000), cardinality=st.sampled_from((3, 50, 5000)),
       bloom=st.sets(st.sampled_from(VALUE_COLUMNS)), bitmap=st.sets(st.sampled_from(VALUE_COLUMNS)),
       buckets=st.integers(1, 3), queries=st.lists(st.lists(predicate_strategy, min_size=1, max_size=3),
                                                     min_size=1, max_size=6))
def test_indexed_scans_equal_full_scans(tmp_path_factory, seed, rows, cardinality, bloom, bitmap, buckets,
                                        queries):
    root: Path = tmp_path_factory.mktemp("prop")
    engine = StorageEngine(root)
    engine.open()
    try:
        engine.catalog.create_database("db")
        columns = (key("k", "BIGINT"), value("a", "INT"), value("b", "BIGINT"), value("s", "VARCHAR(20)"))
        base = spec("t", KEYS_DUP, columns, buckets=buckets, short_keys=1)
        props = (("bloom_filter_columns", ",".join(sorted(bloom))),) if bloom else ()
        defs = tuple(IndexDef(f"idx_{c}", (c,), "BITMAP") for c in sorted(bitmap))

        table = engine.catalog.create_table("db", replace(base, properties=props, index_defs=defs))
        data = make_data(seed, rows, cardinality)
        for chunk in (data.slice(0, rows // 2), data.slice(rows // 2)):  # two rowsets
            if chunk.num_rows:
                engine.load(table, chunk)
        for query in queries:
            preds = []
            for column, op, ns in query:
                vals = tuple(literal(column, n, rows, cardinality) for n in ns)
                if op in (Op.IS_NULL, Op.IS_NOT_NULL):
                    vals = ()
                elif op not in (Op.IN, Op.NOT_IN):
                    vals = vals[:1]
                preds.append(ColumnPredicate(column, op, vals))
            result = engine.scan(ScanRequest(table=table, schema=SCHEMA, columns=list(SCHEMA.names),
                                             predicates=preds))
            want = data.filter(pa.array(predicate_mask(data, preds))) if rows else data
            assert sorted(result.table.to_pylist(), key=repr) == sorted(want.to_pylist(), key=repr), preds
            s = result.stats
            assert s.rows_returned == want.num_rows
            filtered = (s.rows_key_range_filtered + s.rows_stats_filtered + s.rows_bloom_filter_filtered
                        + s.rows_bitmap_index_filtered)
            assert filtered + s.raw_rows_read == rows, (preds, s)
            assert s.raw_rows_read == s.rows_vector_pred_filtered + s.rows_returned, (preds, s)
            if not bloom:
                assert s.rows_bloom_filter_filtered == 0
            if not bitmap:
                assert s.rows_bitmap_index_filtered == 0
    finally:
        engine.close()
