"""The time-series compaction policy (issue 13: `"compaction_policy" = "time_series"` applied, not just
accepted): Doris 2.1's triggers (goal size, file count, time since the last cumulative compaction), every
row merged by cumulative compaction once, no base compaction, the larger version limit."""

from __future__ import annotations

from storage.catalog.model import Rowset
from storage.compaction.policy import MB, CompactionConfig, TabletCompactionState
from storage.compaction.time_series import TimeSeriesConfig, policy_for

NOW = 1_000_000.0
CONFIG = CompactionConfig()


def rs(start: int, end: int, size: int = MB, segments: int = 1, overlapping: bool = False,
       kind: str = "DATA") -> Rowset:
    return Rowset(f"r{start}-{end}", 1, start, end, 10, segments, size, 0, kind=kind, overlapping=overlapping,
                  created_at=NOW - 3600)


def policy(**props: str):
    return policy_for({"compaction_policy": "time_series", **props}, CONFIG)


def test_policy_is_chosen_by_the_table_property() -> None:
    assert policy_for({}, CONFIG).ts is None
    p = policy(time_series_compaction_goal_size_mbytes="5", time_series_compaction_file_count_threshold="7")
    assert p.ts == TimeSeriesConfig(5 * MB, 7, 3600)
    assert p.version_limit == 20000 and policy_for({}, CONFIG).version_limit == 2000


def test_thresholds_trigger_the_merge() -> None:
    rowsets = [rs(2, 2), rs(3, 3), rs(4, 4)]
    p = policy()
    state = TabletCompactionState(1)
    state.cumulative_point = p.cumulative_point(rowsets, state)
    assert state.cumulative_point == 2
    # nothing reached: no merge, and the clock of the time trigger starts
    assert p.scores(rowsets, state, NOW) == (0, 0)
    assert state.last_cumu_success == NOW
    assert p.plan_cumulative(rowsets, state, NOW).inputs == ()
    # the file count reached
    plan = policy(time_series_compaction_file_count_threshold="3").plan_cumulative(rowsets, state, NOW)
    assert [r.start_version for r in plan.inputs] == [2, 3, 4]
    # the goal size reached after two rowsets: those two
    plan = policy(time_series_compaction_goal_size_mbytes="2").plan_cumulative(rowsets, state, NOW)
    assert [r.start_version for r in plan.inputs] == [2, 3]
    # an hour and more since the last cumulative compaction
    plan = p.plan_cumulative(rowsets, state, NOW + 3601)
    assert [r.start_version for r in plan.inputs] == [2, 3, 4]


def test_each_row_is_merged_once_and_base_never_runs() -> None:
    p = policy(time_series_compaction_file_count_threshold="2")
    state = TabletCompactionState(1)
    merged = rs(2, 3, size=2 * MB)
    state.cumulative_point = p.update_cumulative_point([rs(2, 2), rs(3, 3)], merged, [merged], state, None)
    assert state.cumulative_point == 4
    rowsets = [merged, rs(4, 4), rs(5, 5)]
    plan = p.plan_cumulative(rowsets, state, NOW)
    assert [r.start_version for r in plan.inputs] == [4, 5]  # the output [2-3] is not merged again
    assert p.plan_base(rowsets, state, NOW).inputs == ()
    assert p.scores(rowsets, state, NOW)[1] == 0
    # the size-based policy keeps a small output in the cumulative part, to be merged again
    sized = TabletCompactionState(1, cumulative_point=2)
    assert policy_for({}, CONFIG).update_cumulative_point([rs(2, 2), rs(3, 3)], merged, [merged], sized, -1) == 2


def test_a_delete_version_ends_the_walk() -> None:
    p = policy(time_series_compaction_file_count_threshold="2")
    state = TabletCompactionState(1)
    rowsets = [rs(2, 2), rs(3, 3), rs(4, 4, kind="DELETE", segments=0, size=0), rs(5, 5), rs(6, 6)]
    state.cumulative_point = p.cumulative_point(rowsets, state)
    plan = p.plan_cumulative(rowsets, state, NOW)
    assert [r.start_version for r in plan.inputs] == [2, 3] and plan.last_delete_version == 4
