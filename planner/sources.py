"""In-memory table sources (information_schema and other virtual tables the server builds)."""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa
import pyarrow.compute as pc

from storage.predicate import ColumnPredicate, Op

_COMPARE = {
    Op.EQ: pc.equal, Op.NE: pc.not_equal, Op.LT: pc.less, Op.LE: pc.less_equal,
    Op.GT: pc.greater, Op.GE: pc.greater_equal,
}


def predicate_mask(table: pa.Table, p: ColumnPredicate) -> pa.Array:
    """Rows of `table` satisfying one column predicate (NULL counts as not satisfying)."""
    col = table.column(p.column)
    if p.op is Op.IS_NULL:
        return pc.is_null(col)
    if p.op is Op.IS_NOT_NULL:
        return pc.is_valid(col)
    if p.op in (Op.IN, Op.NOT_IN):
        values = pa.array(list(p.values), type=col.type)
        found = pc.is_in(col, value_set=values)
        out = found if p.op is Op.IN else pc.invert(found)
        return pc.and_(out, pc.is_valid(col))
    return pc.fill_null(_COMPARE[p.op](col, pa.scalar(p.value, col.type)), False)


def apply_predicates(table: pa.Table, predicates: Sequence[ColumnPredicate]) -> pa.Table:
    if not predicates:
        return table
    mask = None
    for p in predicates:
        m = predicate_mask(table, p)
        mask = m if mask is None else pc.and_(mask, m)
    return table.filter(mask)


class ArrowTableSource:
    """A TableSource over a pa.Table held in memory; predicates are applied with pyarrow."""

    def __init__(self, name: str, table: pa.Table) -> None:
        self.name = name
        self.table = table
        self.schema = table.schema
        self.scans: list[tuple[tuple[str, ...], tuple[ColumnPredicate, ...]]] = []  # what was asked, for tests

    def scan(self, columns: Sequence[str], predicates: Sequence[ColumnPredicate]) -> pa.Table:
        self.scans.append((tuple(columns), tuple(predicates)))
        filtered = apply_predicates(self.table, predicates)
        return filtered.select(list(columns))
