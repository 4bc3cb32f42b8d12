"""AceroHashAggregate: GROUP BY through pyarrow's Table.group_by (Acero's hash aggregation); without
keys it is Acero's scalar aggregation, which yields one row even for empty input (count 0, sum NULL)."""

from __future__ import annotations

import decimal
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from planner.functions.casts import convert, to_string
from planner.logical import AggregateCall
from planner.physical.operators import PhysicalOperator
from planner.values import avg_decimal_scale, is_string
from sql.errors import analysis_error

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
        agg_specs = [spec for spec in specs.values()]
        result = t.group_by(keys, use_threads=False).aggregate(agg_specs) if agg_specs or keys else None
        if result is None:  # SELECT DISTINCT over nothing
            result = pa.table({})
        # pyarrow names aggregate outputs "<col>_<func>" (count_all for count(*)), keys keep their names
        cols: dict[str, pa.Array] = {}
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
                # count(DISTINCT a, b): one text key per row, NULL when any part is NULL
                col = f"{call.out}|key"
                parts = [to_string(t.column(a).combine_chunks()) for a in call.args]
                extra[col] = pc.binary_join_element_wise(*parts, "\x1f")
            n = spec(col, "count_distinct", _ONLY_VALID)
            return lambda cols: cols[n]
        if f == "count":
            n = spec(call.args[0], "count", _ONLY_VALID)
            return lambda cols: cols[n]
        arg = call.args[0]
        typ = t.schema.field(arg).type
        if call.distinct:  # DuckDB runs sum / avg (DISTINCT); here it would be a plain sum, silently wrong
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
