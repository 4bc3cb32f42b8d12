"""merge_parts: a dominant part merged by key lookup gives the same rows as sorting everything."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from storage.catalog.model import KEYS_AGG, KEYS_UNIQUE, Column, MaterializedIndexMeta
from storage.tablet.aggregation import aggregate_index, merge_parts, sort_by_keys


def _index(keys_type: str) -> MaterializedIndexMeta:
    agg = {"v": "SUM", "m": "MAX", "r": "REPLACE"} if keys_type == KEYS_AGG else dict.fromkeys("vmr", "NONE")
    columns = (Column("k", "BIGINT", is_key=True, aggregation=None), Column("s", "VARCHAR(8)", is_key=True, aggregation=None),
               *(Column(c, "BIGINT", is_key=False, aggregation=agg[c]) for c in "vmr"))
    return MaterializedIndexMeta(index_id=1, name="t", columns=columns, keys_type=keys_type,
                                 short_key_column_count=2, schema_hash=0)


def _part(rng: np.random.Generator, n: int, key_space: int, index: MaterializedIndexMeta) -> pa.Table:
    k = rng.integers(0, key_space, n)
    t = pa.table({"k": pa.array(k, pa.int64()),
                  "s": pa.array([None if x % 7 == 0 else f"s{x % 3}" for x in k.tolist()]),
                  "v": pa.array(rng.integers(0, 100, n)), "m": pa.array(rng.integers(0, 100, n)),
                  "r": pa.array(rng.integers(0, 100, n))})
    return aggregate_index(sort_by_keys(t, ["k", "s"]), index)  # as a segment holds it: keys once, sorted


@pytest.mark.parametrize("keys_type", [KEYS_AGG, KEYS_UNIQUE])
@pytest.mark.parametrize("seed", range(5))
def test_same_rows_as_a_full_sort(keys_type: str, seed: int) -> None:
    rng = np.random.default_rng(seed)
    index = _index(keys_type)
    big = _part(rng, 20_000, 30_000, index)
    smalls = [_part(rng, 50, 30_000, index) for _ in range(4)]
    for at in (0, 2):  # the big part first (compacted base) or between loads
        parts = [*smalls[:at], big, *smalls[at:]]
        want = aggregate_index(sort_by_keys(pa.concat_tables(parts), ["k", "s"]), index)
        got = merge_parts(parts, index)
        assert sort_by_keys(got, ["k", "s"]).to_pylist() == want.to_pylist()
