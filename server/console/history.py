"""What the console plots over time and the catalog does not keep: each table's rowsets and bytes per tablet,
sampled every fe.conf `console_sample_interval_seconds` (10) for the last `console_history_samples` (360) samples,
at most MAX_TABLETS tablets per table (the rest summed), so memory stays bounded."""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from dataclasses import dataclass

from storage.engine import StorageEngine

log = logging.getLogger("dorislite.console")
MAX_TABLETS = 64


@dataclass(frozen=True)
class Sample:
    at: float
    tablets: dict[int, tuple[int, int]]  # tablet_id -> (rowsets, bytes); "others" under -1
    total: tuple[int, int]


class TableHistory:
    def __init__(self, engine: StorageEngine, interval: float = 10.0, keep: int = 360) -> None:
        self.engine = engine
        self.interval = max(1.0, interval)
        self.keep = max(2, keep)
        self._samples: dict[int, deque[Sample]] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="console-history", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()

    def _loop(self) -> None:
        while not self._stop.wait(self.interval if self._samples else 1.0):
            try:
                self.sample_all()
            except Exception:  # noqa: BLE001 - a failed sample (engine not open yet, a table dropped) is skipped
                log.debug("console history sample failed", exc_info=True)

    @staticmethod
    def summarize(summary: dict[int, tuple[int, int, int, int]], at: float) -> Sample:
        ids = sorted(summary)
        kept = {tid: (summary[tid][0], summary[tid][2]) for tid in ids[:MAX_TABLETS]}
        rest = ids[MAX_TABLETS:]
        if rest:
            kept[-1] = (sum(summary[t][0] for t in rest), sum(summary[t][2] for t in rest))
        return Sample(at, kept, (sum(v[0] for v in summary.values()), sum(v[2] for v in summary.values())))

    def sample_all(self) -> None:
        catalog = self.engine.catalog
        now = time.time()
        seen = set()
        for db in catalog.list_databases():
            for table in catalog.list_tables(db.name):
                seen.add(table.table_id)
                sample = self.summarize(catalog.tablet_rowset_summary(table.table_id), now)
                with self._lock:
                    self._samples.setdefault(table.table_id, deque(maxlen=self.keep)).append(sample)
        with self._lock:
            for gone in set(self._samples) - seen:
                del self._samples[gone]

    def samples(self, table_id: int) -> list[Sample]:
        with self._lock:
            return list(self._samples.get(table_id, ()))
