"""Result comparison for TPC-DS: `bench.tpch.compare` (rows in any order, numbers equal within a relative
tolerance, DuckDB's DOUBLEs rounded to the scale of dorislite's DECIMALs), plus ties at the LIMIT.

Most TPC-DS queries end in `ORDER BY ... LIMIT 100`, and their ORDER BY often does not order every row: when
several rows share the sort key of the 100th row, SQL lets an engine return any of them, so dorislite and DuckDB
may both be right with different row sets. When the plain comparison fails, `compare` judges ties:

1. only a statement ending in `LIMIT n` (the outermost one: the text ends with it), with as many rows from
   dorislite as from DuckDB, and exactly n of them (fewer means every row made it: no tie to break);
2. DuckDB runs the statement again without that LIMIT: the full ordered answer F (the DuckDB connection has
   Doris's NULL order, so F orders rows as Doris does);
3. the sort key of every row of F and of dorislite's answer D: each ORDER BY item is an output column (an
   ordinal, an output name, or the same expression as a select item) or an expression over output columns,
   which DuckDB evaluates over the rows (q70's `case when lochierarchy = 0 then s_state end`). A key that
   cannot be computed from the output (an ORDER BY on a column not selected) leaves the difference as it is;
4. the boundary key is that of F's n-th row. The rows of F[:n] whose key differs from it come strictly before
   the boundary: D's rows with other keys must equal them (the plain comparison); D's rows with the boundary
   key must be as many as F[:n] has, and each must be a row of F with that key (the same row comparison,
   matched one to one).

Then the answer is correct, with a note saying how many rows were a different pick among the tied ones.
Otherwise the difference stands (with the reason the tie rule did not apply when it was tried). Keys compare
with the same tolerance as values. A LIMIT without ORDER BY makes every row tie (any n rows are right).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import pyarrow as pa
import sqlglot
from sqlglot import exp

from bench.ssb.compare import _norm, _same
from bench.tpc import Reference
from bench.tpch.compare import compare as compare_rows

_TRAILING_LIMIT = re.compile(r"\blimit\s+(\d+)\s*$", re.IGNORECASE)
_ROWS_VIEW = "__tpcds_compare_rows"


def compare(actual: Sequence[Sequence[Any]], expected: Sequence[Sequence[Any]],
            ref: Reference | None = None) -> tuple[str | None, str | None]:
    """(difference, note) as `bench.tpch.compare.compare`, accepting a different pick among rows tied at the
    LIMIT (module docstring) when `ref` gives DuckDB's statement to re-run."""
    difference, note = compare_rows(actual, expected)
    if difference is None or ref is None:
        return difference, note
    ok, why = limit_ties(actual, expected, ref)
    if ok:
        return None, why
    return (difference if why is None else f"{difference} (ties at the LIMIT: {why})"), None


def _same_key(a: Sequence[Any], b: Sequence[Any]) -> bool:
    return all((x is None and y is None) or (x is not None and y is not None and _same(_norm(x), _norm(y)))
               for x, y in zip(a, b, strict=True))


def _same_row(a: Sequence[Any], b: Sequence[Any]) -> bool:
    return compare_rows([a], [b])[0] is None


def _order_keys(ref: Reference, statement: exp.Expression) -> list[int | str] | None:
    """Each ORDER BY item as an output column index, or as SQL over the output columns c0, c1, ...; None when an
    item needs something the output does not have."""
    order = statement.args.get("order")
    if order is None:
        return []
    names = [c.lower() for c in ref.columns]
    selects = [] if any(isinstance(s, exp.Star) for s in statement.selects) else statement.selects
    spellings: list[set[str]] = []
    for s in selects:
        forms = {s.sql().lower(), s.alias_or_name.lower()}
        if isinstance(s, exp.Alias):
            forms.add(s.this.sql().lower())
        spellings.append(forms)

    def index_of(e: exp.Expression) -> int | None:
        if isinstance(e, exp.Literal) and e.is_int:
            i = int(e.name) - 1
            return i if 0 <= i < len(names) else None
        text = e.sql().lower()
        hits = [i for i, forms in enumerate(spellings) if text in forms]
        if len(hits) == 1:
            return hits[0]
        if isinstance(e, exp.Column) and names.count(e.name.lower()) == 1:
            return names.index(e.name.lower())
        return None

    keys: list[int | str] = []
    for item in order.expressions:
        e = item.this if isinstance(item, exp.Ordered) else item
        i = index_of(e)
        if i is not None:
            keys.append(i)
            continue
        missing = False

        def to_output(node: exp.Expression) -> exp.Expression:
            nonlocal missing
            if isinstance(node, exp.Column):
                j = index_of(node)
                if j is None:
                    missing = True
                    return node
                return exp.column(f"c{j}")
            return node

        rewritten = e.copy().transform(to_output)
        if missing:
            return None
        keys.append(rewritten.sql("duckdb"))
    return keys


def _keys_of(ref: Reference, rows: Sequence[Sequence[Any]], keys: list[int | str]) -> list[tuple]:
    if all(isinstance(k, int) for k in keys):
        return [tuple(r[k] for k in keys) for r in rows]  # type: ignore[index]
    width = len(ref.columns)
    table = pa.table({f"c{i}": pa.array([r[i] for r in rows]) for i in range(width)})
    select = ", ".join(f"c{k}" if isinstance(k, int) else str(k) for k in keys)
    ref.con.register(_ROWS_VIEW, table)
    try:
        return [tuple(r) for r in ref.con.execute(f"SELECT {select} FROM {_ROWS_VIEW}").fetchall()]
    finally:
        ref.con.unregister(_ROWS_VIEW)


def _coarse(row: Sequence[Any]) -> tuple:
    """The row's string values: equal rows have equal coarse keys (numbers compare with a tolerance)."""
    return tuple(v for v in row if isinstance(v, str))


def limit_ties(actual: Sequence[Sequence[Any]], expected: Sequence[Sequence[Any]],
               ref: Reference) -> tuple[bool, str | None]:
    """(True, note) when `actual` is a correct answer given the ties at the statement's final LIMIT; (False, why)
    when the rule applied and failed; (False, None) when it does not apply."""
    m = _TRAILING_LIMIT.search(ref.sql)
    if m is None or len(actual) != len(expected) or len(expected) != int(m.group(1)):
        return False, None
    n = int(m.group(1))
    try:
        statement = sqlglot.parse_one(ref.sql, read="duckdb")
    except sqlglot.errors.ParseError:
        return False, "the statement does not parse with sqlglot"
    keys = _order_keys(ref, statement)
    if keys is None:
        return False, "an ORDER BY item is not computable from the output columns"
    full = ref.con.execute(ref.sql[: m.start()]).fetchall()
    if len(full) < n:
        return False, f"DuckDB's answer without the LIMIT has {len(full)} rows"
    try:
        full_keys, my_keys = _keys_of(ref, full, keys), _keys_of(ref, actual, keys)
    except Exception as e:  # noqa: BLE001 - an ORDER BY expression DuckDB cannot evaluate over the rows
        return False, f"sort key not computable: {str(e).splitlines()[0]}"
    boundary = full_keys[n - 1]
    before = [r for r, k in zip(full[:n], full_keys[:n], strict=True) if not _same_key(k, boundary)]
    tied = [r for r, k in zip(full, full_keys, strict=True) if _same_key(k, boundary)]
    mine_before = [r for r, k in zip(actual, my_keys, strict=True) if not _same_key(k, boundary)]
    mine_tied = [r for r, k in zip(actual, my_keys, strict=True) if _same_key(k, boundary)]
    if len(mine_tied) != n - len(before):
        return False, (f"{len(mine_tied)} returned rows have the boundary sort key {boundary}, "
                       f"{n - len(before)} should")
    difference = compare_rows(mine_before, before)[0]
    if difference is not None:
        return False, f"the rows before the boundary differ: {difference}"
    candidates: dict[tuple, list[int]] = defaultdict(list)
    for i, r in enumerate(tied):
        candidates[_coarse(r)].append(i)
    used: set[int] = set()
    for r in mine_tied:
        pick = next((i for i in candidates.get(_coarse(r), ()) if i not in used and _same_row(r, tied[i])), None)
        if pick is None:
            return False, f"returned row {tuple(r)} is not one of the {len(tied)} rows tied on {boundary}"
        used.add(pick)
    picked_alike = sum(1 for r in mine_tied if any(_same_row(r, e) for e in expected))
    return True, (f"equal up to ties at the LIMIT {n}: {len(tied)} rows share the boundary sort key {boundary}, "
                  f"{len(mine_tied)} of them are returned, {len(mine_tied) - picked_alike} a different pick "
                  "than DuckDB's")
