"""predicate_mask's numpy path (null-free int / float columns, literals of the column type) answers exactly
as the pyarrow kernels it short-cuts."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from storage.predicate import ColumnPredicate as P
from storage.predicate import Op
from storage.tablet.predicate_filter import predicate_mask

_KERNELS = {Op.EQ: pc.equal, Op.NE: pc.not_equal, Op.LT: pc.less, Op.LE: pc.less_equal,
            Op.GT: pc.greater, Op.GE: pc.greater_equal}


@pytest.mark.parametrize(("arrow_type", "values", "probes"), [
    (pa.int64(), [5, -3, 0, 2**62, 7], [-3, 0, 5, 6, 2**62, 2.5, 5.0]),
    (pa.uint8(), [0, 255, 3], [0, 3, 255, 2.0]),
    # a key compared as the Python int it is: the type's edges, and values past them
    (pa.int8(), [-128, 0, 127, 5], [-129, -128, 0, 5, 127, 128, 2**40]),
    (pa.int32(), [-2**31, 7, 2**31 - 1], [-2**31 - 1, -2**31, 7, 2**31 - 1, 2**31]),
    (pa.float64(), [1.5, float("nan"), -0.0, float("inf")], [1.5, 0.0, float("nan"), float("inf"), 2]),
])
def test_numpy_compare_equals_pyarrow(arrow_type: pa.DataType, values: list, probes: list) -> None:
    col = pa.array(values, arrow_type)
    table = pa.table({"c": col})
    chunked = pa.table({"c": pa.chunked_array([col[:2], col[2:]])})  # several chunks: the kernel path
    for v in probes:
        for op, kernel in _KERNELS.items():
            try:
                literal = pa.scalar(v, type=arrow_type)
            except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError):
                literal = v
            want = pc.fill_null(kernel(col, literal), False).to_numpy(zero_copy_only=False)
            for t in (table, chunked):
                got = predicate_mask(t, [P("C", op, (v,))])
                assert got.tolist() == want.tolist(), (v, op)


def test_mixed_predicates_and_nulls() -> None:
    table = pa.table({"a": pa.array([1, 2, None, 4]), "b": pa.array([1.0, 2.0, 3.0, 4.0])})
    mask = predicate_mask(table, [P("a", Op.GE, (2,)), P("b", Op.LT, (4.0,))])
    assert mask.tolist() == [False, True, False, False]
    assert predicate_mask(table, []).tolist() == [True] * 4
    assert np.count_nonzero(predicate_mask(table, [P("a", Op.EQ, (None,))])) == 0
