"""What the benchmarks share: best-of timing, a scratch folder, and a storage engine with database `db`."""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from storage.engine import StorageEngine


def best_of(fn: Callable[[], Any], repeat: int, budget: float = 0.0) -> tuple[float, Any]:
    """The best wall time (seconds) of at least `repeat` runs of `fn`, and of as many more as fit in `budget`
    seconds (sub-millisecond queries: a handful of runs is at the mercy of one GC pause), with the last
    run's result."""
    best, out, spent, runs = float("inf"), None, 0.0, 0
    while runs < repeat or (spent < budget and runs < 1000):
        t0 = time.perf_counter()
        out = fn()
        took = time.perf_counter() - t0
        best, spent, runs = min(best, took), spent + took, runs + 1
    return best, out


@contextmanager
def scratch_dir(prefix: str) -> Iterator[Path]:
    """A temporary folder, removed afterwards whatever happens."""
    root = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


def bench_engine(root: Path, conf: Mapping[str, str] | None = None) -> StorageEngine:
    """An opened storage engine under `root` whose catalog holds the database `db`."""
    engine = StorageEngine(root, conf)
    engine.open()
    engine.catalog.create_database("db")
    return engine
