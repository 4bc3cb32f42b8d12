"""Row-preserving operators: scan, values, filter, project, limit, union all."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from planner.context import QueryContext, TableSource
from planner.expressions import Evaluator, to_bool
from planner.functions.casts import convert
from planner.values import result_supertype
from storage.predicate import ColumnPredicate


class PhysicalOperator(ABC):
    @abstractmethod
    def execute(self) -> pa.Table:
        ...


@dataclass
class ArrowTableScan(PhysicalOperator):
    """TableSource.scan with projected columns and pushed predicates, renamed to plan ids."""

    source: TableSource
    columns: tuple[tuple[str, str], ...]
    predicates: tuple[ColumnPredicate, ...]
    exact: bool = True  # False: an OLAP scan only narrows by its predicates, DuckDB filters (planner/duck)

    def execute(self) -> pa.Table:
        names = [c for c, _ in self.columns]
        t = self.source.scan(names, self.predicates) if self.exact else \
            self.source.scan(names, self.predicates, exact=False)  # type: ignore[call-arg]
        t = t.select(names) if t.column_names != names else t
        # chunks (one per segment) are kept: DuckDB scans them in parallel, the evaluator combines a column
        # only when it reads it (a whole-table copy here cost ~20 ms per million rows)
        return t.rename_columns([i for _, i in self.columns])


@dataclass
class ArrowValues(PhysicalOperator):
    table: pa.Table

    def execute(self) -> pa.Table:
        return self.table


@dataclass
class ArrowFilter(PhysicalOperator):
    child: PhysicalOperator
    condition: exp.Expression
    ctx: QueryContext

    def execute(self) -> pa.Table:
        t = self.child.execute()
        mask = to_bool(Evaluator(t, self.ctx).eval(self.condition))
        if isinstance(mask, pa.Scalar):
            return t if mask.as_py() else t.slice(0, 0)
        return t.filter(pc.fill_null(mask, False))


@dataclass
class ArrowProject(PhysicalOperator):
    child: PhysicalOperator
    exprs: tuple[tuple[str, exp.Expression], ...]
    ctx: QueryContext
    plain_columns: tuple[str, ...] | None = None  # the input's columns when every expression is one

    def execute(self) -> pa.Table:
        t = self.child.execute()
        if self.plain_columns is not None:
            return t.select(self.plain_columns).rename_columns([i for i, _ in self.exprs])
        ev = Evaluator(t, self.ctx)
        # a plain column passes through as it is, chunks and all (combining them is the evaluator's need)
        arrays = [t.column(e.name) if type(e) is exp.Column else ev.eval_array(e) for _, e in self.exprs]
        return pa.Table.from_arrays(arrays, names=[i for i, _ in self.exprs])


@dataclass
class ArrowLimit(PhysicalOperator):
    child: PhysicalOperator
    limit: int | None
    offset: int

    def execute(self) -> pa.Table:
        t = self.child.execute()
        return t.slice(self.offset, self.limit) if self.limit is not None else t.slice(self.offset)


@dataclass
class ArrowUnionAll(PhysicalOperator):
    """Concatenate inputs positionally, each column converted to the inputs' common type."""

    children: tuple[PhysicalOperator, ...]
    output_ids: tuple[str, ...]

    def execute(self) -> pa.Table:
        tables = [c.execute() for c in self.children]
        types = [t.schema.field(i).type for i in range(len(self.output_ids)) for t in tables[:1]]
        for t in tables[1:]:
            types = [result_supertype(a, t.schema.field(i).type) for i, a in enumerate(types)]
        out = []
        for t in tables:
            cols = [convert(t.column(i).combine_chunks(), ty) for i, ty in enumerate(types)]
            out.append(pa.Table.from_arrays(cols, names=list(self.output_ids)))
        return pa.concat_tables(out).combine_chunks()
