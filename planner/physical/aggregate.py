"""AceroHashAggregate: GROUP BY through pyarrow's Table.group_by (Acero's hash aggregation); without
keys it is Acero's scalar aggregation, which yields one row even for empty input (count 0, sum NULL)."""

from __future__ import annotations

import decimal
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from planner.functions.bitmaps import BITMAP, sorted_sets
from planner.functions.casts import convert, to_string
from planner.functions.sequences import event_masks, parse_pattern, sequence_results, timestamps
from planner.logical import AggregateCall
from planner.physical.operators import PhysicalOperator
from planner.values import avg_decimal_scale, is_string
from sql.errors import analysis_error
from sql.types import doris_type_name

_ONLY_VALID = pc.CountOptions(mode="only_valid")


@dataclass
class AceroHashAggregate(PhysicalOperator):
    child: PhysicalOperator
    keys: tuple[str, ...]
    calls: tuple[AggregateCall, ...]

    def execute(self) -> pa.Table:
        t = self.child.execute()
        specs: dict[str, tuple] = {}  # output column name of group_by -> aggregation spec
        extra: dict[str, pa.Array] = {}
        finish = []
        for call in self.calls:
            finish.append(self._plan_call(call, t, specs, extra))
        for name, arr in extra.items():
            t = t.append_column(name, arr)
        keys = list(self.keys)
        if t.num_columns == 0:
            t = pa.table({"__row": pa.nulls(t.num_rows, pa.int8())})
        cols: dict[str, pa.Array] = {}
        if not keys:  # Acero's scalar aggregation has no list / distinct: the whole input is one list
            for out_name, spec in list(specs.items()):
                if spec[1] in ("list", "distinct"):
                    column = t.column(spec[0]).combine_chunks()
                    if spec[1] == "distinct":
                        column = pc.drop_null(pc.unique(column))
                    cols[out_name] = pa.ListArray.from_arrays(pa.array([0, len(column)], pa.int32()), column)
                    del specs[out_name]
        agg_specs = [spec for spec in specs.values()]
        result = t.group_by(keys, use_threads=False).aggregate(agg_specs) if agg_specs or keys else None
        if result is None:  # SELECT DISTINCT over nothing
            result = pa.table({})
        # pyarrow names aggregate outputs "<col>_<func>" (count_all for count(*)), keys keep their names
        for out_name, spec in specs.items():
            got = f"{spec[0]}_{spec[1]}" if isinstance(spec[0], str) else spec[1]
            cols[out_name] = result.column(got).combine_chunks()
        arrays = [result.column(k).combine_chunks() for k in keys]
        arrays += [fn(cols) for fn in finish]
        return pa.Table.from_arrays(arrays, names=[*keys, *(c.out for c in self.calls)])

    @staticmethod
    def _plan_call(call: AggregateCall, t: pa.Table, specs: dict, extra: dict):  # noqa: ANN205
        def spec(col: str | list, func: str, options=None) -> str:  # noqa: ANN001
            name = f"{col if isinstance(col, str) else '*'}|{func}"
            if name not in specs:
                specs[name] = (col, func, options) if options is not None else (col, func)
            return name

        f = call.func
        if f == "count_star":
            n = spec([], "count_all")
            return lambda cols: cols[n]
        if f in ("count", "count_distinct_approx") and (call.distinct or f == "count_distinct_approx"):
            col = call.args[0]
            if len(call.args) > 1:
                # count(DISTINCT a, b): one integer per distinct tuple, NULL when any part is NULL
                col = f"{call.out}|key"
                extra[col] = tuple_codes([t.column(a).combine_chunks() for a in call.args])
            n = spec(col, "count_distinct", _ONLY_VALID)
            return lambda cols: cols[n]
        if f == "count":
            n = spec(call.args[0], "count", _ONLY_VALID)
            return lambda cols: cols[n]
        arg = call.args[0]
        typ = t.schema.field(arg).type
        if call.distinct and f != "group_concat":  # DuckDB runs sum / avg (DISTINCT); here it would be a plain sum, silently wrong
            raise analysis_error(f"{f}(DISTINCT) of {typ} is not supported")
        if f in ("sum", "avg", "stddev", "stddev_samp", "variance", "variance_samp") and (
            is_string(typ) or pa.types.is_boolean(typ) or pa.types.is_null(typ)
        ):
            # MySQL sums text as DOUBLE
            target = pa.int64() if pa.types.is_boolean(typ) else pa.float64()
            col = f"{arg}|num"
            extra[col] = convert(t.column(arg).combine_chunks(), target)
            arg, typ = col, target
        if f == "sum":
            n = spec(arg, "sum")
            return lambda cols: cols[n]
        if f == "avg":
            if pa.types.is_decimal(typ):
                s = spec(arg, "sum")
                c = spec(arg, "count", _ONLY_VALID)
                return lambda cols: decimal_avg(cols[s], cols[c], typ.scale)
            n = spec(arg, "mean")
            return lambda cols: pc.cast(cols[n], pa.float64())
        if f in ("min", "max"):
            if pa.types.is_null(typ):
                return lambda cols: pa.nulls(len(next(iter(cols.values()))) if cols else 1, pa.null())
            n = spec(arg, f)
            return lambda cols: cols[n]
        if f in ("stddev", "stddev_samp", "variance", "variance_samp"):
            func = "stddev" if f.startswith("stddev") else "variance"
            n = spec(arg, func, pc.VarianceOptions(ddof=1 if f.endswith("samp") else 0))
            return lambda cols: cols[n]
        if f in ("collect_list", "collect_set", "array_agg"):
            # the group's values as an ARRAY: collect_list / collect_set skip NULLs, array_agg keeps them; an
            # ORDER BY inside sorts them (collect_set keeps each value's first place)
            rows = "|row"
            if rows not in extra:
                extra[rows] = pa.array(np.arange(t.num_rows, dtype=np.int64))
            n = spec(rows, "list")
            column = t.column(arg).combine_chunks()
            keys = [(t.column(k).combine_chunks(), asc, first) for k, asc, first in call.order]
            distinct, keep_nulls = f == "collect_set", f == "array_agg"
            # max_size: the binder's constant (no argument: no limit)
            limit = _constant(t.column(call.args[1]).combine_chunks()) if len(call.args) > 1 else None
            return lambda cols: ordered_lists(cols[n], column, keys, distinct, keep_nulls,
                                              None if limit is None else int(limit or 0))
        if f in ("bitmap_union", "hll_union"):  # the group's distinct members, as one BITMAP / HLL set
            n = spec(arg, "distinct", _ONLY_VALID)
            return lambda cols: sorted_sets(pc.cast(cols[n], BITMAP))
        if f in ("sequence_match", "sequence_count"):
            _check_sequence_arguments(f, [t.schema.field(a).type for a in call.args])
        if f in GROUPED_ROWS:
            rows = "|row"
            if rows not in extra:
                extra[rows] = pa.array(np.arange(t.num_rows, dtype=np.int64))
            n = spec(rows, "list")
            columns = [t.column(a).combine_chunks() for a in call.args]
            return lambda cols: GROUPED_ROWS[f](cols[n], columns)
        if f == "group_concat" and call.separator is None:  # a NULL separator makes every group's result NULL
            n = spec([], "count_all")
            return lambda cols: pa.nulls(len(cols[n]), pa.string())
        if f == "group_concat" and call.order:
            rows = "|row"
            if rows not in extra:
                extra[rows] = pa.array(np.arange(t.num_rows, dtype=np.int64))
            n = spec(rows, "list")
            text = to_string(t.column(arg).combine_chunks())
            keys = [(t.column(k).combine_chunks(), asc, first) for k, asc, first in call.order]
            separator, distinct = call.separator, call.distinct
            return lambda cols: ordered_concat(cols[n], text, keys, separator, distinct)
        if f == "group_concat":
            col = arg
            if not is_string(typ):
                col = f"{arg}|text"
                extra[col] = to_string(t.column(arg).combine_chunks())
            n = spec(col, "distinct" if call.distinct else "list",
                     pc.CountOptions(mode="only_valid") if call.distinct else None)
            sep = call.separator

            def finish_concat(cols: dict) -> pa.Array:
                lists = cols[n]
                # drop NULL elements; a group with no values gives NULL, as MySQL
                flat = pc.list_flatten(lists)
                joined = pc.binary_join(lists, sep) if flat.null_count == 0 else _join_skip_nulls(lists, sep)
                empty = pc.equal(pc.list_value_length(lists), 0)
                return pc.if_else(empty, pa.scalar(None, pa.string()), joined)

            return finish_concat
        raise ValueError(f"unknown aggregate {f}")


def tuple_codes(columns: list[pa.Array]) -> pa.Array:
    """One int64 per row, equal exactly when the rows' values are equal in every column; NULL when any value is
    NULL (count(DISTINCT a, b) skips those rows, as MySQL)."""
    n = len(columns[0])
    code = np.zeros(n, np.int64)
    valid = np.ones(n, bool)
    for column in columns:
        encoded = pc.dictionary_encode(column) if not pa.types.is_null(column.type) else None
        if encoded is None:
            return pa.nulls(n, pa.int64())
        valid &= pc.is_valid(encoded).to_numpy(zero_copy_only=False)
        part = pc.fill_null(encoded.indices, 0).to_numpy(zero_copy_only=False).astype(np.int64)
        # compact the pair (code so far, this column's code) back to 0..k-1: never overflows
        _, code = np.unique(code * (len(encoded.dictionary) + 1) + part, return_inverse=True)
        code = code.astype(np.int64)
    return pa.array(code, pa.int64(), mask=~valid)


def _join_skip_nulls(lists: pa.Array, sep: str) -> pa.Array:
    offsets = lists.offsets
    flat = lists.values
    parent = pc.list_parent_indices(lists)
    keep = pc.is_valid(flat)
    kept_parent = pc.filter(parent, keep)
    import numpy as np

    counts = np.bincount(kept_parent.to_numpy(zero_copy_only=False), minlength=len(lists))
    new_offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
    del offsets
    rebuilt = pa.ListArray.from_arrays(pa.array(new_offsets), pc.filter(flat, keep))
    return pc.binary_join(rebuilt, sep)


def _sort_rank(column: pa.Array, ascending: bool, nulls_first: bool) -> np.ndarray:
    """Each value's dense rank in the sort order of one ORDER BY key (NULLs placed as asked)."""
    if pa.types.is_null(column.type):
        return np.zeros(len(column), np.int64)
    direction = "ascending" if ascending else "descending"
    placement = "at_start" if nulls_first else "at_end"
    ranks = pc.rank(column, sort_keys=[("", direction, placement)], tiebreaker="dense")
    return ranks.to_numpy(zero_copy_only=False).astype(np.int64)


def ordered_lists(lists: pa.Array, column: pa.Array, keys: list[tuple[pa.Array, bool, bool]], distinct: bool,
                  keep_nulls: bool = False, limit: int | None = None) -> pa.ListArray:
    """Each group's values of `column` from its row numbers, sorted by (keys, input order) with numpy: NULL values
    dropped unless `keep_nulls`, DISTINCT keeping a value's first place in that order, the first `limit` kept."""
    parent, rows, groups = _group_rows(lists)
    sort_columns = [rows]  # np.lexsort: the last key is the primary one
    for key, ascending, nulls_first in reversed(keys):
        sort_columns.append(_sort_rank(key, ascending, nulls_first)[rows])
    sort_columns.append(parent)
    order = np.lexsort(sort_columns) if len(rows) else np.zeros(0, np.int64)
    parent, rows = parent[order], rows[order]
    values = column.take(pa.array(rows, pa.int64()))
    keep = np.arange(len(values)) if keep_nulls else np.flatnonzero(pc.is_valid(values).to_numpy(zero_copy_only=False))
    if distinct and len(keep):
        encoded = pc.dictionary_encode(values, null_encoding="encode")
        codes = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
        pair = parent[keep].astype(np.int64) * (len(encoded.dictionary) + 1) + codes[keep]
        _, first = np.unique(pair, return_index=True)
        keep = keep[np.sort(first)]
    if limit is not None and len(keep):  # each group's first `limit` values (its rows are adjacent, in order)
        grouped = parent[keep]
        keep = keep[np.arange(len(keep)) - np.searchsorted(grouped, grouped, side="left") < limit]
    parent = parent[keep]
    counts = np.bincount(parent, minlength=groups) if len(parent) else np.zeros(groups, np.int64)
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
    return pa.ListArray.from_arrays(pa.array(offsets), values.take(pa.array(keep, pa.int64())))


def ordered_concat(lists: pa.Array, text: pa.Array, keys: list[tuple[pa.Array, bool, bool]], sep: str,
                   distinct: bool) -> pa.Array:
    """group_concat([DISTINCT] x, sep ORDER BY keys): the ordered lists joined; a group with no value gives NULL."""
    members = ordered_lists(lists, text, keys, distinct)
    joined = pc.binary_join(members, sep)
    return pc.if_else(pc.greater(pc.list_value_length(members), 0), joined, pa.scalar(None, pa.string()))


def decimal_avg(sums: pa.Array, counts: pa.Array, scale: int) -> pa.Array:
    """avg(DECIMAL(p, s)) -> DECIMAL(38, max(s, 4)), rounded half up (Doris's avg typing)."""
    out_scale = avg_decimal_scale(scale)
    target = pa.decimal128(38, out_scale)
    counts = pc.if_else(pc.equal(counts, 0), pa.scalar(None, pa.int64()), counts)
    try:
        num = pc.cast(sums, pa.decimal128(27, scale))
        q = pc.divide(num, pc.cast(counts, pa.decimal128(10, 0)))
        q = pc.round(q, out_scale, round_mode="half_towards_infinity")
        return pc.cast(q, target, safe=False)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        # very large sums: fall back to Python decimals per group (one value per group, not per row)
        ctx = decimal.Context(prec=60)
        q_exp = decimal.Decimal(1).scaleb(-out_scale)
        vals = [
            None if s is None or c is None else (ctx.divide(s, decimal.Decimal(c))).quantize(q_exp, rounding=decimal.ROUND_HALF_UP)
            for s, c in zip(sums.to_pylist(), counts.to_pylist(), strict=True)
        ]
        return pa.array(vals, target)


# -- aggregates computed from each group's row numbers (hash_list of a row index) with numpy -----------


def _group_rows(lists: pa.Array) -> tuple[np.ndarray, np.ndarray, int]:
    """(group of each listed row, the row numbers) for the groups' lists of row numbers."""
    parent = pc.list_parent_indices(lists).to_numpy(zero_copy_only=False).astype(np.int64)
    rows = pc.list_flatten(lists).to_numpy(zero_copy_only=False).astype(np.int64)
    return parent, rows, len(lists)


def _numbers(column: pa.Array, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    picked = column.take(pa.array(rows, pa.int64()))
    valid = pc.is_valid(picked).to_numpy(zero_copy_only=False)
    as_float = convert(picked, pa.float64()) if not pa.types.is_floating(picked.type) else picked
    return pc.fill_null(as_float, 0.0).to_numpy(zero_copy_only=False), valid


def _moments(lists: pa.Array, columns: list[pa.Array]) -> tuple[np.ndarray, ...]:
    parent, rows, groups = _group_rows(lists)
    x, vx = _numbers(columns[0], rows)
    y, vy = _numbers(columns[1], rows)
    keep = vx & vy  # pairs with a NULL on either side do not count
    parent, x, y = parent[keep], x[keep], y[keep]

    def total(w: np.ndarray) -> np.ndarray:
        return np.bincount(parent, weights=w, minlength=groups)

    n = np.bincount(parent, minlength=groups).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        mx, my = total(x) / n, total(y) / n
        # centred sums: stable for large values
        cxy = total((x - mx[parent]) * (y - my[parent]))
        cxx = total((x - mx[parent]) ** 2)
        cyy = total((y - my[parent]) ** 2)
    return n, cxy, cxx, cyy


def _double(values: np.ndarray, valid: np.ndarray) -> pa.Array:
    return pa.array(np.where(valid, values, 0.0), pa.float64(), mask=~valid)


def _covar(sample: bool):  # noqa: ANN202
    def finish(lists: pa.Array, columns: list[pa.Array]) -> pa.Array:
        n, cxy, _, _ = _moments(lists, columns)
        d = n - 1 if sample else n
        with np.errstate(divide="ignore", invalid="ignore"):
            return _double(cxy / d, d > 0)

    return finish


def _corr(lists: pa.Array, columns: list[pa.Array]) -> pa.Array:
    n, cxy, cxx, cyy = _moments(lists, columns)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = cxy / np.sqrt(cxx * cyy)
    return _double(r, (n > 0) & (cxx > 0) & (cyy > 0))


def _bits(op: np.ufunc):  # noqa: ANN202
    def finish(lists: pa.Array, columns: list[pa.Array]) -> pa.Array:
        parent, rows, groups = _group_rows(lists)
        picked = columns[0].take(pa.array(rows, pa.int64()))
        out_type = picked.type if pa.types.is_integer(picked.type) else pa.int64()
        valid = pc.is_valid(picked).to_numpy(zero_copy_only=False)
        values = pc.fill_null(pc.cast(picked, pa.int64()) if picked.type != pa.int64() else picked, 0)
        values = values.to_numpy(zero_copy_only=False)[valid]
        parent = parent[valid]
        out = np.zeros(groups, np.int64)
        has = np.zeros(groups, bool)
        if len(values):
            starts = np.flatnonzero(np.r_[True, parent[1:] != parent[:-1]])
            out[parent[starts]] = op.reduceat(values, starts)
            has[parent[starts]] = True
        return pc.cast(pa.array(out, pa.int64(), mask=~has), out_type, safe=False)

    return finish


def _by(largest: bool):  # noqa: ANN202
    def finish(lists: pa.Array, columns: list[pa.Array]) -> pa.Array:
        parent, rows, groups = _group_rows(lists)
        key = columns[1].take(pa.array(rows, pa.int64()))
        valid = pc.is_valid(key).to_numpy(zero_copy_only=False)
        order_key = pc.rank(key, sort_keys="ascending", tiebreaker="first").to_numpy(zero_copy_only=False)
        parent, rows, order_key = parent[valid], rows[valid], order_key[valid]
        if not largest:
            order_key = -order_key
        order = np.lexsort((order_key, parent))
        parent, rows = parent[order], rows[order]
        last = np.flatnonzero(np.r_[parent[1:] != parent[:-1], True]) if len(parent) else np.zeros(0, np.int64)
        pick = np.full(groups, -1, np.int64)
        pick[parent[last]] = rows[last]
        return columns[0].take(pa.array(pick, pa.int64(), mask=pick < 0))

    return finish


def _percentile(lists: pa.Array, columns: list[pa.Array]) -> pa.Array:
    """Exact percentile with linear interpolation (Doris's percentile; percentile_approx's estimate of it)."""
    parent, rows, groups = _group_rows(lists)
    x, valid = _numbers(columns[0], rows)
    fraction = pc.drop_null(columns[1])
    p = float(convert(fraction[0], pa.float64()).as_py()) if len(fraction) else 0.5
    if not 0 <= p <= 1:
        raise analysis_error(f"percentile level must be in [0, 1], got {p}")
    parent, x = parent[valid], x[valid]
    order = np.lexsort((x, parent))
    parent, x = parent[order], x[order]
    n = np.bincount(parent, minlength=groups)
    first = np.concatenate([[0], np.cumsum(n)[:-1]])
    pos = p * np.maximum(n - 1, 0)
    lo = np.floor(pos).astype(np.int64)
    hi = np.minimum(lo + 1, np.maximum(n - 1, 0))
    has = n > 0
    at = np.where(has, first, 0)
    xs = x if len(x) else np.zeros(1)
    a = xs[np.minimum(at + lo, len(xs) - 1)]
    b = xs[np.minimum(at + hi, len(xs) - 1)]
    return _double(a + (b - a) * (pos - lo), has)


def _constant(column: pa.Array) -> object:
    """The value of a constant argument column (the binder's literal): its first non-NULL value, or None."""
    present = pc.drop_null(column)
    return present[0].as_py() if len(present) else None


def _check_sequence_arguments(func: str, types: list[pa.DataType]) -> None:
    """sequence_match / sequence_count's argument types, as Doris's FE checks them before any coercion."""
    if not pa.types.is_date(types[1]) and not pa.types.is_timestamp(types[1]):
        raise analysis_error(f"The timestamp params of {func} function must be DATE or DATETIME, but it is "
                             f"{doris_type_name(types[1])}")
    for i, t in enumerate(types[2:], start=3):
        if not pa.types.is_boolean(t):
            raise analysis_error(f"The 3th and subsequent params of {func} function must be boolean, but param {i} "
                                 f"is {doris_type_name(t)}")


def _sequence(counting: bool):  # noqa: ANN202
    """sequence_match / sequence_count(pattern, timestamp, cond1, ...) of each group (planner/functions/sequences.py)."""
    func = "sequence_count" if counting else "sequence_match"

    def finish(lists: pa.Array, columns: list[pa.Array]) -> pa.Array:
        parent, rows, groups = _group_rows(lists)
        text = _constant(columns[0])
        if text is None:  # no row: every group (the one of an aggregate without keys) has no state
            return pa.nulls(groups, pa.int64() if counting else pa.bool_())
        pattern = parse_pattern(text, len(columns) - 2, func)
        order_key, seconds, timed = timestamps(columns[1], rows)
        bits, known = event_masks(columns[2:], rows)
        return sequence_results(pattern, counting, parent, groups, order_key, seconds, bits, timed & known)

    return finish


def _json_keys(values: pa.Array) -> pa.Array:
    """Strings as rapidjson writes an object's keys (Doris's count_by_enum): quoted, `"` and `\\` escaped,
    control characters as \\b \\t \\n \\f \\r or \\u00XX, anything else as is; a key ends at a NUL
    (rapidjson reads it as a C string)."""
    values = pc.replace_substring_regex(values, "(?s)\\x00.*", "")
    values = pc.replace_substring(pc.replace_substring(values, "\\", "\\\\"), '"', '\\"')
    if len(values) and pc.any(pc.match_substring_regex(values, "[\\x01-\\x1f]")).as_py():
        for code in range(1, 32):
            short = {8: "\\b", 9: "\\t", 10: "\\n", 12: "\\f", 13: "\\r"}.get(code, f"\\u{code:04X}")
            values = pc.replace_substring(values, chr(code), short)
    return pc.binary_join_element_wise('"', values, '"', "")


def _count_by_enum(lists: pa.Array, columns: list[pa.Array]) -> pa.Array:
    """count_by_enum(x1, ...): per group a JSON array with one object per argument, as Doris prints it:
    {"cbe":{value:count, ...},"notnull":n,"null":n,"all":n}. The values are in the order Doris's hash map
    yields a small map in: the latest first seen first. A group of no rows is []."""
    parent, rows, groups = _group_rows(lists)
    order = np.lexsort((rows, parent))
    parent, rows = parent[order], rows[order]
    total = np.bincount(parent, minlength=groups).astype(np.int64) if len(parent) else np.zeros(groups, np.int64)
    taken = pa.array(rows, pa.int64())
    objects = []
    for column in columns:
        text = pc.cast(to_string(column.take(taken)), pa.string())
        encoded = pc.dictionary_encode(text)
        valid = pc.is_valid(text).to_numpy(zero_copy_only=False)
        codes = pc.fill_null(encoded.indices, 0).to_numpy(zero_copy_only=False).astype(np.int64)[valid]
        at, owner = np.flatnonzero(valid), parent[valid]
        notnull = np.bincount(owner, minlength=groups).astype(np.int64)
        width = len(encoded.dictionary) + 1
        pairs, first, counts = np.unique(owner * width + codes, return_index=True, return_counts=True)
        owner, codes = pairs // width, pairs % width
        latest = np.lexsort((-at[first], owner))
        owner, codes, counts = owner[latest], codes[latest], counts[latest]
        keys = _json_keys(encoded.dictionary.cast(pa.string())).take(pa.array(codes, pa.int64()))
        entries = pc.binary_join_element_wise(keys, pc.cast(pa.array(counts, pa.int64()), pa.string()), ":")
        offsets = np.concatenate([[0], np.cumsum(np.bincount(owner, minlength=groups))]).astype(np.int32)
        counted = pc.binary_join(pa.ListArray.from_arrays(pa.array(offsets), entries.cast(pa.string())), ",")
        numbers = [pc.cast(pa.array(v, pa.int64()), pa.string()) for v in (notnull, total - notnull, total)]
        objects.append(pc.binary_join_element_wise(
            '{"cbe":{', counted, '},"notnull":', numbers[0], ',"null":', numbers[1], ',"all":', numbers[2], "}", ""))
    joined = pc.binary_join_element_wise(*objects, ",")
    text = pc.binary_join_element_wise("[", joined, "]", "")
    return pc.if_else(pa.array(total > 0), text, pa.scalar("[]", pa.string()))


GROUPED_ROWS = {
    "corr": _corr, "covar": _covar(sample=False), "covar_samp": _covar(sample=True),
    "group_bit_and": _bits(np.bitwise_and), "group_bit_or": _bits(np.bitwise_or),
    "group_bit_xor": _bits(np.bitwise_xor), "max_by": _by(largest=True), "min_by": _by(largest=False),
    "percentile": _percentile, "sequence_match": _sequence(counting=False), "sequence_count": _sequence(counting=True),
    "count_by_enum": _count_by_enum,
}
