"""Doris's BITMAP and HLL functions over ordinary columns, as Doris users write them against DUPLICATE tables:
to_bitmap, bitmap_hash, bitmap_empty, bitmap_count, bitmap_to_string, hll_hash, hll_empty, hll_cardinality.

A BITMAP value is an Arrow list<uint64> of its members (sorted, distinct), an HLL value the list of its members'
64-bit hashes: exact where Doris estimates, which Doris's answers allow. The aggregates over them
(bitmap_union_count(to_bitmap(x)), hll_union_agg(hll_hash(x)) ...) do not build these lists: the binder counts
the distinct members directly (bind_aggregate), from the element functions below, which both executors run."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from planner.expressions import Evaluator, register, register_name
from planner.functions.casts import convert, to_string
from planner.functions.columnwise import per_distinct
from planner.functions.hashes import MURMUR3_32_SEED, murmur3_32, murmur3_64
from planner.functions.time_units import arguments
from planner.values import Value, is_string
from sql.errors import analysis_error

BITMAP = pa.list_(pa.field("bitmap", pa.uint64()))  # the value field's name tells a BITMAP / HLL from an array


def is_object(t: pa.DataType) -> bool:
    """A BITMAP or HLL column: Doris's MySQL protocol sends such values as NULL."""
    return pa.types.is_list(t) and t.value_field.name == "bitmap"
MEMBER = pa.uint64()
_UINT64_DIGITS = 20


def bitmap_member(v: Value) -> Value:
    """The member to_bitmap(v) holds: v as an unsigned 64-bit integer; NULL (an empty bitmap) for NULL, a
    negative number or text that is no unsigned integer."""
    if pa.types.is_null(v.type):
        return pc.cast(v, MEMBER)
    if pa.types.is_unsigned_integer(v.type):
        return pc.cast(v, MEMBER)
    if is_string(v.type):
        text = pc.utf8_trim_whitespace(to_string(v))
        digits = pc.and_(pc.match_substring_regex(text, r"^[0-9]+$"),
                         pc.less_equal(pc.utf8_length(text), _UINT64_DIGITS))
        text = pc.if_else(digits, text, pa.scalar(None, pa.string()))
        try:
            return pc.cast(text, MEMBER)
        except pa.ArrowInvalid:  # twenty digits above 2^64 - 1: those values alone, per distinct text
            return per_distinct(text, lambda s: int(s) if int(s) < 1 << 64 else None, MEMBER)
    number = convert(v, pa.int64())
    return pc.cast(pc.if_else(pc.less(number, 0), pa.scalar(None, pa.int64()), number), MEMBER)


def bitmap_hash_member(v: Value) -> Value:
    """The member bitmap_hash(v) holds: MurmurHash3-32 of v's text (Doris's seed) as an unsigned number."""
    return per_distinct(to_string(v), lambda s: murmur3_32(s.encode(), MURMUR3_32_SEED) & 0xFFFFFFFF, MEMBER)


def hll_member(v: Value) -> Value:
    """The hash hll_hash(v) adds to its sketch: MurmurHash3-64 of v's text, unsigned."""
    return per_distinct(to_string(v), lambda s: murmur3_64(s.encode(), 0) & 0xFFFFFFFFFFFFFFFF, MEMBER)


def singletons(members: Value) -> Value:
    """One set per row holding its member, or no member where it is NULL."""
    if isinstance(members, pa.Scalar):
        return pa.scalar([members.as_py()] if members.is_valid else [], BITMAP)
    valid = pc.is_valid(members).to_numpy(zero_copy_only=False)
    offsets = np.concatenate([[0], np.cumsum(valid)]).astype(np.int32)
    return pa.ListArray.from_arrays(pa.array(offsets), pc.drop_null(members)).cast(BITMAP)


def sorted_sets(lists: pa.Array) -> pa.Array:
    """Each list's distinct members in ascending order (a bitmap's own order), NULL lists kept."""
    parent = pc.list_parent_indices(lists).to_numpy(zero_copy_only=False).astype(np.int64)
    values = pc.list_flatten(lists).to_numpy(zero_copy_only=False).astype(np.uint64)
    order = np.lexsort((values, parent))
    parent, values = parent[order], values[order]
    keep = np.r_[True, (parent[1:] != parent[:-1]) | (values[1:] != values[:-1])] if len(values) else \
        np.zeros(0, bool)
    parent, values = parent[keep], values[keep]
    counts = np.bincount(parent, minlength=len(lists)) if len(parent) else np.zeros(len(lists), np.int64)
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
    valid = pc.is_valid(lists)
    return pa.ListArray.from_arrays(pa.array(offsets), pa.array(values, MEMBER),
                                    mask=pc.invert(valid) if lists.null_count else None).cast(BITMAP)


def _one(ev: Evaluator, e: exp.Expression, name: str) -> Value:
    (node,) = arguments(e, name, 1, 1)
    return ev.eval(node)


register_name("to_bitmap")(lambda ev, e: singletons(bitmap_member(_one(ev, e, "to_bitmap"))))
register_name("bitmap_hash")(lambda ev, e: singletons(bitmap_hash_member(_one(ev, e, "bitmap_hash"))))
register_name("hll_hash")(lambda ev, e: singletons(hll_member(_one(ev, e, "hll_hash"))))
register_name("bitmap_empty", "hll_empty")(lambda ev, e: pa.scalar([], BITMAP) if not arguments(e, "bitmap_empty", 0, 0)
                                           else None)
# the members the binder counts for bitmap_union_count(to_bitmap(x)), bitmap_union_count(bitmap_hash(x))
register_name("__bitmap_member")(lambda ev, e: bitmap_member(_one(ev, e, "to_bitmap")))
register_name("__bitmap_hash_member")(lambda ev, e: bitmap_hash_member(_one(ev, e, "bitmap_hash")))
register_name("__hll_member")(lambda ev, e: hll_member(_one(ev, e, "hll_hash")))


def _set_argument(v: Value, name: str) -> Value:
    if pa.types.is_null(v.type):
        return pc.cast(v, BITMAP)
    if not (pa.types.is_list(v.type) and v.type.value_type == MEMBER):
        raise analysis_error(f"Can not find the compatibility function signature: {name}({v.type})")
    return v


def _count(v: Value) -> Value:
    """The members of a set (0 for NULL, as Doris's bitmap_count / hll_cardinality)."""
    return pc.fill_null(pc.cast(pc.list_value_length(v), pa.int64()), 0)


@register(exp.BitmapCount)
def _bitmap_count(ev: Evaluator, e: exp.BitmapCount) -> Value:
    return _count(_set_argument(ev.eval(e.this), "bitmap_count"))


register_name("hll_cardinality")(lambda ev, e: _count(_set_argument(_one(ev, e, "hll_cardinality"),
                                                                      "hll_cardinality")))


@register_name("bitmap_to_string")
def _bitmap_to_string(ev: Evaluator, e: exp.Expression) -> Value:
    v = _set_argument(_one(ev, e, "bitmap_to_string"), "bitmap_to_string")
    scalar = isinstance(v, pa.Scalar)
    lists = pa.array([v.as_py()], BITMAP) if scalar else v
    if pa.types.is_null(lists.type):
        return pa.scalar(None, pa.string())
    members = sorted_sets(lists)
    text = pa.ListArray.from_arrays(members.offsets, pc.cast(members.values, pa.string()),
                                    mask=pc.is_null(members) if members.null_count else None)
    out = pc.binary_join(text, ",")
    return out[0] if scalar else out
