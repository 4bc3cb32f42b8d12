"""Query profiles (`SET enable_profile = true`): the last queries' scan counters for `SHOW QUERY PROFILE`.

Kept in memory only and bounded, as Doris's FE keeps a bounded list of recent profiles; the counter
names follow Doris's OlapScanNode / SegmentIterator profile so users can grep for the same words.
"""

from __future__ import annotations

import datetime as dt
import os
import threading
from collections import OrderedDict
from dataclasses import dataclass, field

from planner.olap_source import ScanProfile

MAX_PROFILES = 100
LIST_COLUMNS = ("QueryId", "User", "DefaultDb", "SQL", "QueryType", "StartTime", "EndTime", "TotalTime",
                "QueryState")


def new_query_id() -> str:
    """Doris prints a TUniqueId as two 64-bit halves in hex: `<hi>-<lo>`."""
    h = os.urandom(16).hex()  # what uuid4 draws, without building a UUID per statement
    return f"{h[:16]}-{h[16:]}"


def pretty_time(ns: int) -> str:
    """Doris-style durations: `1sec234ms`, `12ms`, `345us`."""
    us = ns // 1000
    if us < 1000:
        return f"{us}us"
    ms = us // 1000
    if ms < 1000:
        return f"{ms}ms"
    return f"{ms // 1000}sec{ms % 1000}ms"


@dataclass
class QueryProfile:
    query_id: str
    user: str
    default_db: str
    sql: str
    start: dt.datetime
    start_ns: int
    end: dt.datetime | None = None
    total_ns: int = 0
    state: str = "RUNNING"
    scans: list[ScanProfile] = field(default_factory=list)

    def list_row(self) -> tuple[str, ...]:
        fmt = "%Y-%m-%d %H:%M:%S"
        return (self.query_id, self.user, self.default_db, self.sql, "Query", self.start.strftime(fmt),
                self.end.strftime(fmt) if self.end else "N/A", pretty_time(self.total_ns), self.state)

    def text(self) -> list[str]:
        """The per-query view, one line per row, indented like Doris's profile tree."""
        lines = [
            "Summary:",
            f"  - Profile ID: {self.query_id}",
            "  - Task Type: QUERY",
            f"  - Start Time: {self.list_row()[5]}",
            f"  - End Time: {self.list_row()[6]}",
            f"  - Total: {pretty_time(self.total_ns)}",
            f"  - Task State: {self.state}",
            f"  - User: {self.user}",
            f"  - Default Db: {self.default_db}",
            f"  - Sql Statement: {self.sql}",
            "Execution Profile:",
        ]
        for node_id, scan in enumerate(self.scans):
            s = scan.stats
            total_pages = s.pages_read + s.pages_skipped
            lines += [
                f"  OlapScanNode (id={node_id}):",
                f"    - Table: {scan.table}",
                f"    - Index: {scan.index}",
                f"    - PushDownPredicates: [{', '.join(scan.predicates)}]",
                f"    - RowsReturned: {s.rows_returned}",
                f"    - ScanTime: {pretty_time(s.scan_time_ns)}",
                "    SegmentIterator:",
                f"      - NumSegmentTotal: {s.segments_total}",
                f"      - NumSegmentFiltered: {s.segments_filtered}",
                f"      - RawRowsRead: {s.raw_rows_read}",
                f"      - RowsKeyRangeFiltered: {s.rows_key_range_filtered}",
                f"      - RowsStatsFiltered: {s.rows_stats_filtered}",
                f"      - RowsBloomFilterFiltered: {s.rows_bloom_filter_filtered}",
                f"      - RowsBitmapIndexFiltered: {s.rows_bitmap_index_filtered}",
                f"      - RowsVectorPredFiltered: {s.rows_vector_pred_filtered}",
                f"      - RowsDelFiltered: {s.rows_del_filtered}",
                f"      - TotalPagesNum: {total_pages}",
                f"      - PagesRead: {s.pages_read}",
                f"      - PagesSkipped: {s.pages_skipped}",
                f"      - CompressedBytesRead: {s.bytes_read}",
            ]
        return lines


class ProfileStore:
    """The last MAX_PROFILES query profiles, newest first when listed; shared by every session."""

    def __init__(self, limit: int = MAX_PROFILES) -> None:
        self.limit = limit
        self._profiles: OrderedDict[str, QueryProfile] = OrderedDict()
        self._lock = threading.Lock()

    def add(self, profile: QueryProfile) -> None:
        with self._lock:
            self._profiles[profile.query_id] = profile
            while len(self._profiles) > self.limit:
                self._profiles.popitem(last=False)

    def get(self, query_id: str) -> QueryProfile | None:
        with self._lock:
            return self._profiles.get(query_id)

    def recent(self) -> list[QueryProfile]:
        with self._lock:
            return list(reversed(self._profiles.values()))
