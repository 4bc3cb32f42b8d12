"""PREAGGREGATION: may an AGGREGATE / UNIQUE scan skip merge-on-read because the query's own aggregation
gives the same answer over unmerged (or pre-aggregated rollup) rows? Decided once against the base
index, as Doris's SelectMaterializedIndexWithAggregate does, with Doris's reason texts; select_rollup
then reads the verdict (OFF on an aggregate query means "base index only").

Beyond Doris (exact, and shown by EXPLAIN as a rewrite): `sum(e)` where `e` is linear in SUM value
columns with coefficients over key columns only, e.g. `sum(a - b)` = sum(a) - sum(b) and
`sum(a * k)` = sum over k's groups of k * sum(a). Evaluating `e` on a pre-aggregated row gives the sum
of `e` over the base rows it stands for, because `e` is linear and `k` is constant within the row.
With two or more value columns this needs them NOT NULL: `sum(a - b)` skips a base row whose b is NULL
but a pre-aggregated row would still count its a.
"""

from __future__ import annotations

from collections.abc import Mapping

from sqlglot import exp

from planner.context import QueryContext
from planner.logical import LogicalScan, evolve, referenced_ids
from planner.olap_source import OlapTableSource
from planner.rules.olap_scans import AggregateAbove, OlapScanRule, aggregate_text, doris_sql, resolve
from storage.catalog.model import KEYS_DUP, Column

NO_AGGREGATE = "No aggregate on scan."
_SUPPORTED = {"min": "MIN", "max": "MAX", "sum": "SUM"}
_NAMES = {"count_distinct_approx": "approx_count_distinct", "count_star": "count"}


def _preaggregation(scan: LogicalScan, source: OlapTableSource, above: AggregateAbove | None,
                    required: frozenset[str], ctx: QueryContext) -> LogicalScan:
    if source.table.keys_type == KEYS_DUP:
        return evolve(scan, source=evolve(source, preaggregation=True, preaggregation_reason=""))
    reason, rewrites = can_skip_merge_on_read(scan, source, above)
    decided = evolve(source, preaggregation=reason is None, preaggregation_reason=reason or "",
                      rewrites=rewrites if reason is None else ())
    return evolve(scan, source=decided)


# the verdict and reason on every OLAP scan of an AGGREGATE / UNIQUE table
preaggregation = OlapScanRule(_preaggregation)


def can_skip_merge_on_read(scan: LogicalScan, source: OlapTableSource,
                           above: AggregateAbove | None) -> tuple[str | None, tuple[str, ...]]:
    """(None, rewrites used) when merge-on-read is unnecessary, else (Doris's reason, ())."""
    if above is None:
        return NO_AGGREGATE, ()
    columns = {cid: source.table.column(name) for name, cid in scan.columns}
    names = {cid: name for name, cid in scan.columns}
    resolved = resolve(above, scan)
    rewrites: list[str] = []
    for func, distinct, args in resolved.calls:
        reason = _check_call(func, distinct, args, columns, names, rewrites)
        if reason is not None:
            return reason, ()
    for key in resolved.keys:
        value = _value_column(key, columns)
        if value is not None:
            return f"Grouping expression {doris_sql(key, names, False)} contains value column {value.name}", ()
    for predicate in resolved.predicates:
        value = _value_column(predicate, columns)
        if value is not None:
            return f"Predicate {doris_sql(predicate, names, False)} contains value column {value.name}", ()
    return None, tuple(rewrites)


def _value_column(e: exp.Expression, columns: Mapping[str, Column | None]) -> Column | None:
    for cid in sorted(referenced_ids(e)):
        col = columns.get(cid)
        if col is not None and not col.is_key:
            return col
    return None


def _slot(e: exp.Expression) -> str | None:
    """The column id of a slot or a CAST on a slot (Doris's extractSlotOrCastOnSlot)."""
    while isinstance(e, exp.Cast | exp.Paren):
        e = e.this
    return e.name if isinstance(e, exp.Column) else None


def _check_call(func: str, distinct: bool, args: tuple[exp.Expression, ...], columns: Mapping[str, Column | None],
                names: Mapping[str, str], rewrites: list[str]) -> str | None:
    text = aggregate_text(func, distinct, args, names)
    if func in ("count", "count_star"):
        slot = _slot(args[0]) if len(args) == 1 else None
        col = columns.get(slot) if slot is not None else None
        if distinct and col is not None and col.is_key:
            return None
        return f"Count distinct is only valid for key columns, but meet {text}."
    if func not in _SUPPORTED:
        return f"Aggregate {_NAMES.get(func, func)} function is not supported in storage engine."
    slot = _slot(args[0])
    if slot is None:
        if func == "sum":
            rewrite = _linear_sum(args[0], columns, names)
            if rewrite is not None:
                rewrites.append(f"{text} -> {rewrite}")
                return None
        return f"Input of aggregate function {text} should be slot or cast on slot."
    col = columns.get(slot)
    if col is None:
        return f"Slot({names.get(slot, slot)}) in {text} is neither key column nor value column."
    if col.is_key:
        if func == "sum":
            return f"Aggregate function {text} contains key column {col.name}."
        return None
    agg = (col.aggregation or "NONE").upper()
    if agg != _SUPPORTED[func]:
        return f"Aggregate operator don't match, aggregate function: {text}, column aggregate type: {agg}"
    return None


Term = tuple[str, exp.Expression | None, int]  # (value column id, key-only coefficient, sign)


def _linear_terms(e: exp.Expression, columns: Mapping[str, Column | None]) -> list[Term] | None:
    """`e` as a signed sum of SUM value columns, each optionally scaled by a key-only expression."""
    if isinstance(e, exp.Paren):
        return _linear_terms(e.this, columns)
    if isinstance(e, exp.Column):
        col = columns.get(e.name)
        if col is None or col.is_key or (col.aggregation or "").upper() != "SUM":
            return None
        return [(e.name, None, 1)]
    if isinstance(e, exp.Add | exp.Sub):
        left, right = _linear_terms(e.this, columns), _linear_terms(e.expression, columns)
        if left is None or right is None:
            return None
        sign = -1 if isinstance(e, exp.Sub) else 1
        return left + [(c, k, s * sign) for c, k, s in right]
    if isinstance(e, exp.Neg):
        inner = _linear_terms(e.this, columns)
        return None if inner is None else [(c, k, -s) for c, k, s in inner]
    if isinstance(e, exp.Mul):
        for factor, other in ((e.this, e.expression), (e.expression, e.this)):
            if _key_only(factor, columns):
                inner = _linear_terms(other, columns)
                if inner is not None and all(k is None for _, k, _ in inner):
                    return [(c, factor, s) for c, _, s in inner]
        return None
    return None


def _key_only(e: exp.Expression, columns: Mapping[str, Column | None]) -> bool:
    """Constant within a pre-aggregated row: built from key columns and literals, deterministic."""
    if any(isinstance(n, exp.Rand | exp.AggFunc | exp.Subquery) for n in e.walk()):
        return False
    return all((col := columns.get(cid)) is not None and col.is_key for cid in referenced_ids(e))


def _linear_sum(e: exp.Expression, columns: Mapping[str, Column | None], names: Mapping[str, str]) -> str | None:
    terms = _linear_terms(e, columns)
    if not terms:
        return None
    value_ids = {c for c, _, _ in terms}
    if len(value_ids) > 1 and any(columns[c] is None or columns[c].nullable for c in value_ids):  # type: ignore[union-attr]
        return None  # NULLs would make sum(a - b) differ from sum(a) - sum(b)
    parts = []
    for i, (cid, coef, sign) in enumerate(terms):
        body = f"sum({names.get(cid, cid)})"
        if coef is not None:
            key = doris_sql(coef, names, False)
            body = f"sum({key} * {body} per {key})"
        parts.append(("- " if sign < 0 else "+ ") + body if i else ("-" if sign < 0 else "") + body)
    return " ".join(parts)
