"""Joins. AceroHashJoin: Acero's hash join over the equi-keys, run on (key..., row index) tables so
the result is a pair of row-index vectors; the residual ON condition filters the pairs, and outer joins
add the unmatched rows with NULLs. CrossJoin (no keys) builds the index pairs with numpy."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from planner.context import QueryContext
from planner.expressions import Evaluator, to_bool
from planner.functions.casts import convert
from planner.physical.operators import PhysicalOperator
from planner.values import supertype

_ACERO_JOIN_TYPE = {"inner": "inner", "left": "inner", "right": "inner", "full": "inner"}


def _combined(left: pa.Table, right: pa.Table, li: pa.Array, ri: pa.Array) -> pa.Table:
    cols = [c.take(li) for c in left.columns] + [c.take(ri) for c in right.columns]
    return pa.Table.from_arrays(cols, names=left.column_names + right.column_names)


@dataclass
class AceroHashJoin(PhysicalOperator):
    left: PhysicalOperator
    right: PhysicalOperator
    kind: str  # inner / left / right / full / cross / semi / anti / right_semi / right_anti
    left_keys: tuple[exp.Expression, ...]
    right_keys: tuple[exp.Expression, ...]
    residual: exp.Expression | None
    ctx: QueryContext

    def execute(self) -> pa.Table:
        lt = self.left.execute()
        rt = self.right.execute()
        li, ri = self._matches(lt, rt)
        if self.residual is not None:
            pairs = _combined(lt, rt, li, ri)
            mask = to_bool(Evaluator(pairs, self.ctx).eval(self.residual))
            if isinstance(mask, pa.Scalar):
                keep = bool(mask.as_py())
                li, ri = (li, ri) if keep else (li.slice(0, 0), ri.slice(0, 0))
            else:
                mask = pc.fill_null(mask, False)
                li, ri = li.filter(mask), ri.filter(mask)
        if self.kind in ("semi", "anti"):  # the left rows with a match / without one, in their order
            keep = _unmatched(lt.num_rows, li) if self.kind == "anti" else pa.array(np.unique(
                li.to_numpy(zero_copy_only=False)).astype(np.int64))
            return lt.take(keep)
        if self.kind in ("right_semi", "right_anti"):
            keep = _unmatched(rt.num_rows, ri) if self.kind == "right_anti" else pa.array(np.unique(
                ri.to_numpy(zero_copy_only=False)).astype(np.int64))
            return rt.take(keep)
        parts = [_combined(lt, rt, li, ri)]
        if self.kind in ("left", "full"):
            missing = _unmatched(lt.num_rows, li)
            parts.append(_combined(lt, rt, missing, pa.nulls(len(missing), pa.int64())))
        if self.kind in ("right", "full"):
            missing = _unmatched(rt.num_rows, ri)
            parts.append(_combined(lt, rt, pa.nulls(len(missing), pa.int64()), missing))
        if len(parts) == 1:
            return parts[0]
        return pa.concat_tables(parts).combine_chunks()

    def _matches(self, lt: pa.Table, rt: pa.Table) -> tuple[pa.Array, pa.Array]:
        if not self.left_keys:
            nl, nr = lt.num_rows, rt.num_rows
            li = np.repeat(np.arange(nl, dtype=np.int64), nr)
            ri = np.tile(np.arange(nr, dtype=np.int64), nl)
            return pa.array(li), pa.array(ri)
        lev, rev = Evaluator(lt, self.ctx), Evaluator(rt, self.ctx)
        lcols, rcols = {}, {}
        for i, (lk, rk) in enumerate(zip(self.left_keys, self.right_keys, strict=True)):
            a, b = lev.eval_array(lk), rev.eval_array(rk)
            t = supertype(a.type, b.type)
            if pa.types.is_null(t):
                t = pa.int64()
            lcols[f"k{i}"] = convert(a, t)
            rcols[f"k{i}"] = convert(b, t)
        lcols["__l"] = pa.array(np.arange(lt.num_rows, dtype=np.int64))
        rcols["__r"] = pa.array(np.arange(rt.num_rows, dtype=np.int64))
        keys = [f"k{i}" for i in range(len(self.left_keys))]
        joined = pa.table(lcols).join(pa.table(rcols), keys=keys, join_type="inner", use_threads=True)
        # Acero's output order is arbitrary: sort by left row so results are stable
        joined = joined.sort_by([("__l", "ascending"), ("__r", "ascending")])
        return joined.column("__l").combine_chunks(), joined.column("__r").combine_chunks()


def _unmatched(n: int, matched: pa.Array) -> pa.Array:
    seen = np.zeros(n, dtype=bool)
    idx = matched.to_numpy(zero_copy_only=False)
    if len(idx):
        seen[idx.astype(np.int64)] = True
    return pa.array(np.nonzero(~seen)[0].astype(np.int64))
