"""Compaction rules on rowset metadata alone (seed 002): config, promotion size, levels, the cumulative
point, candidates, size-based input selection, the point update, base conditions, scores, rounds, task
selection and permits. Rowsets are written as "[a-b] size [DELETE] [Nseg] [overlapping|nonoverlapping]
[age=S]"."""

from __future__ import annotations

import dataclasses
import re
import threading
import time
from pathlib import Path

import pytest

from server.config import parse_conf
from storage.catalog.model import Rowset
from storage.compaction.policy import (
    BASE,
    CUMULATIVE,
    MB,
    NO_DELETE,
    NOT_CALCULATED,
    CompactionConfig,
    TabletCompactionState,
    base_score,
    calculate_cumulative_point,
    cumulative_candidates,
    cumulative_score,
    pick_base_inputs,
    pick_cumulative_inputs,
    plan_base,
    plan_cumulative,
    promotion_size,
    rowset_score,
    size_level,
    size_levels,
    tablet_priority,
    too_many_versions,
    too_many_versions_message,
    update_cumulative_point,
)
from storage.compaction.scheduling import (
    Candidate,
    PermitPool,
    candidate_for,
    compaction_type_for_round,
    select_tasks,
)

NOW = 1_700_000_000.0
DAY = 86400
CONF = CompactionConfig()
GB = 1024 * MB
_UNITS = {"": 1, "B": 1, "K": 1024, "M": MB, "G": GB}


def rs(spec: str, tablet_id: int = 1) -> Rowset:
    """"[2-10] 200M", "[11-11] DELETE", "[12-12] 1M 3seg overlapping age=5" (age: seconds before NOW,
    default an hour). A load defaults to 1 segment, a DELETE to 0 segments and 0 bytes."""
    m = re.match(r"\[(\d+)-(\d+)\]\s*(.*)$", spec.strip())
    assert m, spec
    start, end = int(m.group(1)), int(m.group(2))
    kind, size, segments, overlapping, age = "DATA", 0, None, True, 3600.0
    for token in m.group(3).split():
        if token in ("DATA", "DELETE"):
            kind = token
        elif token == "overlapping":
            overlapping = True
        elif token == "nonoverlapping":
            overlapping = False
        elif token.endswith("seg"):
            segments = int(token[:-3])
        elif token.startswith("age="):
            age = float(token[4:])
        else:
            sm = re.fullmatch(r"(\d+(?:\.\d+)?)([BKMG]?)", token)
            assert sm, token
            size = int(float(sm.group(1)) * _UNITS[sm.group(2)])
    if segments is None:
        segments = 0 if kind == "DELETE" else 1
    return Rowset(rowset_id=f"r{start}_{end}", tablet_id=tablet_id, start_version=start, end_version=end,
                  num_rows=100, num_segments=segments, data_size=size, txn_id=end, kind=kind,
                  delete_predicate="[]" if kind == "DELETE" else None, overlapping=overlapping,
                  created_at=NOW - age)


def tablet(*specs: str) -> list[Rowset]:
    return [rs(s) for s in specs]


def singles(first: int, count: int, size: str = "1M", extra: str = "") -> list[str]:
    return [f"[{v}-{v}] {size} {extra}" for v in range(first, first + count)]


def state(point: int = NOT_CALCULATED, **kw: object) -> TabletCompactionState:
    return TabletCompactionState(tablet_id=1, cumulative_point=point, **kw)  # type: ignore[arg-type]


def versions(rowsets: list[Rowset] | tuple[Rowset, ...]) -> list[str]:
    return [f"{r.start_version}-{r.end_version}" for r in rowsets]


def conf(**kw: object) -> CompactionConfig:
    return dataclasses.replace(CONF, **kw)  # type: ignore[arg-type]


# A big base: promotion size = clamp(10G x 0.05 = 512M, 64M, 1024M) = 512M
BIG_BASE = "[2-50] 10G nonoverlapping"


# -------------------------------------------------------------------------------------------- config


def test_be_conf_holds_every_key_with_its_default() -> None:
    be = parse_conf((Path(__file__).resolve().parents[2] / "conf" / "be.conf").read_text())
    names = {f.name for f in dataclasses.fields(CompactionConfig)}
    assert names <= set(be), names - set(be)
    assert CompactionConfig.from_mapping(be) == CompactionConfig()


def test_seed_defaults() -> None:
    assert CONF.compaction_promotion_size_mbytes == 1024
    assert CONF.compaction_promotion_ratio == 0.05
    assert CONF.compaction_promotion_min_size_mbytes == 64  # the seed (Doris 2.x: 128)
    assert CONF.compaction_min_size_mbytes == 64
    assert (CONF.cumulative_compaction_min_deltas, CONF.cumulative_compaction_max_deltas) == (5, 1000)
    assert CONF.cumulative_compaction_skip_window_seconds == 30
    assert (CONF.base_compaction_min_rowset_num, CONF.base_compaction_min_data_ratio) == (5, 0.3)
    assert CONF.base_compaction_interval_seconds_since_last_operation == 86400
    assert CONF.total_permits_for_compaction_score == 10000
    assert CONF.compaction_task_num_per_disk == 2  # the seed (Doris 2.x: 4)
    assert CONF.cumulative_compaction_rounds_for_each_base_compaction_round == 9
    assert (CONF.compaction_tablet_scan_frequency_factor, CONF.compaction_tablet_compaction_score_factor) == (0, 1)
    assert CONF.generate_compaction_tasks_interval_ms == 10
    assert CONF.min_compaction_failure_interval_sec == 600
    assert CONF.max_tablet_version_num == 2000
    assert CONF.disable_auto_compaction is False


def test_from_mapping_types_and_ignores_other_keys() -> None:
    c = CompactionConfig.from_mapping({
        "compaction_promotion_ratio": "0.1", "disable_auto_compaction": "TRUE",
        "cumulative_compaction_min_deltas": " 3 ", "max_cumu_compaction_threads": "-1",
        "storage_root_path": "/x", "max_tablet_version_num": "",
    })
    assert c.compaction_promotion_ratio == 0.1
    assert c.disable_auto_compaction is True
    assert c.cumulative_compaction_min_deltas == 3
    assert c.max_cumu_compaction_threads == -1
    assert c.max_tablet_version_num == 2000  # empty = default


@pytest.mark.parametrize("key, value", [
    ("cumulative_compaction_min_deltas", "five"),
    ("compaction_promotion_size_mbytes", "1.5"),
    ("base_compaction_min_data_ratio", "x"),
    ("disable_auto_compaction", "yes"),
    ("compaction_task_num_per_disk", "1"),
    ("compaction_task_num_per_fast_disk", "0"),
    ("cumulative_compaction_skip_window_seconds", "-1"),
    ("max_base_compaction_threads", "0"),
    ("compaction_promotion_ratio", "1.5"),
    ("cumulative_compaction_policy", "num_based"),
])
def test_from_mapping_bad_value_names_the_key(key: str, value: str) -> None:
    with pytest.raises(ValueError, match=key):
        CompactionConfig.from_mapping({key: value})


# ------------------------------------------------------------------------------ promotion and levels


@pytest.mark.parametrize("base, expected", [
    (0, 64 * MB),                 # empty base: the minimum
    (1 * GB, 64 * MB),            # 51.2M -> clamped up to 64M
    (2 * GB, int(2 * GB * 0.05)),  # 102.4M: inside the bounds
    (10 * GB, 512 * MB),          # 512M
    (20 * GB, 1024 * MB),         # exactly the maximum
    (100 * GB, 1024 * MB),        # 5G -> clamped down to 1024M
])
def test_promotion_size_clamp(base: int, expected: int) -> None:
    assert promotion_size(base, CONF) == expected


def test_promotion_size_follows_the_configured_bounds() -> None:
    c = conf(compaction_promotion_min_size_mbytes=128, compaction_promotion_ratio=0.1)
    assert promotion_size(0, c) == 128 * MB
    assert promotion_size(2 * GB, c) == int(2 * GB * 0.1)


def test_size_levels_halve_from_half_the_promotion_size() -> None:
    assert size_levels(CONF) == (512 * MB, 256 * MB, 128 * MB, 64 * MB)
    assert size_levels(conf(compaction_min_size_mbytes=100)) == (512 * MB, 256 * MB, 128 * MB)


@pytest.mark.parametrize("size, level", [
    (2 * GB, 512 * MB), (600 * MB, 512 * MB), (512 * MB, 512 * MB), (512 * MB - 1, 256 * MB),
    (200 * MB, 128 * MB), (64 * MB, 64 * MB), (64 * MB - 1, 0), (1, 0), (0, 0),
])
def test_size_level(size: int, level: int) -> None:
    assert size_level(size, CONF) == level


# ------------------------------------------------------------------------------- cumulative point


def test_point_is_calculated_once() -> None:
    rowsets = tablet(BIG_BASE, "[51-51] 1M")
    assert calculate_cumulative_point(rowsets, state(), CONF) == 51
    assert calculate_cumulative_point(rowsets, state(point=40), CONF) == 40


def test_point_of_an_empty_tablet_is_not_calculated() -> None:
    assert calculate_cumulative_point([], state(), CONF) == NOT_CALCULATED


def test_point_walks_past_promoted_rowsets_and_stops_at_a_singleton() -> None:
    rowsets = tablet(BIG_BASE, "[51-60] 600M nonoverlapping", "[61-70] 512M nonoverlapping", "[71-71] 1M")
    assert calculate_cumulative_point(rowsets, state(), CONF) == 71


def test_point_stops_at_a_merged_rowset_below_the_promotion_size() -> None:
    rowsets = tablet(BIG_BASE, "[51-60] 600M nonoverlapping", "[61-70] 511M nonoverlapping", "[71-71] 1M")
    assert calculate_cumulative_point(rowsets, state(), CONF) == 61


def test_point_stops_at_overlapping_segments() -> None:
    rowsets = tablet(BIG_BASE, "[51-60] 600M 3seg overlapping", "[61-61] 1M")
    assert calculate_cumulative_point(rowsets, state(), CONF) == 51
    # several segments that do not overlap do not stop it
    rowsets = tablet(BIG_BASE, "[51-60] 600M 3seg nonoverlapping", "[61-61] 1M")
    assert calculate_cumulative_point(rowsets, state(), CONF) == 61


def test_point_stops_after_the_rowset_before_a_hole() -> None:
    rowsets = tablet(BIG_BASE, "[51-60] 600M nonoverlapping", "[62-70] 600M nonoverlapping")
    assert calculate_cumulative_point(rowsets, state(), CONF) == 61


def test_point_walks_over_delete_versions() -> None:
    rowsets = tablet(BIG_BASE, "[51-51] DELETE", "[52-60] 600M nonoverlapping", "[61-61] DELETE", "[62-62] 1M")
    assert calculate_cumulative_point(rowsets, state(), CONF) == 62


def test_point_after_all_rowsets_when_everything_is_promoted() -> None:
    rowsets = tablet(BIG_BASE, "[51-60] 600M nonoverlapping")
    assert calculate_cumulative_point(rowsets, state(), CONF) == 61


def test_small_base_rowset_is_exempt_from_the_promotion_size() -> None:
    # the lowest rowset is the base even when small: the point goes after it
    rowsets = tablet("[2-50] 1M nonoverlapping", "[51-51] 1M")
    assert calculate_cumulative_point(rowsets, state(), CONF) == 51


def test_first_load_as_base_rowset_stays_cumulative() -> None:
    # dorislite has no empty [0-1]: the first load [2-2] is a singleton, so the point stays at 2 (as in
    # Doris, where a first load sits after [0-1] on the cumulative side)
    rowsets = tablet("[2-2] 1M", "[3-3] 1M")
    assert calculate_cumulative_point(rowsets, state(), CONF) == 2


# ---------------------------------------------------------------------------------------- candidates


def test_candidates_skip_window() -> None:
    rowsets = tablet(BIG_BASE, *singles(51, 3), "[54-54] 1M age=29", "[55-55] 1M age=30")
    got = cumulative_candidates(rowsets, state(point=51), CONF, NOW)
    # published 29 s and exactly 30 s ago: still inside the window
    assert versions(got) == ["51-51", "52-52", "53-53"]
    # a second later [55-55] is out of the window but [54-54] is not: the missing version cuts the list
    assert len(cumulative_candidates(rowsets, state(point=51), CONF, NOW + 1)) == 3
    assert len(cumulative_candidates(rowsets, state(point=51), CONF, NOW + 2)) == 5


def test_compaction_outputs_ignore_the_skip_window() -> None:
    rowsets = tablet(BIG_BASE, "[51-55] 5M age=1", "[56-56] 1M age=1")
    assert versions(cumulative_candidates(rowsets, state(point=51), CONF, NOW)) == ["51-55"]


def test_candidates_start_at_the_point_and_stop_at_a_gap() -> None:
    rowsets = tablet(BIG_BASE, *singles(51, 3), *singles(55, 3))
    assert versions(cumulative_candidates(rowsets, state(point=52), CONF, NOW)) == ["52-52", "53-53"]


def test_a_recent_rowset_in_the_middle_cuts_the_candidates() -> None:
    rowsets = tablet(BIG_BASE, *singles(51, 2), "[53-53] 1M age=5", *singles(54, 3))
    assert versions(cumulative_candidates(rowsets, state(point=51), CONF, NOW)) == ["51-51", "52-52"]


# -------------------------------------------------------------------------------- input selection


def test_pick_five_small_deltas() -> None:
    rowsets = tablet(BIG_BASE, *singles(51, 5))
    plan = plan_cumulative(rowsets, state(point=51), CONF, NOW)
    assert versions(plan.inputs) == ["51-51", "52-52", "53-53", "54-54", "55-55"]
    assert plan.score == 5 and plan.last_delete_version == NO_DELETE and plan.promotion_size == 512 * MB


def test_fewer_than_min_deltas_is_nothing_to_do() -> None:
    rowsets = tablet(BIG_BASE, *singles(51, 4))
    plan = plan_cumulative(rowsets, state(point=51), CONF, NOW)
    assert plan.inputs == () and plan.point_without_merge is None


def test_min_deltas_counts_segments_not_rowsets() -> None:
    rowsets = tablet(BIG_BASE, "[51-51] 1M 3seg overlapping", "[52-52] 1M 2seg overlapping")
    assert versions(pick_cumulative_inputs(rowsets, state(point=51), CONF, NOW)) == ["51-51", "52-52"]


def test_few_deltas_are_merged_once_they_reach_compaction_min_size() -> None:
    rowsets = tablet(BIG_BASE, "[51-51] 40M", "[52-52] 40M")  # 80M >= 64M
    assert versions(pick_cumulative_inputs(rowsets, state(point=51), CONF, NOW)) == ["51-51", "52-52"]


def test_a_single_rowset_alone() -> None:
    # a big one is above the level of the (empty) rest and is trimmed, overlapping or not
    assert pick_cumulative_inputs(tablet(BIG_BASE, "[51-51] 100M"), state(point=51), CONF, NOW) == []
    assert pick_cumulative_inputs(tablet(BIG_BASE, "[51-51] 100M 4seg overlapping"), state(point=51), CONF,
                                  NOW) == []
    # a small one with enough overlapping segments is merged: it reaches min deltas by itself
    rowsets = tablet(BIG_BASE, "[51-51] 10M 6seg overlapping")
    assert versions(pick_cumulative_inputs(rowsets, state(point=51), CONF, NOW)) == ["51-51"]
    assert pick_cumulative_inputs(tablet(BIG_BASE, "[51-51] 10M"), state(point=51), CONF, NOW) == []


def test_reaching_the_promotion_size_takes_everything_untrimmed() -> None:
    rowsets = tablet(BIG_BASE, "[51-51] 600M", "[52-52] 1M")
    assert versions(pick_cumulative_inputs(rowsets, state(point=51), CONF, NOW)) == ["51-51", "52-52"]


def test_level_trimming_drops_a_big_rowset_before_small_ones() -> None:
    # 300M (level 256M) > 5 x 1M (level 0): the big one waits, the small ones merge
    rowsets = tablet(BIG_BASE, "[51-51] 300M", *singles(52, 5))
    plan = plan_cumulative(rowsets, state(point=51), CONF, NOW)
    assert versions(plan.inputs) == ["52-52", "53-53", "54-54", "55-55", "56-56"]
    assert plan.score == 5


def test_level_trimming_stops_at_the_first_rowset_not_above_the_rest() -> None:
    # 490M < 512M; 300M (256M) > 80M+80M+30M (128M): dropped; 80M (64M) <= 110M (64M): kept from there on
    rowsets = tablet(BIG_BASE, "[51-51] 300M", "[52-52] 80M", "[53-53] 80M", "[54-54] 30M")
    assert versions(pick_cumulative_inputs(rowsets, state(point=51), CONF, NOW)) == ["52-52", "53-53", "54-54"]


def test_level_trimming_then_too_few_left() -> None:
    rowsets = tablet(BIG_BASE, "[51-51] 300M", *singles(52, 4))
    assert pick_cumulative_inputs(rowsets, state(point=51), CONF, NOW) == []


def test_a_delete_version_in_the_middle_ends_the_inputs() -> None:
    rowsets = tablet(BIG_BASE, *singles(51, 3), "[54-54] DELETE", *singles(55, 3))
    plan = plan_cumulative(rowsets, state(point=51), CONF, NOW)
    # fewer than min deltas and no trimming: a delete version compacts what precedes it directly
    assert versions(plan.inputs) == ["51-51", "52-52", "53-53"]
    assert plan.last_delete_version == 54


def test_a_delete_version_first_is_skipped() -> None:
    rowsets = tablet(BIG_BASE, "[51-51] DELETE", "[52-52] 1M", "[53-53] 1M")
    plan = plan_cumulative(rowsets, state(point=51), CONF, NOW)
    assert versions(plan.inputs) == ["52-52", "53-53"]
    assert plan.last_delete_version == 51


def test_a_delete_version_first_then_one_sorted_rowset_moves_the_point_only() -> None:
    rowsets = tablet(BIG_BASE, "[51-51] DELETE", "[52-52] 1M")
    plan = plan_cumulative(rowsets, state(point=51), CONF, NOW)
    assert plan.inputs == () and plan.last_delete_version == 51
    assert plan.point_without_merge == 52  # the delete goes to the base side


def test_a_delete_version_first_then_one_overlapping_rowset_is_merged() -> None:
    rowsets = tablet(BIG_BASE, "[51-51] DELETE", "[52-52] 1M 3seg overlapping")
    assert versions(pick_cumulative_inputs(rowsets, state(point=51), CONF, NOW)) == ["52-52"]


def test_consecutive_delete_versions_first() -> None:
    rowsets = tablet(BIG_BASE, "[51-51] DELETE", "[52-52] DELETE", "[53-53] 1M", "[54-54] 1M")
    plan = plan_cumulative(rowsets, state(point=51), CONF, NOW)
    assert versions(plan.inputs) == ["53-53", "54-54"] and plan.last_delete_version == 52
    only_deletes = tablet(BIG_BASE, "[51-51] DELETE", "[52-52] DELETE")
    plan = plan_cumulative(only_deletes, state(point=51), CONF, NOW)
    assert plan.inputs == () and plan.point_without_merge == 53


def test_score_limit_stops_the_walk_after_it_is_reached() -> None:
    # the limit is checked before adding a rowset: 4 + 4 + 4 = 12 >= 10
    rowsets = tablet(BIG_BASE, *singles(51, 6, extra="4seg overlapping"))
    plan = plan_cumulative(rowsets, state(point=51), conf(cumulative_compaction_max_deltas=10), NOW)
    assert versions(plan.inputs) == ["51-51", "52-52", "53-53"] and plan.score == 12


def test_max_score_argument_overrides_max_deltas() -> None:
    rowsets = tablet(BIG_BASE, *singles(51, 8))
    plan = plan_cumulative(rowsets, state(point=51), CONF, NOW, max_score=6)
    assert len(plan.inputs) == 6 and plan.score == 6


def test_score_limit_with_everything_trimmed_still_merges() -> None:
    # promotion 1024M (base 20G); 600M (512M) > rest; 100M (64M) > 0: trimming empties the inputs while
    # the score limit cuts the walk at the same place every time (Doris 2.x merges them anyway)
    rowsets = tablet("[2-50] 20G nonoverlapping", "[51-51] 600M", "[52-52] 100M 999seg overlapping",
                     *singles(53, 3))
    plan = plan_cumulative(rowsets, state(point=51), CONF, NOW)
    assert versions(plan.inputs) == ["51-51", "52-52"] and plan.score == 1000


def test_the_point_is_calculated_when_the_state_has_none() -> None:
    rowsets = tablet(BIG_BASE, *singles(51, 5))
    plan = plan_cumulative(rowsets, state(), CONF, NOW)
    assert plan.cumulative_point == 51 and len(plan.inputs) == 5


def test_no_candidates() -> None:
    plan = plan_cumulative(tablet(BIG_BASE, *singles(51, 5, extra="age=1")), state(point=51), CONF, NOW)
    assert plan.candidates == () and plan.inputs == () and plan.point_without_merge is None


def test_idle_tablet_promotes_its_sorted_rowsets() -> None:
    rowsets = tablet(BIG_BASE, *singles(51, 3))
    old = NOW - 2 * DAY
    plan = plan_cumulative(rowsets, state(point=51, last_cumu_success=old, last_base_success=old), CONF, NOW)
    assert plan.inputs == () and plan.point_without_merge == 54


def test_idle_tablet_merges_when_a_rowset_overlaps() -> None:
    rowsets = tablet(BIG_BASE, "[51-51] 1M 2seg overlapping", "[52-52] 1M")
    old = NOW - 2 * DAY
    plan = plan_cumulative(rowsets, state(point=51, last_cumu_success=old), CONF, NOW)
    assert versions(plan.inputs) == ["51-51", "52-52"] and plan.score == 3


def test_idle_rule_waits_for_both_kinds_and_starts_its_clock() -> None:
    rowsets = tablet(BIG_BASE, *singles(51, 3))
    recent = state(point=51, last_cumu_success=NOW - 2 * DAY, last_base_success=NOW - 60)
    assert plan_cumulative(rowsets, recent, CONF, NOW).point_without_merge is None
    fresh = plan_cumulative(rowsets, state(point=51), CONF, NOW)
    assert fresh.point_without_merge is None and fresh.start_idle_clock


# --------------------------------------------------------------------------------- point update


def output(spec: str) -> Rowset:
    return rs(spec + " nonoverlapping age=0")


def test_update_point_promotes_an_output_reaching_the_promotion_size() -> None:
    inputs = tablet(*singles(51, 5, size="110M"))
    out = output("[51-55] 550M")
    after = [rs(BIG_BASE), out]
    assert update_cumulative_point(inputs, out, after, state(point=51), CONF, NO_DELETE) == 56
    small = output("[51-55] 500M")
    assert update_cumulative_point(inputs, small, [rs(BIG_BASE), small], state(point=51), CONF, NO_DELETE) == 51


def test_update_point_at_exactly_the_promotion_size() -> None:
    out = output("[51-55] 512M")
    assert update_cumulative_point(tablet(*singles(51, 5)), out, [rs(BIG_BASE), out], state(point=51), CONF,
                                   NO_DELETE) == 56


def test_update_point_after_a_delete_version_whatever_the_size() -> None:
    inputs = tablet(*singles(51, 3))
    out = output("[51-53] 3M")
    after = [rs(BIG_BASE), out, rs("[54-54] DELETE"), rs("[55-55] 1M")]
    assert update_cumulative_point(inputs, out, after, state(point=51), CONF, last_delete_version=54) == 54
    # recovered from the tablet when the caller does not pass it
    assert update_cumulative_point(inputs, out, after, state(point=51), CONF) == 54


def test_update_point_after_a_skipped_leading_delete() -> None:
    inputs = tablet("[52-52] 1M", "[53-53] 1M")
    out = output("[52-53] 2M")
    after = [rs(BIG_BASE), rs("[51-51] DELETE"), out, rs("[54-54] 1M")]
    assert update_cumulative_point(inputs, out, after, state(point=51), CONF) == 54
    assert update_cumulative_point(inputs, out, after, state(point=51), CONF, last_delete_version=51) == 54


def test_update_point_without_delete_or_promotion_is_unchanged() -> None:
    inputs = tablet(*singles(51, 5))
    out = output("[51-55] 5M")
    after = [rs(BIG_BASE), out, rs("[56-56] 1M")]
    assert update_cumulative_point(inputs, out, after, state(point=51), CONF) == 51


def test_update_point_when_the_base_itself_was_merged() -> None:
    # first loads: the point sits at the base [2-2]; the promotion size is the one before the merge
    inputs = tablet(*singles(2, 5, size="20M"))
    out = output("[2-6] 100M")
    assert update_cumulative_point(inputs, out, [out], state(point=2), CONF, NO_DELETE) == 7  # 100M >= 64M
    small = output("[2-6] 50M")
    assert update_cumulative_point(inputs, small, [small], state(point=2), CONF, NO_DELETE) == 2


def test_full_cycle_of_plan_merge_update() -> None:
    rowsets = tablet(BIG_BASE, *singles(51, 3), "[54-54] DELETE", *singles(55, 5))
    st = state()
    st.cumulative_point = calculate_cumulative_point(rowsets, st, CONF)
    plan = plan_cumulative(rowsets, st, CONF, NOW)
    assert versions(plan.inputs) == ["51-51", "52-52", "53-53"]
    out = output("[51-53] 3M")
    after = [r for r in rowsets if r not in plan.inputs] + [out]
    st.cumulative_point = update_cumulative_point(plan.inputs, out, after, st, CONF, plan.last_delete_version)
    assert st.cumulative_point == 54
    plan = plan_cumulative(after, st, CONF, NOW)  # the delete first is skipped, five singles follow
    assert versions(plan.inputs) == ["55-55", "56-56", "57-57", "58-58", "59-59"]
    assert plan.last_delete_version == 54
    out2 = output("[55-59] 5M")
    after2 = [r for r in after if r not in plan.inputs] + [out2]
    assert update_cumulative_point(plan.inputs, out2, after2, st, CONF, plan.last_delete_version) == 60
    st.cumulative_point = 60
    # base side now: [2-50], [51-53], [54-54] DELETE, [55-59]
    assert versions(pick_base_inputs(after2, st, CONF, NOW)) == []  # 4 rowsets, ratio tiny, base recent
    assert base_score(after2, st, CONF) == 4


# ---------------------------------------------------------------------------------- base compaction


def base_tablet(*rest: str, base: str = "[2-10] 1G nonoverlapping age=60") -> list[Rowset]:
    return tablet(base, *rest)


def test_base_due_by_rowset_count() -> None:
    # base + 4 before the point: 5 rowsets are not more than 5 (ratio 0.04, base written a minute ago)
    rowsets = base_tablet(*[f"[{v}-{v}] 10M" for v in range(11, 16)])
    plan = plan_base(rowsets, state(point=15), CONF, NOW)
    assert plan.inputs == () and "not due" in plan.reason
    plan = plan_base(rowsets, state(point=16), CONF, NOW)
    assert versions(plan.inputs) == ["2-10", "11-11", "12-12", "13-13", "14-14", "15-15"]
    assert "6 rowsets" in plan.reason


def test_base_due_by_size_ratio() -> None:
    # 1G base: 2 x 160M = 0.3125 > 0.3
    rowsets = base_tablet("[11-11] 160M", "[12-12] 160M")
    assert versions(pick_base_inputs(rowsets, state(point=13), CONF, NOW)) == ["2-10", "11-11", "12-12"]
    # exactly 0.3 is not more than 0.3
    rowsets = base_tablet("[11-11] 300M", base="[2-10] 1000M nonoverlapping age=60")
    assert pick_base_inputs(rowsets, state(point=12), CONF, NOW) == []


def test_base_due_by_time_since_the_last_base_compaction() -> None:
    rowsets = base_tablet("[11-11] 10M")
    assert pick_base_inputs(rowsets, state(point=12, last_base_success=NOW - DAY), CONF, NOW) == []
    assert versions(pick_base_inputs(rowsets, state(point=12, last_base_success=NOW - DAY - 1), CONF, NOW)) == [
        "2-10", "11-11"]


def test_base_time_without_a_base_compaction_counts_from_the_base_rowset() -> None:
    old = base_tablet("[11-11] 10M", base=f"[2-10] 1G nonoverlapping age={DAY + 1}")
    assert versions(pick_base_inputs(old, state(point=12), CONF, NOW)) == ["2-10", "11-11"]
    assert pick_base_inputs(base_tablet("[11-11] 10M"), state(point=12), CONF, NOW) == []


def test_base_not_due_with_a_version_gap() -> None:
    rowsets = base_tablet(*[f"[{v}-{v}] 10M" for v in range(11, 15)], *[f"[{v}-{v}] 10M" for v in range(16, 19)])
    plan = plan_base(rowsets, state(point=19), CONF, NOW)
    assert plan.inputs == () and "missing" in plan.reason


def test_base_not_due_with_overlapping_segments() -> None:
    rowsets = base_tablet(*[f"[{v}-{v}] 10M" for v in range(11, 16)], "[16-16] 10M 2seg overlapping")
    plan = plan_base(rowsets, state(point=17), CONF, NOW)
    assert plan.inputs == () and "overlapping" in plan.reason


def test_base_not_due_for_an_initial_rowset_and_one_other() -> None:
    rowsets = tablet("[0-1] 0 age=999999", "[2-5] 100M nonoverlapping")
    plan = plan_base(rowsets, state(point=6), CONF, NOW)
    assert plan.inputs == () and "[x-1]" in plan.reason


def test_base_not_due_with_only_the_base_rowset() -> None:
    rowsets = base_tablet("[11-11] 1M", base=f"[2-10] 1G nonoverlapping age={2 * DAY}")
    assert pick_base_inputs(rowsets, state(point=11), CONF, NOW) == []


def test_base_empty_base_rowset_divides_by_one() -> None:
    rowsets = tablet("[2-2] DELETE age=60", "[3-3] 1K nonoverlapping")
    assert versions(pick_base_inputs(rowsets, state(point=4), CONF, NOW)) == ["2-2", "3-3"]


def test_base_deletes_are_merged_into_the_base() -> None:
    rowsets = base_tablet("[11-11] DELETE", "[12-20] 400M nonoverlapping")
    assert versions(pick_base_inputs(rowsets, state(point=21), CONF, NOW)) == ["2-10", "11-11", "12-20"]


# -------------------------------------------------------------------------------------------- scores


def test_rowset_score_counts_overlapping_segments() -> None:
    assert rowset_score(rs("[2-2] 1M 5seg overlapping")) == 5
    assert rowset_score(rs("[2-2] 1M 5seg nonoverlapping")) == 1
    assert rowset_score(rs("[2-2] 1M")) == 1
    assert rowset_score(rs("[2-2] DELETE")) == 1


def test_cumulative_score_after_the_point_with_trimming() -> None:
    rowsets = tablet(BIG_BASE, "[51-51] 300M 2seg overlapping", "[52-52] 1M 3seg overlapping",
                     "[53-53] 1M", "[54-54] DELETE")
    # 302M < 512M: the 300M rowset (256M) is above the rest (0) and is not counted: 3 + 1 + 1
    assert cumulative_score(rowsets, state(point=51), CONF) == 5
    # recent rowsets count too: the score says what waits
    rowsets.append(rs("[55-55] 1M age=1"))
    assert cumulative_score(rowsets, state(point=51), CONF) == 6


def test_cumulative_score_counts_everything_at_the_promotion_size() -> None:
    rowsets = tablet(BIG_BASE, "[51-51] 600M 2seg overlapping", "[52-52] 1M 3seg overlapping")
    assert cumulative_score(rowsets, state(point=51), CONF) == 5


def test_base_score_before_the_point() -> None:
    rowsets = tablet(BIG_BASE, "[51-60] 600M 4seg nonoverlapping", "[61-61] DELETE", "[62-62] 1M 3seg overlapping")
    assert base_score(rowsets, state(point=62), CONF) == 3
    assert cumulative_score(rowsets, state(point=62), CONF) == 3
    assert base_score([], state(), CONF) == cumulative_score([], state(), CONF) == 0


def test_scores_use_the_calculated_point_when_there_is_none() -> None:
    rowsets = tablet(BIG_BASE, "[51-60] 600M nonoverlapping", *singles(61, 4))
    assert base_score(rowsets, state(), CONF) == 2
    assert cumulative_score(rowsets, state(), CONF) == 4


def test_tablet_priority() -> None:
    st = state(scan_frequency=2.5)
    assert tablet_priority(st, 7, CONF) == 7
    c = conf(compaction_tablet_scan_frequency_factor=4, compaction_tablet_compaction_score_factor=2)
    assert tablet_priority(st, 7, c) == 4 * 2.5 + 2 * 7


# ------------------------------------------------------------------------------------- version limit


def test_too_many_versions() -> None:
    c = conf(max_tablet_version_num=3)
    assert not too_many_versions(tablet(*singles(2, 3)), c)
    assert too_many_versions(tablet(*singles(2, 4)), c)


def test_too_many_versions_message() -> None:
    assert too_many_versions_message(2001, 2000, 10012) == (
        "[E-235]failed to init rowset builder. version count: 2001, exceed limit: 2000, tablet: 10012. "
        "Please reduce the frequency of loading data or adjust the max_tablet_version_num or "
        "time_series_max_tablet_version_num in be.conf to a larger value.")


# ------------------------------------------------------------------------------------------- rounds


def test_nine_cumulative_rounds_then_one_base_round() -> None:
    kinds = [compaction_type_for_round(n, CONF) for n in range(30)]
    assert [n for n, k in enumerate(kinds) if k == BASE] == [9, 19, 29]
    assert kinds.count(CUMULATIVE) == 27
    assert {compaction_type_for_round(n, conf(cumulative_compaction_rounds_for_each_base_compaction_round=0))
            for n in range(5)} == {BASE}


# ------------------------------------------------------------------------------------ task selection


def cand(tablet_id: int, disk: str = "/d1", cumu: int = 5, base: int = 2, **kw: object) -> Candidate:
    return Candidate(tablet_id=tablet_id, disk=disk, cumulative_score=cumu, base_score=base,
                     priority_cumu=float(kw.pop("pc", cumu)), priority_base=float(kw.pop("pb", base)),
                     **kw)  # type: ignore[arg-type]


def test_select_the_highest_priority_tablet_per_disk() -> None:
    cands = [cand(1, cumu=5), cand(2, cumu=9), cand(3, cumu=9), cand(4, "/d2", cumu=3), cand(5, "/d2", cumu=4)]
    assert select_tasks(cands, {}, 0, CONF, NOW) == [(2, CUMULATIVE), (5, CUMULATIVE)]


def test_select_uses_the_round_type() -> None:
    cands = [cand(1, cumu=9, base=1), cand(2, cumu=1, base=7)]
    assert select_tasks(cands, {}, 8, CONF, NOW) == [(1, CUMULATIVE)]
    assert select_tasks(cands, {}, 9, CONF, NOW) == [(2, BASE)]


def test_select_skips_zero_scores() -> None:
    cands = [cand(1, cumu=0, base=0, pc=0, pb=0)]
    assert select_tasks(cands, {}, 0, CONF, NOW) == []
    assert select_tasks(cands, {}, 9, CONF, NOW) == []
    # a score weighted to zero is never picked either (Doris keeps the best above 0)
    assert select_tasks([cand(1, cumu=5, pc=0)], {}, 0, CONF, NOW) == []


def test_select_per_disk_limit() -> None:
    cands = [cand(1, "/d1"), cand(2, "/d2"), cand(3, "/d3")]
    running = {"/d1": 2, "/d2": 1}
    assert select_tasks(cands, running, 0, CONF, NOW) == [(2, CUMULATIVE), (3, CUMULATIVE)]
    assert select_tasks(cands, {"/d1": 2}, 0, conf(compaction_task_num_per_disk=3), NOW) == [
        (1, CUMULATIVE), (2, CUMULATIVE), (3, CUMULATIVE)]


def test_select_fast_disk_limit() -> None:
    cands = [cand(1, "/ssd"), cand(2, "/hdd")]
    assert select_tasks(cands, {"/ssd": 5, "/hdd": 2}, 0, CONF, NOW, fast_disks={"/ssd"}) == [(1, CUMULATIVE)]
    assert select_tasks(cands, {"/ssd": 8}, 0, CONF, NOW, fast_disks={"/ssd"}) == [(2, CUMULATIVE)]


def test_select_keeps_the_last_slot_for_cumulative_compaction() -> None:
    cands = [cand(1, base=9)]
    assert select_tasks(cands, {"/d1": 1}, 9, CONF, NOW, running_cumulative={"/d1": 0}) == []
    assert select_tasks(cands, {"/d1": 1}, 9, CONF, NOW, running_cumulative={"/d1": 1}) == [(1, BASE)]
    assert select_tasks(cands, {"/d1": 1}, 0, CONF, NOW, running_cumulative={"/d1": 0}) == [(1, CUMULATIVE)]


def test_select_failure_back_off_per_type() -> None:
    within = NOW - 600  # <= 600 s ago: still backed off
    cands = [cand(1, cumu=9, last_cumu_failure=within), cand(2, cumu=3)]
    assert select_tasks(cands, {}, 0, CONF, NOW) == [(2, CUMULATIVE)]
    assert select_tasks(cands, {}, 0, CONF, NOW + 1) == [(1, CUMULATIVE)]
    # a cumulative failure does not hold back a base compaction
    assert select_tasks([cand(1, base=9, last_cumu_failure=within)], {}, 9, CONF, NOW) == [(1, BASE)]
    # without per-type times, last_failure applies to both
    assert select_tasks([cand(1, base=9, last_failure=within)], {}, 9, CONF, NOW) == []


def test_select_picks_a_tablet_once_and_nothing_when_disabled() -> None:
    cands = [cand(1, cumu=9), cand(1, cumu=9)]
    assert select_tasks(cands, {}, 0, CONF, NOW) == [(1, CUMULATIVE)]
    assert select_tasks(cands, {}, 0, conf(disable_auto_compaction=True), NOW) == []


def test_candidate_from_state() -> None:
    rowsets = tablet(BIG_BASE, "[51-60] 600M nonoverlapping", *singles(61, 5))
    st = state(point=61, scan_frequency=1.0, last_base_failure=NOW - 10)
    c = candidate_for(st, "/d1", rowsets, conf(compaction_tablet_scan_frequency_factor=10))
    assert (c.cumulative_score, c.base_score) == (5, 2)
    assert (c.priority_cumu, c.priority_base) == (15.0, 12.0)
    assert c.failure_time(BASE) == NOW - 10 and c.failure_time(CUMULATIVE) is None
    assert select_tasks([c], {}, 9, CONF, NOW) == []
    assert select_tasks([c], {}, 0, CONF, NOW) == [(1, CUMULATIVE)]


# ------------------------------------------------------------------------------------------- permits


def test_permits_acquire_release() -> None:
    pool = PermitPool(10)
    assert pool.try_acquire(6) and pool.used == 6
    assert not pool.try_acquire(5)
    assert pool.try_acquire(4) and pool.used == 10
    pool.release(6)
    assert pool.used == 4
    with pytest.raises(ValueError):
        pool.release(5)
    with pytest.raises(ValueError):
        pool.acquire(-1)


def test_permits_block_until_released() -> None:
    pool = PermitPool(10)
    pool.acquire(8)
    got = threading.Event()

    def waiter() -> None:
        pool.acquire(5)
        got.set()

    t = threading.Thread(target=waiter)
    t.start()
    assert not got.wait(0.2)
    pool.release(8)
    assert got.wait(5)
    t.join(5)
    assert pool.used == 5


def test_permits_acquire_timeout() -> None:
    pool = PermitPool(3)
    pool.acquire(3)
    start = time.monotonic()
    assert pool.acquire(1, timeout=0.1) is False
    assert time.monotonic() - start >= 0.09
    assert pool.used == 3


def test_oversize_request_is_granted_when_nothing_is_held() -> None:
    pool = PermitPool(10)
    pool.acquire(1)
    assert not pool.try_acquire(25)
    got = threading.Event()
    t = threading.Thread(target=lambda: (pool.acquire(25), got.set()))
    t.start()
    assert not got.wait(0.2)
    pool.release(1)
    assert got.wait(5)
    t.join(5)
    assert pool.used == 25
    assert not pool.try_acquire(1)  # it holds more than the total: everything else waits
    pool.release(25)
    assert pool.try_acquire(10)


def test_set_total_wakes_waiters() -> None:
    pool = PermitPool(4)
    pool.acquire(4)
    got = threading.Event()
    t = threading.Thread(target=lambda: (pool.acquire(3), got.set()))
    t.start()
    assert not got.wait(0.1)
    pool.set_total(8)
    assert got.wait(5)
    t.join(5)


def test_permits_are_thread_safe() -> None:
    pool = PermitPool(10)
    lock = threading.Lock()
    in_use = [0]
    peak = [0]
    errors: list[BaseException] = []

    def worker(n: int) -> None:
        try:
            for _ in range(200):
                pool.acquire(n)
                with lock:
                    in_use[0] += n
                    peak[0] = max(peak[0], in_use[0])
                with lock:
                    in_use[0] -= n
                pool.release(n)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(n,)) for n in (3, 4, 5, 6, 7)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not errors
    assert all(not t.is_alive() for t in threads)
    assert pool.used == 0
    assert peak[0] <= 10


def test_skip_window_holds_back_only_the_newest_loads() -> None:
    from storage.compaction.policy import outside_skip_window

    now = 1000.0
    rowsets = [Rowset(f"r{v}", 1, v, v, 10, 1, 100, v, created_at=now - 100 + v) for v in range(2, 102)]
    default = CompactionConfig()  # window 30 s, at most 20 held
    free = outside_skip_window(rowsets, 2, default, now)
    assert [rs.start_version for rs in free] == list(range(2, 82))  # the newest 20 stay for the next round
    unbounded = CompactionConfig(cumulative_compaction_skip_window_max_rowsets=0)
    assert [rs.start_version for rs in outside_skip_window(rowsets, 2, unbounded, now)] == list(range(2, 70))
    few = rowsets[:75]  # seven loads in the window: all held back, as Doris's window alone does
    assert [rs.start_version for rs in outside_skip_window(few, 2, default, now)] == list(range(2, 70))
