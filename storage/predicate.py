"""Column predicates in storage's own small form (the planner translates SQL into these).

Values are Python scalars comparable with the column's Arrow values (int, float, Decimal, str,
datetime.date, datetime.datetime, bool). Index pruning (short key, zone map, bloom, bitmap) reads them.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any


class Op(StrEnum):
    EQ = "="
    NE = "!="
    LT = "<"
    LE = "<="
    GT = ">"
    GE = ">="
    IN = "in"
    NOT_IN = "not in"
    IS_NULL = "is null"
    IS_NOT_NULL = "is not null"


@dataclass(frozen=True)
class ColumnPredicate:
    column: str
    op: Op
    values: tuple[Any, ...] = ()  # one value for comparisons, many for IN / NOT IN, none for IS [NOT] NULL

    @property
    def value(self) -> Any:
        return self.values[0]
