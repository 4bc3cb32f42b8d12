"""ArrowSort: pc.sort_indices over the key columns, with an is-null key in front of each column so
every key gets its own NULL placement (MySQL: NULLs first ascending, last descending)."""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from planner.logical import SortKey
from planner.physical.operators import PhysicalOperator


@dataclass
class ArrowSort(PhysicalOperator):
    child: PhysicalOperator
    keys: tuple[SortKey, ...]

    def execute(self) -> pa.Table:
        t = self.child.execute()
        if t.num_rows <= 1:
            return t
        cols: dict[str, pa.Array] = {}
        sort_keys: list[tuple[str, str]] = []
        for i, k in enumerate(self.keys):
            col = t.column(k.column)
            nulls_first = k.nulls_first if k.nulls_first is not None else k.ascending
            if col.null_count:
                cols[f"n{i}"] = pc.is_null(col)
                sort_keys.append((f"n{i}", "descending" if nulls_first else "ascending"))
            if not pa.types.is_null(col.type):
                cols[f"v{i}"] = col
                sort_keys.append((f"v{i}", "ascending" if k.ascending else "descending"))
        if not sort_keys:
            return t
        idx = pc.sort_indices(pa.table(cols), sort_keys=sort_keys)
        return t.take(idx)
