"""Prometheus metrics (`GET /metrics` on the FE and BE HTTP ports) with Doris's names where Doris has the metric:
`doris_fe_*` on the FE port (queries, connections, load jobs, transactions, tablets), `doris_be_*` on the BE port
(load rows and bytes, tablets and rowsets, compaction score and bytes, disk, memory). The text format is written
here: Doris's counters keep their names (`doris_fe_query_err`, no `_total`), which prometheus_client's writer would
rename; the values are read from the server's own state at scrape time, except the query counters, which the
sessions feed (`QueryStats`)."""

from __future__ import annotations

import bisect
import os
import resource
import shutil
import threading
import time
from collections import Counter, deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from server.session import SessionContext

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
_QUANTILES = (0.75, 0.95, 0.98, 0.99, 0.999)  # Doris's query latency quantiles
_BUCKETS_MS = (1, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000, 300000)
_RECENT = 10000  # latencies kept for the quantiles


@dataclass
class Family:
    """One metric in Prometheus's text format: its samples are (suffix, labels, value)."""

    name: str
    help: str
    type: str  # counter, gauge, summary, histogram
    samples: list[tuple[str, dict[str, str], float]] = field(default_factory=list)

    def add(self, value: float, suffix: str = "", **labels: str) -> Family:
        self.samples.append((suffix, labels, float(value)))
        return self

    def text(self) -> str:
        lines = [f"# HELP {self.name} {self.help}", f"# TYPE {self.name} {self.type}"]
        for suffix, labels, value in self.samples:
            tags = ",".join(f'{k}="{_escape(v)}"' for k, v in labels.items())
            lines.append(f"{self.name}{suffix}{{{tags}}} {value!r}" if tags else f"{self.name}{suffix} {value!r}")
        return "\n".join(lines) + "\n"


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def counter(name: str, help: str, value: float | None = None) -> Family:
    family = Family(name, help, "counter")
    return family.add(value) if value is not None else family


def gauge(name: str, help: str, value: float | None = None) -> Family:
    family = Family(name, help, "gauge")
    return family.add(value) if value is not None else family


@dataclass(frozen=True)
class RecentStatement:
    """One statement as the console lists it."""

    at: float
    user: str
    db: str | None
    sql: str
    millis: float
    rows: int
    state: str  # OK / EOF / ERR
    error: str


RECENT_STATEMENTS = 500


class QueryStats:
    """What the sessions report about statements: counts, errors and latencies, and the last statements for the
    console (bounded memory)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.statements_seen: deque[RecentStatement] = deque(maxlen=RECENT_STATEMENTS)
        self.queries = 0
        self.errors = 0
        self.statements = 0
        self.sum_ms = 0.0
        self._buckets = [0] * (len(_BUCKETS_MS) + 1)
        self._recent: deque[float] = deque(maxlen=_RECENT)

    def record(self, millis: float, is_query: bool, error: bool, recent: RecentStatement | None = None) -> None:
        with self._lock:
            if recent is not None:
                self.statements_seen.append(recent)
            self.statements += 1
            if error:
                self.errors += 1
            if not is_query:
                return
            self.queries += 1
            self.sum_ms += millis
            self._buckets[bisect.bisect_left(_BUCKETS_MS, millis)] += 1  # searchsorted's side, no numpy call
            self._recent.append(millis)

    def recent(self) -> list[RecentStatement]:
        with self._lock:
            return list(reversed(self.statements_seen))

    def snapshot(self) -> tuple[int, int, int, float, list[int], np.ndarray]:
        with self._lock:
            return (self.queries, self.errors, self.statements, self.sum_ms, list(self._buckets),
                    np.array(self._recent, dtype=np.float64))


def _frontend(ctx: SessionContext) -> Iterator[Family]:
    queries, errors, statements, total_ms, buckets, recent = ctx.query_stats.snapshot()
    yield counter("doris_fe_query_total", "queries received", queries)
    yield counter("doris_fe_query_err", "statements that failed", errors)
    yield counter("doris_fe_request_total", "statements received", statements)
    latency = Family("doris_fe_query_latency_ms", "query latency in ms (quantiles over the last 10000 queries)",
                     "summary")
    for q in _QUANTILES:
        latency.add(float(np.quantile(recent, q)) if len(recent) else 0.0, quantile=str(q))
    yield latency.add(total_ms, "_sum").add(queries, "_count")
    histogram = Family("doris_fe_query_latency_seconds", "query latency", "histogram")
    for bound, n in zip((*(b / 1000 for b in _BUCKETS_MS), "+Inf"), np.cumsum(buckets).tolist(), strict=True):
        histogram.add(n, "_bucket", le=str(bound))
    yield histogram.add(total_ms / 1000, "_sum").add(queries, "_count")
    connections = ctx.server.connections() if ctx.server is not None else []
    yield gauge("doris_fe_connection_total", "open MySQL connections", len(connections))
    jobs = gauge("doris_fe_job", "load and export jobs by type and state")
    for (kind, state), n in sorted(Counter((j.kind, j.state) for j in ctx.loads.jobs()).items()):
        jobs.add(n, job="load", type=kind, state=state)
    for state, n in sorted(Counter(j.state for j in ctx.exports.jobs()).items()):
        jobs.add(n, job="export", type="EXPORT", state=state)
    yield jobs
    txns = counter("doris_fe_txn_counter", "load transactions kept, by outcome")
    for kind, n in sorted(ctx.engine.catalog.txn_counts().items()):
        txns.add(n, type=kind)
    yield txns
    catalog = ctx.engine.catalog
    tables = [t for db in catalog.list_databases() for t in catalog.list_tables(db.name)]
    yield gauge("doris_fe_table_num", "tables", len(tables))
    yield gauge("doris_fe_tablet_num", "tablets (one backend: this server)", catalog.rowset_totals()["tablets"])
    yield gauge("doris_fe_uptime_seconds", "seconds since the server started", time.time() - ctx.started_at)


def _backend(ctx: SessionContext) -> Iterator[Family]:
    rows, loaded_bytes = ctx.loads.totals()
    yield counter("doris_be_load_rows", "rows loaded by the loads finished since start", rows)
    yield counter("doris_be_load_bytes", "file bytes the loads finished since start read", loaded_bytes)
    counts = ctx.engine.catalog.rowset_totals()
    yield gauge("doris_be_tablet_num", "tablets", counts["tablets"])
    yield gauge("doris_be_rowset_num", "rowsets not yet merged away", counts["rowsets"])
    yield gauge("doris_be_segment_num", "segments of those rowsets", counts["segments"])
    manager = ctx.compaction
    cumu, base = manager.max_scores_seen
    yield gauge("doris_be_tablet_cumulative_max_compaction_score", "highest cumulative compaction score", cumu)
    yield gauge("doris_be_tablet_base_max_compaction_score", "highest base compaction score", base)
    c = manager.counters
    yield counter("doris_be_compaction_deltas_total", "compaction tasks done").add(
        c.cumulative_tasks, type="cumulative").add(c.base_tasks, type="base")
    yield counter("doris_be_compaction_bytes_total", "bytes compaction read and wrote").add(
        c.bytes_read, type="read").add(c.bytes_written, type="written")
    yield counter("doris_be_compaction_failed_total", "compaction tasks that failed", c.failed_tasks)
    root = str(ctx.engine.root)
    disk = shutil.disk_usage(root)
    yield gauge("doris_be_disks_local_used_capacity", "bytes of data under the storage root").add(
        counts["bytes"], path=root)
    yield gauge("doris_be_disks_avail_capacity", "free bytes on the storage root's disk").add(disk.free, path=root)
    yield gauge("doris_be_disks_total_capacity", "bytes of the storage root's disk").add(disk.total, path=root)
    yield gauge("doris_be_memory_allocated_bytes", "resident memory of the server process", _rss_bytes())
    yield gauge("doris_be_process_fd_num_used", "open file descriptors", _open_fds())


def _rss_bytes() -> int:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _open_fds() -> int:
    try:
        return len(os.listdir("/proc/self/fd"))
    except OSError:
        return 0


def frontend_metrics(ctx: SessionContext) -> str:
    return "".join(f.text() for f in _frontend(ctx))


def backend_metrics(ctx: SessionContext) -> str:
    return "".join(f.text() for f in _backend(ctx))
