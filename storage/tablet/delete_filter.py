"""Delete predicates: what a DELETE rowset holds, and how a read (or base compaction) applies it.

A DELETE rowset (kind "DELETE", no segments, published as one new version of each partition it covers)
keeps its condition in `Rowset.delete_predicate`: a JSON list of terms. A row coming from a DATA rowset
whose end version is below the DELETE rowset's version is deleted when it matches ALL the terms
(SQL semantics: a NULL value matches nothing but IS NULL). Two kinds of term:

- a column predicate, storage.predicate.ColumnPredicate as JSON: `{"column": "k1", "op": "=", "values":
  [1]}`; dates, datetimes and decimals are tagged (`{"date": "2020-01-01"}`, `{"datetime": ...}`,
  `{"decimal": "1.50"}`) so they come back as the very Python values a scan predicate holds;
- a key set, `{"op": "key in", "columns": ["k1", "k2"], "arrow": "<base64 Arrow IPC stream>"}`: the
  row's key tuple is one of the set's rows, NULL equal to NULL as keys compare. A DELETE on a UNIQUE
  table that must evaluate its WHERE on merged rows (merge-on-write) publishes the matched keys so.

Everything here works on whole Arrow columns (predicate_mask, dictionary codes, numpy), never row by row.
`apply_deletes(rows, deletes)` is the one implementation: the tablet scan calls it per rowset before the
merge, base compaction calls it on its input rowsets.
"""

from __future__ import annotations

import base64
import datetime as dt
import functools
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from storage.catalog.model import Rowset
from storage.errors import StorageError
from storage.predicate import ColumnPredicate, Op
from storage.tablet.predicate_filter import predicate_mask

DELETE = "DELETE"
KEY_IN = "key in"


@dataclass(frozen=True)
class DeleteCondition:
    """A parsed delete predicate: every term must match for a row to be deleted."""

    predicates: tuple[ColumnPredicate, ...] = ()
    key_set: pa.Table | None = None  # key columns; rows = deleted key tuples

    @property
    def columns(self) -> tuple[str, ...]:
        names = [p.column for p in self.predicates]
        if self.key_set is not None:
            names += self.key_set.column_names
        return tuple(dict.fromkeys(names))


# ------------------------------------------------------------------ JSON form


def _encode_value(v: Any) -> Any:
    if v is None or isinstance(v, bool | int | float | str):
        return v
    if isinstance(v, dt.datetime):
        return {"datetime": v.isoformat(sep=" ")}
    if isinstance(v, dt.date):
        return {"date": v.isoformat()}
    if isinstance(v, Decimal):
        return {"decimal": str(v)}
    raise StorageError(f"cannot store {v!r} in a delete predicate")


def _decode_value(v: Any) -> Any:
    if not isinstance(v, dict):
        return v
    if "datetime" in v:
        return dt.datetime.fromisoformat(v["datetime"])
    if "date" in v:
        return dt.date.fromisoformat(v["date"])
    if "decimal" in v:
        return Decimal(v["decimal"])
    raise StorageError(f"unknown value {v!r} in a delete predicate")


def encode_predicates(predicates: Sequence[ColumnPredicate]) -> str:
    """The delete_predicate text of a predicate DELETE."""
    return json.dumps([{"column": p.column, "op": p.op.value, "values": [_encode_value(v) for v in p.values]}
                       for p in predicates], ensure_ascii=False, separators=(",", ":"))


def encode_key_set(keys: pa.Table) -> str:
    """The delete_predicate text deleting exactly the key tuples in `keys` (columns = key columns)."""
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, keys.schema) as writer:
        writer.write_table(keys)
    blob = base64.b64encode(sink.getvalue().to_pybytes()).decode("ascii")
    return json.dumps([{"op": KEY_IN, "columns": keys.column_names, "arrow": blob}], separators=(",", ":"))


def rename_delete_columns(text: str, old: str, new: str) -> str:
    """A DELETE rowset's condition with column `old` (any case) called `new` (a RENAME COLUMN)."""
    terms = json.loads(text)
    for term in terms:
        if term.get("op") == KEY_IN:
            names = [new if c.lower() == old.lower() else c for c in term["columns"]]
            table = pa.ipc.open_stream(base64.b64decode(term["arrow"])).read_all().rename_columns(names)
            term.update(json.loads(encode_key_set(table))[0])
        elif term["column"].lower() == old.lower():
            term["column"] = new
    return json.dumps(terms, ensure_ascii=False, separators=(",", ":"))


@functools.lru_cache(maxsize=4096)
def parse_delete_predicate(text: str) -> DeleteCondition:
    """A DELETE rowset's condition (memoised: every scan of the tablet reads the same text)."""
    predicates: list[ColumnPredicate] = []
    key_set = None
    for term in json.loads(text):
        if term.get("op") == KEY_IN:
            table = pa.ipc.open_stream(base64.b64decode(term["arrow"])).read_all()
            key_set = table if key_set is None else _intersect_key_sets(key_set, table)
        else:
            predicates.append(ColumnPredicate(term["column"], Op(term["op"]),
                                              tuple(_decode_value(v) for v in term["values"])))
    return DeleteCondition(tuple(predicates), key_set)


def _intersect_key_sets(a: pa.Table, b: pa.Table) -> pa.Table:
    return a.filter(pa.array(key_set_mask(a, b)))


# ------------------------------------------------------------------ which deletes apply


def delete_rowsets(rowsets: Iterable[Rowset]) -> list[Rowset]:
    """The DELETE rowsets among a tablet's visible rowsets."""
    return [r for r in rowsets if r.kind == DELETE]


def deletes_above(deletes: Sequence[Rowset], end_version: int) -> list[Rowset]:
    """The DELETE rowsets that apply to rows of a DATA rowset ending at `end_version` (newer ones)."""
    return [d for d in deletes if d.start_version > end_version]


def delete_columns(deletes: Iterable[Rowset]) -> list[str]:
    """Columns the conditions of `deletes` read (a scan reads them along with the requested ones)."""
    names: dict[str, None] = {}
    for d in deletes:
        if d.delete_predicate:
            names.update(dict.fromkeys(parse_delete_predicate(d.delete_predicate).columns))
    return list(names)


# ------------------------------------------------------------------ evaluation


def _plain(col: pa.Array | pa.ChunkedArray) -> pa.Array:
    arr = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
    return arr.cast(arr.type.value_type) if pa.types.is_dictionary(arr.type) else arr


def key_set_mask(rows: pa.Table, keys: pa.Table) -> np.ndarray:
    """Rows of `rows` whose tuple over the columns of `keys` is one of `keys`' rows (NULL equals NULL)."""
    n = rows.num_rows
    if n == 0 or keys.num_rows == 0:
        return np.zeros(n, dtype=bool)
    by_lower = {name.lower(): name for name in rows.column_names}
    combined: np.ndarray | None = None
    for name in keys.column_names:
        col = _plain(rows.column(by_lower[name.lower()]))
        ks = _plain(keys.column(name))
        if ks.type != col.type:
            ks = ks.cast(col.type)
        # one dictionary over both sides: equal values (NULL included) get equal codes
        codes = pc.dictionary_encode(pa.concat_arrays([col, ks]), null_encoding="encode")
        this = codes.indices.to_numpy(zero_copy_only=False).astype(np.int64)
        if combined is None:
            combined = this
        else:  # pair the codes, then renumber densely so the product never overflows
            _, combined = np.unique(combined * len(codes.dictionary) + this, return_inverse=True)
            combined = combined.astype(np.int64)
    assert combined is not None
    return np.isin(combined[:n], combined[n:])


def condition_mask(rows: pa.Table, condition: DeleteCondition) -> np.ndarray:
    """Rows matching every term of one delete condition."""
    mask = predicate_mask(rows, condition.predicates)
    if condition.key_set is not None and mask.any():
        mask &= key_set_mask(rows, condition.key_set)
    return mask


def deleted_mask(rows: pa.Table, deletes: Sequence[Rowset]) -> np.ndarray:
    """Rows of `rows` that any of `deletes` removes (the caller passes the deletes above the rows' version)."""
    mask = np.zeros(rows.num_rows, dtype=bool)
    for d in deletes:
        if d.kind == DELETE and d.delete_predicate:
            mask |= condition_mask(rows, parse_delete_predicate(d.delete_predicate))
    return mask


def apply_deletes(rows: pa.Table, deletes: Sequence[Rowset]) -> tuple[pa.Table, int]:
    """`rows` without the rows `deletes` remove, and how many were removed. `rows` must hold the
    columns the conditions read (delete_columns)."""
    if not deletes or rows.num_rows == 0:
        return rows, 0
    mask = deleted_mask(rows, deletes)
    removed = int(mask.sum())
    return (rows.filter(pa.array(~mask)) if removed else rows), removed
