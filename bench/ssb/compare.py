"""Result comparison between dorislite (over MySQL) and DuckDB: same rows in any order, numbers equal
within a relative tolerance (SUMs come back as DECIMAL/BIGINT from one and HUGEINT from the other)."""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

REL_TOL = 1e-9


def _norm(v: Any) -> Any:
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, Decimal):
        return int(v) if v == v.to_integral_value() else float(v)
    if isinstance(v, (bytes, bytearray)):
        return v.decode()
    if isinstance(v, dt.datetime):
        return v.isoformat(sep=" ")
    if isinstance(v, dt.date):
        return v.isoformat()
    return v


def _sort_key(row: tuple) -> tuple:
    # None first, then numbers, then strings: a total order over mixed rows.
    return tuple((0, 0) if v is None else (1, v) if isinstance(v, (int, float)) else (2, str(v)) for v in row)


def normalize(rows: Sequence[Sequence[Any]]) -> list[tuple]:
    return sorted((tuple(_norm(v) for v in r) for r in rows), key=_sort_key)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if isinstance(a, int) and isinstance(b, int):
            return a == b
        return math.isclose(a, b, rel_tol=REL_TOL, abs_tol=1e-9)
    return a == b


def diff(actual: Sequence[Sequence[Any]], expected: Sequence[Sequence[Any]], limit: int = 5) -> str | None:
    """None when the results match, else a short description of the first differences."""
    a, e = normalize(actual), normalize(expected)
    if len(a) != len(e):
        return f"{len(a)} rows, expected {len(e)}; first rows {a[:3]} vs {e[:3]}"
    bad = [(x, y) for x, y in zip(a, e, strict=True)
           if len(x) != len(y) or not all(_same(p, q) for p, q in zip(x, y, strict=True))]
    if not bad:
        return None
    shown = "; ".join(f"{x} != {y}" for x, y in bad[:limit])
    return f"{len(bad)} of {len(a)} rows differ: {shown}"
