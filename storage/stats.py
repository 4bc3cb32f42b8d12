"""Counters a scan accumulates while narrowing and reading rows (Doris's segment iterator statistics).

Each index step adds how many rows it removed, so a query profile can show which index did the work.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class ScanStats:
    raw_rows_read: int = 0  # rows decoded from storage after index narrowing (Doris RawRowsRead)
    rows_key_range_filtered: int = 0  # removed by the short key index (RowsKeyRangeFiltered)
    rows_stats_filtered: int = 0  # removed by segment / page zone maps (RowsStatsFiltered)
    rows_bloom_filter_filtered: int = 0
    rows_bitmap_index_filtered: int = 0
    rows_del_filtered: int = 0
    # removed by the exact predicate evaluated over the rows read (RowsVectorPredFiltered); together with
    # the index counters above: rows in the segments = every *_filtered counter + rows_returned
    rows_vector_pred_filtered: int = 0
    rows_returned: int = 0  # rows the scan hands up (RowsReturned)
    segments_total: int = 0  # segments of the tablets read (NumSegmentTotal)
    segments_filtered: int = 0  # ruled out whole by their segment zone maps (NumSegmentFiltered)
    pages_read: int = 0
    pages_skipped: int = 0
    bytes_read: int = 0
    scan_time_ns: int = 0  # wall time summed over tablets (ScanTime); tablets may run in parallel

    def merge(self, other: ScanStats) -> None:
        """Add another scan's counters into this one (e.g. per-segment stats into a tablet's)."""
        # the instance dicts hold exactly the fields: no dataclasses.fields() walk per call (a scan merges
        # once per column, segment and tablet)
        mine = self.__dict__
        for name, value in other.__dict__.items():
            mine[name] += value
