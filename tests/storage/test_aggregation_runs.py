"""AGGREGATE-model aggregation over key-sorted rows where most keys occur once and a few repeat (a merge of a
few small rowsets into a big one): the one-row runs are taken as they are, the others aggregated; checked
against a plain Python reference on random data with NULLs, every aggregation type and several key types."""

from __future__ import annotations

from decimal import Decimal

import numpy as np
import pyarrow as pa
import pytest

from storage.catalog.model import KEYS_AGG
from storage.tablet.aggregation import aggregate, sort_by_keys

AGGS = {"s": "SUM", "mx": "MAX", "mn": "MIN", "r": "REPLACE", "rn": "REPLACE_IF_NOT_NULL", "dec": "SUM"}


def reference(table: pa.Table) -> list[dict]:
    out: dict[tuple, dict] = {}
    for row in table.to_pylist():
        key = (row["k1"], row["k2"])
        acc = out.get(key)
        if acc is None:
            out[key] = dict(row)
            continue
        for c, agg in AGGS.items():
            v, a = row[c], acc[c]
            if agg == "SUM":
                acc[c] = a if v is None else v if a is None else a + v
            elif agg in ("MAX", "MIN"):
                acc[c] = a if v is None else v if a is None else (max if agg == "MAX" else min)(a, v)
            elif agg == "REPLACE":
                acc[c] = v
            else:
                acc[c] = a if v is None else v
    return list(out.values())


@pytest.mark.parametrize("seed", range(6))
def test_mostly_unique_keys(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 400))
    distinct = max(1, int(n * rng.uniform(0.5, 1.0)))
    k1 = rng.integers(0, distinct, n)
    nulls = rng.random(n) < 0.05

    def values(kind: str) -> pa.Array:
        raw = rng.integers(-50, 50, n)
        mask = rng.random(n) < 0.2
        if kind == "str":
            return pa.array([f"v{x}" for x in raw], mask=mask)
        if kind == "dec":
            return pa.array([Decimal(int(x)) / 4 for x in raw], pa.decimal128(12, 2), mask=mask)
        return pa.array(raw.astype(np.int32), mask=mask)

    table = pa.table({
        "k1": pa.array(k1.astype(np.int64), mask=nulls),
        "k2": pa.array([f"g{x % 3}" for x in k1]),
        "s": values("int"), "mx": values("int"), "mn": values("int"), "r": values("str"), "rn": values("str"),
        "dec": values("dec"),
    })
    ordered = sort_by_keys(table, ["k1", "k2"])
    got = aggregate(ordered, KEYS_AGG, ["k1", "k2"], AGGS)
    assert got.schema == table.schema
    assert got.to_pylist() == reference(ordered)
