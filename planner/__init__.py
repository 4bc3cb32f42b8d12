"""Binding against the catalog, logical plans, rewrites, rollup selection, predicate pushdown into storage,
the OLAP scans and, above them, execution in DuckDB (planner/duck) or on the Arrow operators, EXPLAIN text.
Imports sql and storage."""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys


class _Absent(importlib.abc.MetaPathFinder):
    """Fails the import of modules known to be missing at once, without searching sys.path again."""

    def __init__(self, names: frozenset[str]) -> None:
        self.names = names

    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        if name in self.names:
            raise ModuleNotFoundError(f"No module named '{name}'", name=name)
        return None


def _remember_missing_optional_modules() -> None:
    """pyarrow imports pandas / dateutil, if they exist, every time it converts Python values (a scalar
    operation, a one-element array): without them installed each attempt searches sys.path again (~0.1 ms,
    several per literal of an IN list)."""
    missing = frozenset(n for n in ("pandas", "dateutil") if n not in sys.modules and importlib.util.find_spec(n) is None)
    if missing and not any(isinstance(f, _Absent) for f in sys.meta_path):
        sys.meta_path.insert(0, _Absent(missing))


_remember_missing_optional_modules()
