"""The data models' aggregation on its own: every AGG type, NULL handling, types kept, ordering."""

from __future__ import annotations

from decimal import Decimal

import pyarrow as pa

from storage.catalog.model import KEYS_AGG, KEYS_DUP, KEYS_UNIQUE
from storage.tablet.aggregation import aggregate, run_starts, sort_by_keys

AGGS = {"s": "SUM", "mx": "MAX", "mn": "MIN", "r": "REPLACE", "rn": "REPLACE_IF_NOT_NULL", "dec": "SUM"}


def _table() -> pa.Table:
    return pa.table({
        "k1": pa.array([2, 1, 1, None, 1, None, 2], pa.int32()),
        "k2": pa.array(["a", "x", "x", "n", "x", "n", "a"]),
        "s": pa.array([1, 2, None, 4, 5, None, 7], pa.int32()),
        "mx": pa.array([1, 9, 3, None, 4, None, 0], pa.int16()),
        "mn": pa.array([1, 9, 3, None, 4, None, 0], pa.int16()),
        "r": pa.array(["r0", "r1", "r2", "r3", None, "r5", "r6"]),
        "rn": pa.array(["n0", "n1", "n2", None, None, "n5", None]),
        "dec": pa.array([Decimal("1.10"), Decimal("2.20"), None, None, Decimal("3.30"), None, Decimal("0.01")],
                        pa.decimal128(10, 2)),
    })


def test_agg_model_collapses_equal_keys() -> None:
    src = _table()
    out = aggregate(sort_by_keys(src, ["k1", "k2"]), KEYS_AGG, ["k1", "k2"], AGGS)
    assert out.schema == src.schema  # SUM of INT stays INT, DECIMAL(10, 2) stays DECIMAL(10, 2)
    assert out.to_pylist() == [
        {"k1": None, "k2": "n", "s": 4, "mx": None, "mn": None, "r": "r5", "rn": "n5", "dec": None},
        {"k1": 1, "k2": "x", "s": 7, "mx": 9, "mn": 3, "r": None, "rn": "n2", "dec": Decimal("5.50")},
        {"k1": 2, "k2": "a", "s": 8, "mx": 1, "mn": 0, "r": "r6", "rn": "n0", "dec": Decimal("1.11")},
    ]


def test_unique_model_keeps_last_row_and_dup_keeps_all() -> None:
    src = sort_by_keys(_table(), ["k1", "k2"])
    uniq = aggregate(src, KEYS_UNIQUE, ["k1", "k2"], {})
    assert uniq.column("r").to_pylist() == ["r5", None, "r6"]
    assert uniq.column("s").to_pylist() == [None, 5, 7]
    assert aggregate(src, KEYS_DUP, ["k1", "k2"], {}).num_rows == 7


def test_order_column_decides_replace() -> None:
    t = pa.table({"k": [1, 1, 1], "v": ["new", "old", "mid"], "ver": [3, 1, 2]})
    out = aggregate(sort_by_keys(t, ["k"], order_column="ver"), KEYS_AGG, ["k"], {"v": "REPLACE"}, order_column="ver")
    assert out.to_pylist() == [{"k": 1, "v": "new"}]


def test_run_starts_treats_nulls_as_equal() -> None:
    t = pa.table({"a": pa.array([None, None, 1, 1, 2]), "b": pa.array(["x", "x", None, "y", "y"])})
    assert run_starts(t, ["a", "b"]).tolist() == [0, 2, 3, 4]
