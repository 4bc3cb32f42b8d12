"""Doris's time-series cumulative compaction policy (`"compaction_policy" = "time_series"`, Doris 2.1's
TimeSeriesCumulativeCompactionPolicy), for tables loaded once and never merged again (logs, events):

- a cumulative compaction merges rowsets past the cumulative point once the waiting rowsets reach
  `time_series_compaction_goal_size_mbytes` (1024), or number `time_series_compaction_file_count_threshold`
  (2000), or the last cumulative compaction is `time_series_compaction_time_threshold_seconds` (3600) ago;
- the point then moves past the output, so every row is merged by cumulative compaction at most once;
- there is no base compaction (the write amplification it would add is what the policy avoids), and the
  version limit is be.conf `time_series_max_tablet_version_num` (20000) instead of max_tablet_version_num.

Same shapes as the size-based functions (storage.compaction.policy), chosen per table by `policy_for`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from storage.catalog.model import Rowset
from storage.compaction import policy as size_based
from storage.compaction.policy import (
    MB,
    NO_DELETE,
    NOT_CALCULATED,
    BasePlan,
    CompactionConfig,
    CumulativePlan,
    TabletCompactionState,
    consecutive_prefix,
    is_delete,
    is_segments_overlapping,
    is_singleton,
    outside_skip_window,
    rowset_score,
    sort_by_version,
)

TIME_SERIES = "time_series"


@dataclass(frozen=True)
class TimeSeriesConfig:
    goal_size_bytes: int = 1024 * MB
    file_count_threshold: int = 2000
    time_threshold_seconds: int = 3600

    @classmethod
    def from_properties(cls, props: Mapping[str, str]) -> TimeSeriesConfig:
        return cls(int(props.get("time_series_compaction_goal_size_mbytes", 1024)) * MB,
                   int(props.get("time_series_compaction_file_count_threshold", 2000)),
                   int(props.get("time_series_compaction_time_threshold_seconds", 3600)))


def calculate_cumulative_point(rowsets: Sequence[Rowset], state: TabletCompactionState) -> int:
    """Walking up from the base: the point stops at a hole, at a singleton or overlapping rowset (not yet
    compacted) and at an empty compaction output; delete versions never stop it."""
    if state.cumulative_point != NOT_CALCULATED:
        return state.cumulative_point
    ordered = sort_by_version(rowsets)
    if not ordered:
        return NOT_CALCULATED
    point = NOT_CALCULATED
    prev_end = ordered[0].start_version - 1
    for index, rs in enumerate(ordered):
        if rs.start_version > prev_end + 1:
            break
        if not is_delete(rs):
            if is_segments_overlapping(rs) or is_singleton(rs):
                return rs.start_version
            if index > 0 and rs.num_segments == 0:
                return rs.start_version
        prev_end = rs.end_version
        point = prev_end + 1
    return point


def _waiting(rowsets: Sequence[Rowset], state: TabletCompactionState) -> list[Rowset]:
    point = calculate_cumulative_point(rowsets, state)
    return [rs for rs in sort_by_version(rowsets) if rs.start_version >= point]


def _due(total: int, score: int, state: TabletCompactionState, ts: TimeSeriesConfig, now: float) -> str | None:
    if total >= ts.goal_size_bytes:
        return f"{total} bytes >= time_series_compaction_goal_size_mbytes"
    if score >= ts.file_count_threshold:
        return f"{score} rowsets >= time_series_compaction_file_count_threshold"
    if state.last_cumu_success is not None and now - state.last_cumu_success > ts.time_threshold_seconds:
        return f"{now - state.last_cumu_success:.0f}s > time_series_compaction_time_threshold_seconds"
    return None


def cumulative_score(rowsets: Sequence[Rowset], state: TabletCompactionState, ts: TimeSeriesConfig,
                     now: float) -> int:
    """The waiting rowsets' score once one of the three triggers holds, else 0. The first time a tablet has
    something waiting the time trigger's clock starts (Doris stamps the last success time then)."""
    part = _waiting(rowsets, state)
    score = sum(rowset_score(rs) for rs in part)
    if _due(sum(rs.data_size for rs in part), score, state, ts, now) is not None:
        return score
    if state.last_cumu_success is None and score > 0:
        state.last_cumu_success = now
    return 0


def plan_cumulative(rowsets: Sequence[Rowset], state: TabletCompactionState, config: CompactionConfig,
                    ts: TimeSeriesConfig, now: float) -> CumulativePlan:
    """TimeSeriesCumulativeCompactionPolicy::pick_input_rowsets: from the first not yet compacted rowset,
    consecutive rowsets up to the goal size; a delete version ends the walk after some inputs."""
    point = calculate_cumulative_point(rowsets, state)
    candidates = consecutive_prefix(outside_skip_window(rowsets, point, config, now))
    start = next((i for i, rs in enumerate(candidates) if is_singleton(rs)), len(candidates))
    inputs: list[Rowset] = []
    score = total = 0
    last_delete = NO_DELETE
    plan = CumulativePlan(point, ts.goal_size_bytes, tuple(candidates), (), 0)
    for rs in candidates[start:]:
        if is_delete(rs):
            last_delete = rs.start_version
            if inputs:
                break
            score = total = 0
            continue
        inputs.append(rs)
        score += rowset_score(rs)
        total += rs.data_size
        if total >= ts.goal_size_bytes:
            if len(inputs) == 1 and not is_segments_overlapping(rs):
                inputs, score, total = [], 0, 0  # one sorted rowset of the goal size alone: leave it
                continue
            return dataclasses.replace(plan, inputs=tuple(inputs), score=score, reason="goal size reached")
    if last_delete != NO_DELETE:
        if len(inputs) == 1 and not is_segments_overlapping(inputs[0]):
            return dataclasses.replace(plan, last_delete_version=last_delete, point_without_merge=last_delete + 1,
                                       reason="a delete version with nothing to merge before it")
        return dataclasses.replace(plan, inputs=tuple(inputs), score=score, last_delete_version=last_delete,
                                   reason="inputs before a delete version")
    reason = _due(total, score, state, ts, now)
    if reason is None or not inputs:
        return dataclasses.replace(plan, reason="time series thresholds not reached" if inputs else
                                   "no candidate rowsets")
    return dataclasses.replace(plan, inputs=tuple(inputs), score=score, reason=reason)


def update_cumulative_point(output: Rowset, state: TabletCompactionState) -> int:
    """Past the output: what one cumulative compaction wrote is never merged by it again."""
    if output.num_segments == 0:
        return state.cumulative_point
    return output.end_version + 1


# -- one interface for the manager -----------------------------------------------------------------------


@dataclass(frozen=True)
class CompactionPolicy:
    """The size-based rules (ts None) or the time-series ones, behind one set of calls."""

    config: CompactionConfig
    ts: TimeSeriesConfig | None = None

    @property
    def version_limit(self) -> int:
        return self.config.time_series_max_tablet_version_num if self.ts else self.config.max_tablet_version_num

    def cumulative_point(self, rowsets: Sequence[Rowset], state: TabletCompactionState) -> int:
        if self.ts is None:
            return size_based.calculate_cumulative_point(rowsets, state, self.config)
        return calculate_cumulative_point(rowsets, state)

    def plan_cumulative(self, rowsets: Sequence[Rowset], state: TabletCompactionState, now: float) -> CumulativePlan:
        if self.ts is None:
            return size_based.plan_cumulative(rowsets, state, self.config, now)
        return plan_cumulative(rowsets, state, self.config, self.ts, now)

    def plan_base(self, rowsets: Sequence[Rowset], state: TabletCompactionState, now: float) -> BasePlan:
        if self.ts is None:
            return size_based.plan_base(rowsets, state, self.config, now)
        return BasePlan((), "the time_series compaction policy runs no base compaction")

    def update_cumulative_point(self, inputs: Sequence[Rowset], output: Rowset, rowsets_after: Sequence[Rowset],
                                state: TabletCompactionState, last_delete_version: int | None) -> int:
        if self.ts is None:
            return size_based.update_cumulative_point(inputs, output, rowsets_after, state, self.config,
                                                      last_delete_version=last_delete_version)
        return update_cumulative_point(output, state)

    def scores(self, rowsets: Sequence[Rowset], state: TabletCompactionState, now: float) -> tuple[int, int]:
        """(cumulative score, base score)."""
        if self.ts is None:
            return (size_based.cumulative_score(rowsets, state, self.config),
                    size_based.base_score(rowsets, state, self.config))
        return cumulative_score(rowsets, state, self.ts, now), 0


def policy_for(props: Mapping[str, str], config: CompactionConfig) -> CompactionPolicy:
    """The policy a table's PROPERTIES choose."""
    if props.get("compaction_policy", "").lower() == TIME_SERIES:
        return CompactionPolicy(config, TimeSeriesConfig.from_properties(props))
    return CompactionPolicy(config)
