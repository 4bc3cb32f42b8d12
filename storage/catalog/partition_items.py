"""Doris's rules between partition items, and the text Doris prints for them.

The order of partition keys, RANGE intersection, LIST value conflicts and duplicate partition names are
checked here for CREATE TABLE and ADD PARTITION analysis (planner.bind.partitions) and again by
`Catalog.add_partitions` inside its transaction, against the committed partitions: one implementation
of each rule, and two concurrent adders cannot both win.

Bounds are the canonical literal strings the catalog stores (planner.bind.values normalises them; None
in a RANGE bound is MAXVALUE, "NULL" in a LIST value is NULL); `types` are the partition columns' Doris
type texts (`Column.type`).
"""

from __future__ import annotations

import bisect
import functools
from collections.abc import Iterable, Sequence

from storage.catalog.model import PartitionItem
from storage.errors import StorageError, doris_error

Bound = tuple[str | None, ...]

_INTEGERS = frozenset({"TINYINT", "SMALLINT", "INT", "BIGINT", "LARGEINT"})
_DATES = frozenset({"DATE", "DATETIME"})
_INTERNAL_NAMES = {"DATE": "DATEV2", "DATETIME": "DATETIMEV2"}  # the storage type names Doris prints


@functools.lru_cache(maxsize=1024)
def base_type(type_text: str) -> str:
    """'VARCHAR(20)' -> 'VARCHAR', 'datetime(3)' -> 'DATETIME'."""
    return type_text.split("(", 1)[0].strip().upper()


def internal_type_name(type_text: str) -> str:
    """The name Doris prints inside partition key texts: DATEV2, DATETIMEV2, INT, VARCHAR ..."""
    name = base_type(type_text)
    return _INTERNAL_NAMES.get(name, name)


def key_order(values: Bound, types: Sequence[str]) -> tuple:
    """Sort key of a partition key: MAXVALUE (None) after every value of its column, integers by value,
    canonical dates and strings as text; a NULL list value before every other value. Remembered: a table's
    partitions are compared with each other many times while thousands are checked."""
    return _key_order(tuple(values), types if isinstance(types, tuple) else tuple(types))


@functools.lru_cache(maxsize=1 << 16)
def _key_order(values: Bound, types: tuple[str, ...]) -> tuple:
    key = []
    for value, t in zip(values, types, strict=False):
        if value is None:
            key.append((2, 0))
        elif value == "NULL" and base_type(t) not in ("CHAR", "VARCHAR"):
            key.append((-1, 0))
        elif base_type(t) in _INTEGERS:
            key.append((0, int(value)))
        else:
            key.append((0, value))
    return tuple(key)


# -- text -----------------------------------------------------------------------------------------------


def key_text(values: Bound, types: Sequence[str]) -> str:
    """PartitionKey.toString: `types: [DATEV2]; keys: [2020-01-01]; `."""
    type_names = ", ".join(internal_type_name(t) for t in types)
    keys = ", ".join("MAXVALUE" if x is None else x for x in values)
    return f"types: [{type_names}]; keys: [{keys}]; "


def range_text(lower: Bound, upper: Bound, types: Sequence[str]) -> str:
    """Guava Range.toString of two PartitionKeys, as Doris prints ranges in messages and SHOW PARTITIONS."""
    return f"[{key_text(lower, types)}..{key_text(upper, types)})"


def list_text(values: Iterable[Bound], types: Sequence[str]) -> str:
    """A LIST partition's keys as SHOW PARTITIONS prints them: `[types: [VARCHAR]; keys: [Denver]; ]`."""
    return "[" + ", ".join(key_text(v, types) for v in values) + "]"


def item_text(item: PartitionItem, kind: str, types: Sequence[str]) -> str:
    """SHOW PARTITIONS' Range column: the range or the list of keys; empty for an unpartitioned table."""
    if kind == "RANGE":
        return range_text(*range_bounds(item, types), types)
    if kind == "LIST" and item.values is not None:
        return list_text(item.values, types)
    return ""


def key_sql(values: Bound, types: Sequence[str]) -> str:
    """PartitionKey.toSql: `("1", "Beijing")`, dates single-quoted, NULL / MAXVALUE bare."""
    out = []
    for x, t in zip(values, types, strict=False):
        if x is None:
            out.append("MAXVALUE")
        elif x == "NULL":
            out.append("NULL")
        elif base_type(t) in _DATES:
            out.append(f"'{x}'")
        else:
            out.append(f'"{x}"')
    return "(" + ", ".join(out) + ")"


def values_in_sql(values: Sequence[Bound]) -> str:
    """PartitionKeyDesc.toSql of `VALUES IN (...)`: `('1','2')`, multi-column `(('1', 'a'),('2', 'b'))`."""
    parts = []
    for value in values:
        quoted = ", ".join("MAXVALUE" if x is None else f"'{x}'" for x in value)
        parts.append(quoted if len(value) == 1 else f"({quoted})")
    return "(" + ",".join(parts) + ")"


def list_item_sql(values: Sequence[Bound], types: Sequence[str]) -> str:
    """ListPartitionItem.toSql: one key `("1")`, several `(("1"),("2"))`."""
    keys = ",".join(key_sql(v, types) for v in values)
    return f"({keys})" if len(values) > 1 else keys


# -- rules ----------------------------------------------------------------------------------------------


def sort_items(items: Iterable[PartitionItem], kind: str, types: Sequence[str]) -> list[PartitionItem]:
    """Doris's partition order (PartitionInfo.getPartitionItemEntryList): RANGE by range, LIST by the
    listed keys; other tables keep their order."""
    items = list(items)
    if kind == "RANGE":
        return sorted(items, key=lambda i: tuple(key_order(b, types) for b in range_bounds(i, types)))
    if kind == "LIST":
        return sorted(items, key=lambda i: tuple(key_order(v, types) for v in i.values or ()))
    return items


def range_bounds(item: PartitionItem, types: Sequence[str]) -> tuple[Bound, Bound]:
    """A RANGE item's (lower, upper); an `upper` of None (the catalog's older MAXVALUE form) is all MAXVALUE."""
    upper = item.upper if item.upper is not None else tuple(None for _ in types)
    return item.lower or (), upper


class RangeIndex:
    """Disjoint ranges kept sorted, so a new one is checked against its neighbours only (a table created with
    10,000 partitions is not 10,000 x 10,000 comparisons)."""

    def __init__(self, types: Sequence[str]) -> None:
        self.types = tuple(types)
        self.lows: list[tuple] = []
        self.highs: list[tuple] = []
        self.items: list[PartitionItem] = []

    def add(self, item: PartitionItem) -> None:
        lower, upper = range_bounds(item, self.types)
        lo = key_order(lower, self.types)
        at = bisect.bisect_left(self.lows, lo)
        self.lows.insert(at, lo)
        self.highs.insert(at, key_order(upper, self.types))
        self.items.insert(at, item)

    def neighbours(self, lo: tuple) -> list[PartitionItem]:
        at = bisect.bisect_left(self.lows, lo)
        return self.items[max(0, at - 1):at + 1]

    def max_upper_below(self, key: tuple) -> Bound | None:
        """The highest upper bound below `key` (the ranges are disjoint: uppers sort as lowers do)."""
        at = bisect.bisect_left(self.highs, key)
        return range_bounds(self.items[at - 1], self.types)[1] if at else None


def check_range(item: PartitionItem, existing: Iterable[PartitionItem] | RangeIndex, types: Sequence[str]) -> None:
    """[lower, upper) must be non-empty and intersect no existing range."""
    lower, upper = range_bounds(item, types)
    lo, hi = key_order(lower, types), key_order(upper, types)
    if lo >= hi:
        raise doris_error("The lower values must smaller than upper values")
    for other in existing.neighbours(lo) if isinstance(existing, RangeIndex) else existing:
        other_lower, other_upper = range_bounds(other, types)
        if lo < key_order(other_upper, types) and key_order(other_lower, types) < hi:
            raise doris_error(
                f"Range {range_text(lower, upper, types)} is intersected with range: "
                f"{range_text(other_lower, other_upper, types)}"
            )


def _invalid_list(detail: str) -> StorageError:
    return doris_error(f"Invalid list value format: errCode = 2, detailMessage = {detail}")


def check_list(item: PartitionItem, existing: Iterable[PartitionItem], types: Sequence[str]) -> None:
    """Every listed key is new: not twice in the item, not in any existing LIST partition."""
    values = item.values or ()
    seen: set[Bound] = set()
    existing = list(existing)
    for value in values:
        for other in existing:
            if value in (other.values or ()):
                raise _invalid_list(
                    f"The partition key[{key_sql(value, types)}] in partition item[{values_in_sql(values)}] is "
                    f"conflict with current partitionKeys[{list_item_sql(other.values or (), types)}]"
                )
        if value in seen:
            raise _invalid_list(
                f"The partition key[{values_in_sql(values)}] has duplicate item [{key_sql(value, types)}]."
            )
        seen.add(value)


def check_new_items(kind: str, types: Sequence[str], existing: Sequence[PartitionItem],
                    new: Sequence[PartitionItem]) -> None:
    """New partitions against the existing ones and each other, in order: names (case-insensitive, Doris's
    ERR_SAME_NAME_PARTITION), then ranges or listed keys."""
    taken = {i.name.lower() for i in existing}
    accepted = list(existing)
    index = RangeIndex(types) if kind == "RANGE" else None
    for item in accepted if index is not None else ():
        index.add(item)  # type: ignore[union-attr]
    for item in new:
        if item.name.lower() in taken:
            raise duplicate_partition_name(item.name)
        if index is not None:
            check_range(item, index, types)
            index.add(item)
        elif kind == "LIST":
            check_list(item, accepted, types)
        taken.add(item.name.lower())
        accepted.append(item)


def duplicate_partition_name(name: str) -> StorageError:
    return doris_error(f"Duplicate partition name {name}", 1517, "HY000")


def cannot_add_partition() -> StorageError:
    """ADD PARTITION on a table without RANGE / LIST partitioning."""
    return doris_error("Only support adding partition to range and list partitioned table")


def check_items_match(kind: str, types: Sequence[str], old: Sequence[PartitionItem],
                      new: Sequence[PartitionItem]) -> None:
    """REPLACE PARTITION's strict_range: the union of `new`'s ranges (or listed keys) is exactly `old`'s
    (Doris's RangeUtils.checkPartitionItemListsMatch and its message)."""
    if kind == "LIST":
        if {v for i in old for v in i.values or ()} != {v for i in new for v in i.values or ()}:
            raise doris_error("The list values of the temporary partitions do not match those of the partitions "
                              "being replaced")
        return

    def union(items: Sequence[PartitionItem]) -> list[tuple[Bound, Bound]]:
        spans = sorted((range_bounds(i, types) for i in items), key=lambda b: key_order(b[0], types))
        merged: list[tuple[Bound, Bound]] = []
        for lower, upper in spans:
            if merged and key_order(merged[-1][1], types) == key_order(lower, types):
                merged[-1] = (merged[-1][0], upper)
            else:
                merged.append((lower, upper))
        return merged

    a, b = union(old), union(new)
    for (lo1, hi1), (lo2, hi2) in zip(a, b, strict=False):
        if key_order(lo1, types) != key_order(lo2, types) or key_order(hi1, types) != key_order(hi2, types):
            bad = (lo1, lo2) if key_order(lo1, types) != key_order(lo2, types) else (hi1, hi2)
            raise doris_error(f"2 range lists are not stricly matched. {key_text(bad[0], types)} vs. "
                              f"{key_text(bad[1], types)}")
    if len(a) != len(b):
        longer = a if len(a) > len(b) else b
        raise doris_error(f"2 range lists are not stricly matched. "
                          f"{range_text(*longer[min(len(a), len(b))], types)}")
