"""Result comparison for TPC-H: bench.ssb.compare's `diff` (rows in any order, numbers equal within a relative
tolerance), plus one allowance TPC-H needs.

Doris types AVG(DECIMAL(p, s)) as DECIMAL(38, max(s, 4)) and DECIMAL / DECIMAL as DECIMAL(p1 + s2 + 4, s1 + 4)
(shared/doris-on-duckdb.md), so q1's averages, q8's and q14's shares and q17's `sum(...) / 7.0` come back
rounded at that scale, where DuckDB computes a DOUBLE. When the exact comparison fails, a column where
dorislite returned DECIMALs and DuckDB returned DOUBLEs is compared again with DuckDB's doubles rounded to
dorislite's scale (half up, then truncated: either way Doris may cut the last digit). A double is rounded
from its shortest decimal spelling (`repr`: -227.06875, not the binary -227.068749999...), as the exact value
Doris rounds is that decimal. Only DuckDB DOUBLEs are rounded: a DECIMAL from both sides must agree as before,
so a wrong scale there is still a difference.

Last, the same columns may differ by a relative `DECIMAL_REL_TOL` (1e-6): Doris rounds every intermediate
DECIMAL to its scale, so a sum of per-row divisions (TPC-DS q66's `sum(jan_sales / w_warehouse_sq_ft)`, each
at scale 6) carries the rounding of every row, which no rounding of DuckDB's double reproduces. The note says
which allowance made the match.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from decimal import ROUND_DOWN, ROUND_HALF_UP, Decimal
from typing import Any

from bench.ssb.compare import diff, normalize

DECIMAL_REL_TOL = 1e-6


def decimal_scales(rows: Sequence[Sequence[Any]]) -> dict[int, int]:
    """Column index -> the largest scale of the DECIMAL values dorislite returned in that column."""
    scales: dict[int, int] = {}
    for row in rows:
        for i, v in enumerate(row):
            if isinstance(v, Decimal) and v.is_finite():
                scales[i] = max(scales.get(i, 0), -int(v.as_tuple().exponent))
    return scales


def _rounded(row: Sequence[Any], scales: dict[int, int], rounding: str) -> tuple:
    out = list(row)
    for i, s in scales.items():
        if i < len(out) and isinstance(out[i], float) and math.isfinite(out[i]):
            out[i] = Decimal(repr(out[i])).quantize(Decimal(1).scaleb(-s), rounding=rounding)
    return tuple(out)


def _close(actual: Sequence[Sequence[Any]], expected: Sequence[Sequence[Any]], columns: set[int]) -> bool:
    """Rows equal as in `diff`, numbers in `columns` within DECIMAL_REL_TOL."""
    a, e = normalize(actual), normalize(expected)
    if len(a) != len(e):
        return False
    for x, y in zip(a, e, strict=True):
        if len(x) != len(y):
            return False
        for i, (p, q) in enumerate(zip(x, y, strict=True)):
            near = (i in columns and isinstance(p, (int, float)) and isinstance(q, (int, float))
                    and math.isclose(p, q, rel_tol=DECIMAL_REL_TOL, abs_tol=1e-9))
            if not near and diff([(p,)], [(q,)]) is not None:
                return False
    return True


def compare(actual: Sequence[Sequence[Any]], expected: Sequence[Sequence[Any]]) -> tuple[str | None, str | None]:
    """(difference, note): difference is None when the results match (bench.ssb.compare.diff), or match once
    DuckDB's DOUBLEs are rounded to the scale of dorislite's DECIMALs in the same column, or are within
    DECIMAL_REL_TOL of them; the note then says so."""
    exact = diff(actual, expected)
    if exact is None:
        return None, None
    scales = {i: s for i, s in decimal_scales(actual).items()
              if any(len(r) > i and isinstance(r[i], float) for r in expected)}
    if scales and len(actual) == len(expected):
        for rounding in (ROUND_HALF_UP, ROUND_DOWN):
            if diff(actual, [_rounded(r, scales, rounding) for r in expected]) is None:
                cols = ", ".join(f"column {i + 1} at scale {s}" for i, s in sorted(scales.items()))
                how = "rounded" if rounding == ROUND_HALF_UP else "truncated"
                return None, f"equal with DuckDB's DOUBLE {how} to dorislite's DECIMAL ({cols})"
        if _close(actual, expected, set(scales)):
            cols = ", ".join(f"column {i + 1}" for i in sorted(scales))
            return None, (f"equal within {DECIMAL_REL_TOL:g} relative where dorislite returned DECIMAL and DuckDB "
                          f"DOUBLE ({cols})")
    return exact, None
