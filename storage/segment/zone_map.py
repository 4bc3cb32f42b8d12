"""Zone maps: min, max, has_null, has_not_null per data page and for the whole segment (Doris column_zone_map).

On disk: one INDEX page per column whose body is an Arrow IPC stream of one record batch with columns
min, max (the column's own type), has_null, has_not_null; row 0 is the segment, row i + 1 is page i.
Pruning compares predicate values with those arrays in pyarrow, i.e. with exactly the comparison
semantics the caller's exact filter uses. A float page holding NaN gets [-inf, +inf].
"""

from __future__ import annotations

import functools
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from storage.errors import CorruptDataError
from storage.int128 import wide_scalar
from storage.predicate import ColumnPredicate, Op
from storage.segment.page import PageEncoding, build_page

MAX_IN_VALUES = 256  # longer IN lists are pruned by their min and max only


@dataclass(frozen=True)
class ZoneMap:
    min: Any
    max: Any
    has_null: bool
    has_not_null: bool


def to_scalar(value: Any, arrow_type: pa.DataType) -> pa.Scalar | None:
    """`value` as a scalar of the column's type, or None when it cannot be represented exactly.

    pa.scalar silently truncates (2.5 -> int 2, a datetime -> its date); pruning on the truncated value
    would drop matching rows, so a value that does not round-trip is refused and the caller keeps all rows.
    """
    if value is None:
        return None
    try:
        s = pa.scalar(value, type=arrow_type)
        same = s.as_py() == value
    except (pa.ArrowException, TypeError, ValueError, OverflowError):
        return wide_scalar(value, arrow_type)
    return s if same is True else None


@functools.lru_cache(maxsize=1024)
def _cached_scalars(arrow_type: pa.DataType, values: tuple, kinds: tuple) -> tuple[pa.Scalar | None, ...]:
    return tuple(to_scalar(v, arrow_type) for v in values)


def probe_scalars(values: tuple, arrow_type: pa.DataType) -> tuple[pa.Scalar | None, ...]:
    """to_scalar of each value, memoised: a scan converts the same predicate values for every segment.
    The key carries the values' Python types, since 1, 1.0 and True are equal (and hash alike) yet need
    not convert alike."""
    if len(values) > MAX_IN_VALUES:
        return value_set(values, arrow_type).scalars
    try:
        return _cached_scalars(arrow_type, values, tuple(map(type, values)))
    except TypeError:  # an unhashable value
        return tuple(to_scalar(v, arrow_type) for v in values)


# integer columns' value ranges: a Python int inside one needs no Arrow scalar to be compared (probe_values)
INT_RANGES = {t: (-(1 << (t.bit_width - 1)), (1 << (t.bit_width - 1)) - 1)
               for t in (pa.int8(), pa.int16(), pa.int32(), pa.int64())}


def plain_int(value: Any, arrow_type: pa.DataType) -> bool:
    """A Python int (not a bool) that an integer column of `arrow_type` holds exactly: compared, encoded and
    filtered as it is, without an Arrow scalar (a point query's key)."""
    bounds = INT_RANGES.get(arrow_type)
    return bounds is not None and type(value) is int and bounds[0] <= value <= bounds[1]


def probe_values(values: tuple, arrow_type: pa.DataType) -> list | None:
    """The values as the Python values of the column's type that the bounds compare with, or None when one
    cannot be represented exactly (probe_scalars). A point query's key changes every time: its ints are
    taken as they are (pa.scalar and as_py cost ~15 us a value, and the memo never hits)."""
    if all(plain_int(v, arrow_type) for v in values):
        return list(values)
    scalars = probe_scalars(values, arrow_type)
    if not scalars or any(s is None for s in scalars):
        return None
    return [s.as_py() for s in scalars if s is not None]


@dataclass(frozen=True)
class ValueSet:
    """A long IN list probed against zone maps: converted once per scan, not per segment and page; such a
    list prunes by its smallest and largest value."""

    scalars: tuple[pa.Scalar | None, ...]
    exact: bool  # every value converted losslessly
    lo: pa.Scalar | None = None
    hi: pa.Scalar | None = None


_VALUE_SETS: OrderedDict[tuple[int, pa.DataType], tuple[tuple, ValueSet]] = OrderedDict()
_VALUE_SETS_LOCK = threading.Lock()


def value_set(values: tuple, arrow_type: pa.DataType) -> ValueSet:
    """The ValueSet of one predicate's values, kept while the same tuple is probed (keyed by identity: hashing
    a list of 100,000 values for every segment would cost what the cache saves)."""
    key = (id(values), arrow_type)
    with _VALUE_SETS_LOCK:
        hit = _VALUE_SETS.get(key)
        if hit is not None and hit[0] is values:
            _VALUE_SETS.move_to_end(key)
            return hit[1]
    try:  # one conversion of the whole list; lossless only if every value comes back as given
        arr = pa.array(values, type=arrow_type)
        exact = arr.null_count == 0 and arr.to_pylist() == list(values)
    except (pa.ArrowException, TypeError, ValueError, OverflowError):
        arr, exact = None, False
    if not exact or arr is None or not len(arr):
        result = ValueSet(tuple(to_scalar(v, arrow_type) for v in values), False)
    else:
        bounds = pc.min_max(arr)
        result = ValueSet(tuple(arr), True, bounds["min"], bounds["max"])
    with _VALUE_SETS_LOCK:
        _VALUE_SETS[key] = (values, result)
        while len(_VALUE_SETS) > 16:
            _VALUE_SETS.popitem(last=False)
    return result


def build_zone_maps(arr: pa.Array, bounds: np.ndarray) -> pa.RecordBatch:
    """Zone maps of the pages [bounds[i], bounds[i+1]) of `arr`, preceded by the segment's."""
    t = arr.type
    n_pages = len(bounds) - 1
    valid = arr.is_valid().to_numpy(zero_copy_only=False) if arr.null_count else np.ones(len(arr), bool)
    starts = bounds[:-1]
    valid_counts = np.add.reduceat(valid.astype(np.int64), starts) if n_pages and len(arr) else np.zeros(n_pages)
    sizes = np.diff(bounds)
    has_not_null = valid_counts > 0
    has_null = valid_counts < sizes
    nan_pages = np.zeros(n_pages, bool)
    if pa.types.is_floating(t) and n_pages and len(arr):
        nan = pc.fill_null(pc.is_nan(arr), False).to_numpy(zero_copy_only=False)
        nan_pages = np.add.reduceat(nan.astype(np.int64), starts) > 0
    # scalars, not Python values: a LARGEINT's 39-digit extremes do not survive pa.array(Decimal) (38 digits)
    mins: list[pa.Scalar] = []
    maxs: list[pa.Scalar] = []
    for i, (s, e) in enumerate(zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True)):
        if nan_pages[i]:
            mins.append(pa.scalar(float("-inf"), t))
            maxs.append(pa.scalar(float("inf"), t))
            continue
        mm = pc.min_max(arr.slice(s, e - s))
        mins.append(mm["min"])
        maxs.append(mm["max"])
    if n_pages == 1:  # a small segment: its one page's bounds are the segment's
        seg_min, seg_max = mins[0], maxs[0]
    else:
        seg_min = pc.min(pa.array(mins, type=t)) if n_pages else pa.scalar(None, t)
        seg_max = pc.max(pa.array(maxs, type=t)) if n_pages else pa.scalar(None, t)
    return pa.record_batch({
        "min": pa.array([seg_min] + mins, type=t),
        "max": pa.array([seg_max] + maxs, type=t),
        "has_null": pa.array([bool(has_null.any())] + has_null.tolist(), pa.bool_()),
        "has_not_null": pa.array([bool(has_not_null.any())] + has_not_null.tolist(), pa.bool_()),
    })


def encode_zone_map_page(batch: pa.RecordBatch) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, batch.schema) as w:
        w.write_batch(batch)
    return build_page(PageEncoding.INDEX, batch.num_rows, sink.getvalue().to_pybytes())


_ONE_VALUE = frozenset({Op.EQ, Op.LT, Op.LE, Op.GT, Op.GE})


def _within_bounds(op: Op, lo: Any, hi: Any, v: Any) -> bool:
    """Whether a zone of values from `lo` to `hi` may hold one satisfying `op v` (one of _ONE_VALUE)."""
    if op == Op.EQ:
        return bool(lo <= v <= hi)
    if op == Op.LT:
        return bool(lo < v)
    if op == Op.LE:
        return bool(lo <= v)
    if op == Op.GT:
        return bool(hi > v)
    return bool(hi >= v)  # GE


_COMPARISONS = frozenset({Op.EQ, Op.NE, Op.LT, Op.LE, Op.GT, Op.GE, Op.IN, Op.NOT_IN})
_NUMPY_OPS = {pc.less: np.less, pc.less_equal: np.less_equal, pc.greater: np.greater,
              pc.greater_equal: np.greater_equal, pc.equal: np.equal}


def _as_numpy(arr: pa.Array) -> np.ndarray | None:
    """Zone-map bounds as numpy for the types whose numpy / Python order is Arrow's (integers, floats,
    strings: code point order = UTF-8 byte order), nulls replaced by a filler; None for other types.
    Pruning a segment then costs a few numpy comparisons instead of several pyarrow kernel calls."""
    t = arr.type
    if pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_date32(t) or pa.types.is_timestamp(t):
        return arr.fill_null(0).to_numpy(zero_copy_only=False)
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return np.array(arr.fill_null("").to_pylist(), dtype=object)
    return None


class ZoneMapIndex:
    """A column's zone maps as loaded from its index page; row 0 = segment, rows 1.. = pages."""

    def __init__(self, body: bytes | memoryview, arrow_type: pa.DataType, num_pages: int) -> None:
        try:
            batch = pa.ipc.open_stream(pa.py_buffer(body)).read_all().combine_chunks()
        except pa.ArrowException as e:
            raise CorruptDataError(f"malformed zone map: {e}") from e
        if batch.num_rows != num_pages + 1 or batch.schema.field("min").type != arrow_type:
            raise CorruptDataError("zone map does not match the column")
        self.type = arrow_type
        self.mins = batch.column("min").chunk(0) if batch.num_rows else pa.array([], arrow_type)
        self.maxs = batch.column("max").chunk(0) if batch.num_rows else pa.array([], arrow_type)
        self.has_null = batch.column("has_null").to_numpy().astype(bool)
        self.has_not_null = batch.column("has_not_null").to_numpy().astype(bool)
        self._np_mins = _as_numpy(self.mins)
        self._np_maxs = _as_numpy(self.maxs)
        # the segment's row as Python values: the per-query segment check is then a couple of Python
        # comparisons (same order as the numpy path: ints, floats and str compare alike in both)
        self._segment_bounds = (None if self._np_mins is None or not len(self._np_mins)
                                else (self._np_mins[:1].tolist()[0], self._np_maxs[:1].tolist()[0]))
        self._segment_has_null = bool(self.has_null[0]) if len(self.has_null) else False
        # the tightest page bounds (largest page min, smallest page max) when every page has a value: a
        # comparison every page passes (the common case for unsorted columns) is then known without numpy
        self._page_bounds = None
        if (self._np_mins is not None and len(self.has_not_null) > 1 and bool(self.has_not_null[1:].all())):
            self._page_bounds = (max(self._np_mins[1:].tolist()), min(self._np_maxs[1:].tolist()))
        self._segment_has_not_null = bool(self.has_not_null[0]) if len(self.has_not_null) else False

    @property
    def segment(self) -> ZoneMap:
        return ZoneMap(self.mins[0].as_py(), self.maxs[0].as_py(), bool(self.has_null[0]),
                       bool(self.has_not_null[0]))

    def may_match(self, pred: ColumnPredicate) -> np.ndarray:
        """Per row (segment, then pages): False when no row there can satisfy `pred`."""
        op = pred.op
        if op == Op.IS_NULL:
            return self.has_null.copy()
        if op == Op.IS_NOT_NULL:
            return self.has_not_null.copy()
        values = pred.values
        if op in (Op.IN, Op.NOT_IN) and not values:
            return np.zeros(len(self.has_null), bool) if op == Op.IN else self.has_not_null.copy()
        if op == Op.IN and len(values) > MAX_IN_VALUES:
            vs = value_set(values, self.type)
            if not vs.exact:
                return np.ones(len(self.has_null), bool)
            return self.has_not_null & self._ge_min(vs.hi) & self._le_max(vs.lo)
        # the numpy bounds compare with Python values; the others with Arrow scalars
        probes = probe_values(values, self.type) if self._np_mins is not None else probe_scalars(values, self.type)
        if not probes or any(s is None for s in probes):
            return np.ones(len(self.has_null), bool)
        mask = self._compare(op, list(probes))
        return self.has_not_null & mask if mask is not None else np.ones(len(self.has_null), bool)

    def pages_all_match(self, pred: ColumnPredicate) -> bool:
        """True only when may_match(pred) would keep every page (False = ask may_match): decided from
        the tightest page bounds in plain Python for a comparison with one value."""
        bounds = self._page_bounds
        op = pred.op
        if bounds is None or op not in _ONE_VALUE or len(pred.values) != 1:
            return False
        probed = probe_values(pred.values, self.type)
        if probed is None:
            return False
        largest_min, smallest_max = bounds  # every page passes when the tightest zone does
        return _within_bounds(op, largest_min, smallest_max, probed[0])

    def page_may_match(self, pred: ColumnPredicate, page: int) -> bool | None:
        """may_match(pred)[page + 1] in plain Python for a comparison with one value on numpy bounds (None: ask
        may_match): a point query's key range holds a page or two, and comparing all the segment's pages cost
        more than the rest of its narrowing."""
        if self._np_mins is None or pred.op not in _ONE_VALUE or len(pred.values) != 1:
            return None
        vs = probe_values(pred.values, self.type)
        if vs is None:
            return None
        row = page + 1
        if not self.has_not_null[row]:
            return False
        # as Python values, as the segment's bounds are (tolist: numbers, dates and str alike)
        return _within_bounds(pred.op, self._np_mins[row:row + 1].tolist()[0], self._np_maxs[row:row + 1].tolist()[0],
                              vs[0])

    def segment_may_match(self, pred: ColumnPredicate) -> bool:
        """may_match(pred)[0] (the whole segment) without building per-page arrays: run per segment per
        query, it is most of the cost of a scan that zone maps or a key range answer."""
        bounds = self._segment_bounds
        if bounds is None:
            return bool(self.may_match(pred)[0])
        op = pred.op
        if op == Op.IS_NULL:
            return self._segment_has_null
        if op == Op.IS_NOT_NULL:
            return self._segment_has_not_null
        values = pred.values
        if op in (Op.IN, Op.NOT_IN) and not values:
            return False if op == Op.IN else self._segment_has_not_null
        if op == Op.IN and len(values) > MAX_IN_VALUES:
            vs = value_set(values, self.type)
            return not vs.exact or (self._segment_has_not_null and bounds[0] <= vs.hi.as_py()
                                    and bounds[1] >= vs.lo.as_py())
        vs = probe_values(values, self.type)
        if not vs:
            return True
        if not self._segment_has_not_null:
            return op not in _COMPARISONS  # an all-NULL segment: only an unknown operator keeps it
        lo, hi = bounds
        if op in _ONE_VALUE:
            return _within_bounds(op, lo, hi, vs[0])
        if op == Op.IN:
            return any(lo <= v <= hi for v in vs)
        if op in (Op.NE, Op.NOT_IN):
            return not any(lo == v and hi == v for v in vs)
        return True

    def _cmp(self, fn, arr: pa.Array, s: Any) -> np.ndarray:  # s: a pa.Scalar, or a Python value (numpy bounds)
        fast = self._np_mins if arr is self.mins else self._np_maxs if arr is self.maxs else None
        if fast is not None:
            # a zone without a non-null value holds a filler here; callers AND with has_not_null
            value = s.as_py() if isinstance(s, pa.Scalar) else s
            if fast.dtype.kind == "M":  # dates and datetimes as numpy datetime64 of the bounds' unit
                value = np.datetime64(value).astype(fast.dtype)
            return np.asarray(_NUMPY_OPS[fn](fast, value), dtype=bool)
        return pc.fill_null(fn(arr, s), False).to_numpy(zero_copy_only=False)

    def _ge_min(self, s: Any) -> np.ndarray:  # min <= s
        return self._cmp(pc.less_equal, self.mins, s)

    def _le_max(self, s: Any) -> np.ndarray:  # max >= s
        return self._cmp(pc.greater_equal, self.maxs, s)

    def _compare(self, op: Op, scalars: list[Any]) -> np.ndarray | None:
        s = scalars[0]
        if op == Op.EQ:
            return self._ge_min(s) & self._le_max(s)
        if op == Op.LT:
            return self._cmp(pc.less, self.mins, s)
        if op == Op.LE:
            return self._ge_min(s)
        if op == Op.GT:
            return self._cmp(pc.greater, self.maxs, s)
        if op == Op.GE:
            return self._le_max(s)
        if op == Op.IN:
            keep = np.zeros(len(self.has_null), bool)
            for v in scalars:
                keep |= self._ge_min(v) & self._le_max(v)
            return keep
        if op in (Op.NE, Op.NOT_IN):
            # only a zone whose every value equals an excluded value can be dropped
            drop = np.zeros(len(self.has_null), bool)
            for v in scalars:
                drop |= self._cmp(pc.equal, self.mins, v) & self._cmp(pc.equal, self.maxs, v)
            return ~drop
        return None
