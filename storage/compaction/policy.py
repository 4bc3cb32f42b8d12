"""Doris's size-based compaction rules on rowset metadata alone (seed 002, doris-reference §9).

Pure functions over `Rowset` rows and a tablet's in-memory `TabletCompactionState`: no file I/O, no
catalog, no threads. The executor (merge.py / manager.py) calls them and stores what they return.

One cumulative compaction, as Doris's CumulativeCompaction runs it:

    state.cumulative_point = calculate_cumulative_point(rowsets, state, config)
    plan = plan_cumulative(rowsets, state, config, now)       # candidates, inputs, score (= permits)
    if not plan.inputs:                                       # nothing to merge; Doris may still move the point
        if plan.point_without_merge is not None: state.cumulative_point = plan.point_without_merge
    else:
        output = merge(plan.inputs)
        state.cumulative_point = update_cumulative_point(plan.inputs, output, rowsets_after, state, config,
                                                         last_delete_version=plan.last_delete_version)

Versions. Doris's tablets start with an empty base rowset [0-1]; dorislite's start with no rowset at all
(the first load is version 2). So "the base rowset" here is the tablet's lowest-version rowset, wherever
Doris says "start_version == 0": the promotion size comes from it, it is exempt from the promotion-size
test of the cumulative point calculation, and base compaction merges into it (outputs cover [a-b]).

Rowset sizes are `Rowset.data_size` (Doris's total_disk_size); a rowset's compaction score is 1, or its
segment count when its segments overlap (RowsetMeta::get_compaction_score).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from storage.catalog.model import Rowset

MB = 1024 * 1024
NOT_CALCULATED = -1  # Doris's Tablet::K_INVALID_CUMULATIVE_POINT
NO_DELETE = -1  # Doris's last_delete_version {-1, -1}
CUMULATIVE = "cumulative"
BASE = "base"


# --------------------------------------------------------------------------------------------- config


@dataclass(frozen=True)
class CompactionConfig:
    """The compaction keys of be.conf, Doris 2.x names, the seed's defaults (conf/be.conf lists the 1.x
    names the seed uses). Sizes are in MB as in be.conf; the *_bytes properties convert."""

    cumulative_compaction_policy: str = "size_based"  # only size_based: num_based was dropped by Doris
    compaction_promotion_size_mbytes: int = 1024
    compaction_promotion_ratio: float = 0.05
    compaction_promotion_min_size_mbytes: int = 64  # the seed's default (Doris 2.x: 128)
    compaction_min_size_mbytes: int = 64
    cumulative_compaction_min_deltas: int = 5
    cumulative_compaction_max_deltas: int = 1000
    cumulative_compaction_skip_window_seconds: int = 30
    # ours: the window holds back at most this many of the newest loads (0: no limit). At a load every 100 ms
    # Doris's window alone would leave 300 rowsets for every read to merge; read holds already keep the
    # inputs a running query needs, which is what the window protects.
    cumulative_compaction_skip_window_max_rowsets: int = 20
    base_compaction_min_rowset_num: int = 5
    base_compaction_min_data_ratio: float = 0.3
    base_compaction_interval_seconds_since_last_operation: int = 86400
    total_permits_for_compaction_score: int = 10000
    compaction_task_num_per_disk: int = 2  # the seed's default (Doris 2.x: 4)
    compaction_task_num_per_fast_disk: int = 8
    max_base_compaction_threads: int = 4  # -1: the executor decides (one per disk in Doris)
    max_cumu_compaction_threads: int = 10
    cumulative_compaction_rounds_for_each_base_compaction_round: int = 9
    compaction_tablet_scan_frequency_factor: int = 0  # k1
    compaction_tablet_compaction_score_factor: int = 1  # k2
    generate_compaction_tasks_interval_ms: int = 10  # the seed's generate_compaction_tasks_min_interval_ms
    disable_auto_compaction: bool = False
    min_compaction_failure_interval_sec: int = 600
    max_tablet_version_num: int = 2000
    time_series_max_tablet_version_num: int = 20000  # tables with "compaction_policy" = "time_series"

    @classmethod
    def from_mapping(cls, conf: Mapping[str, str]) -> CompactionConfig:
        """Typed config from be.conf strings. Missing or empty keys keep their defaults, other keys are
        ignored; a value that does not parse or is out of range raises ValueError naming the key."""
        values: dict[str, object] = {}
        for f in dataclasses.fields(cls):
            raw = conf.get(f.name)
            if raw is None or str(raw).strip() == "":
                continue
            values[f.name] = _parse_value(f.name, str(raw).strip(), type(f.default))
        config = cls(**values)
        config.validate()
        return config

    def validate(self) -> None:
        if self.cumulative_compaction_policy != "size_based":
            raise ValueError(f"be.conf cumulative_compaction_policy = {self.cumulative_compaction_policy!r}: "
                             "only size_based is supported")
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if isinstance(value, bool) or isinstance(value, str):
                continue
            if f.name in ("max_base_compaction_threads", "max_cumu_compaction_threads"):
                if value != -1 and value < 1:
                    raise ValueError(f"be.conf {f.name} = {value}: must be -1 (auto) or at least 1")
            elif value < 0:
                raise ValueError(f"be.conf {f.name} = {value}: must not be negative")
        # Doris's validators: one slot each for base and cumulative compaction
        for name in ("compaction_task_num_per_disk", "compaction_task_num_per_fast_disk"):
            if getattr(self, name) < 2:
                raise ValueError(f"be.conf {name} = {getattr(self, name)}: must be at least 2")
        if self.compaction_promotion_ratio > 1:
            raise ValueError(f"be.conf compaction_promotion_ratio = {self.compaction_promotion_ratio}: "
                             "must be between 0 and 1")

    @property
    def promotion_size_bytes(self) -> int:
        return self.compaction_promotion_size_mbytes * MB

    @property
    def promotion_min_size_bytes(self) -> int:
        return self.compaction_promotion_min_size_mbytes * MB

    @property
    def min_size_bytes(self) -> int:
        return self.compaction_min_size_mbytes * MB


def _parse_value(key: str, raw: str, kind: type) -> object:
    if kind is bool:
        lowered = raw.lower()
        if lowered not in ("true", "false"):
            raise ValueError(f"be.conf {key} = {raw!r}: expected true or false")
        return lowered == "true"
    if kind is int:
        try:
            return int(raw)
        except ValueError:
            raise ValueError(f"be.conf {key} = {raw!r}: expected an integer") from None
    if kind is float:
        try:
            return float(raw)
        except ValueError:
            raise ValueError(f"be.conf {key} = {raw!r}: expected a number") from None
    return raw.lower()


# ------------------------------------------------------------------------------------- tablet state


@dataclass
class TabletCompactionState:
    """Per tablet, in memory (Doris keeps it in the Tablet object; a restart recalculates the point).
    Times are unix seconds."""

    tablet_id: int
    cumulative_point: int = NOT_CALCULATED
    last_cumu_success: float | None = None
    last_cumu_failure: float | None = None
    last_base_success: float | None = None
    last_base_failure: float | None = None
    scan_frequency: float = 0.0  # recent scans per second, fed by the query path


# ---------------------------------------------------------------------------------- rowset helpers


def is_delete(rs: Rowset) -> bool:
    return rs.kind == "DELETE"


def is_singleton(rs: Rowset) -> bool:
    """A rowset no compaction produced: one load's version [n-n]."""
    return rs.start_version == rs.end_version


def is_segments_overlapping(rs: Rowset) -> bool:
    """Doris's RowsetMeta::is_segments_overlapping: a rowset of 0 or 1 segment never overlaps itself."""
    return rs.overlapping and rs.num_segments > 1


def rowset_score(rs: Rowset) -> int:
    """Doris's get_compaction_score: the segments a merge must open side by side."""
    return rs.num_segments if is_segments_overlapping(rs) else 1


def sort_by_version(rowsets: Sequence[Rowset]) -> list[Rowset]:
    return sorted(rowsets, key=lambda r: (r.start_version, r.end_version))


def base_rowset(rowsets: Sequence[Rowset]) -> Rowset | None:
    """The lowest-version rowset (Doris's [0-x]; see the module docstring)."""
    return min(rowsets, key=lambda r: (r.start_version, r.end_version)) if rowsets else None


def consecutive_prefix(rowsets: Sequence[Rowset]) -> list[Rowset]:
    """The version-sorted rowsets up to the first missing version."""
    out: list[Rowset] = []
    for rs in rowsets:
        if out and rs.start_version != out[-1].end_version + 1:
            break
        out.append(rs)
    return out


def has_version_gap(rowsets: Sequence[Rowset]) -> bool:
    return len(consecutive_prefix(rowsets)) != len(rowsets)


# ------------------------------------------------------------------------------ promotion and levels


def promotion_size(base_rowset_size: int, config: CompactionConfig) -> int:
    """base size x compaction_promotion_ratio, clamped to [min_size, promotion_size] (seed 3.1, figure
    3-2). The upper bound is tested first, as Doris does."""
    size = int(base_rowset_size * config.compaction_promotion_ratio)
    if size >= config.promotion_size_bytes:
        return config.promotion_size_bytes
    if size <= config.promotion_min_size_bytes:
        return config.promotion_min_size_bytes
    return size


def tablet_promotion_size(rowsets: Sequence[Rowset], config: CompactionConfig) -> int:
    base = base_rowset(rowsets)
    return promotion_size(base.data_size if base is not None else 0, config)


@functools.lru_cache(maxsize=32)
def size_levels(config: CompactionConfig) -> tuple[int, ...]:
    """promotion_size / 2, halved while >= compaction_min_size (seed 3.3 note, figure 3-3): with the
    defaults 512, 256, 128 and 64 MB; anything smaller is level 0."""
    levels: list[int] = []
    size = config.promotion_size_bytes // 2
    while size >= config.min_size_bytes and size > 0:
        levels.append(size)
        size //= 2
    return tuple(levels)


def size_level(size: int, config: CompactionConfig) -> int:
    """level[n] such that level[n-1] > size >= level[n]; 0 below the smallest level."""
    for level in size_levels(config):
        if size >= level:
            return level
    return 0


# -------------------------------------------------------------------------------- cumulative point


def calculate_cumulative_point(rowsets: Sequence[Rowset], state: TabletCompactionState,
                               config: CompactionConfig) -> int:
    """The tablet's cumulative point: the one it has, or, when it has none yet (-1), the initial one
    (seed 3.1). Like Doris, the point is calculated once; compactions move it afterwards. (The seed's
    wording "if the point is -1 it stays -1, otherwise calculate" inverts Doris's condition, which would
    leave every tablet without a point; Doris's code is what is implemented.)

    Walking up from the base rowset, the point stops
    a. at a missing version: after the previous rowset;
    b. at a rowset that is not a delete version and is a singleton (no compaction made it) or has
       overlapping segments: at its start version;
    c. at a rowset that is not a delete version, not the base rowset, and smaller than the promotion size:
       at its start version (Doris exempts the base rowset, the seed omits that; without it a small base
       would never stay on the base side).
    Delete versions never stop the walk."""
    if state.cumulative_point != NOT_CALCULATED:
        return state.cumulative_point
    ordered = sort_by_version(rowsets)
    if not ordered:
        return NOT_CALCULATED
    base = ordered[0]
    promotion = promotion_size(base.data_size, config)
    point = NOT_CALCULATED
    prev_end = base.start_version - 1
    for index, rs in enumerate(ordered):
        if rs.start_version > prev_end + 1:
            break  # a hole: the point stays right after the previous rowset
        if not is_delete(rs):
            if is_segments_overlapping(rs) or is_singleton(rs):
                return rs.start_version
            if index > 0 and rs.data_size < promotion:
                return rs.start_version
        prev_end = rs.end_version
        point = prev_end + 1
    return point


def cumulative_candidates(rowsets: Sequence[Rowset], state: TabletCompactionState, config: CompactionConfig,
                          now: float) -> list[Rowset]:
    """Seed 3.2 and 3.3(1): the rowsets at or after the cumulative point that were published more than
    cumulative_compaction_skip_window_seconds ago or are compaction outputs (start != end), in version
    order, cut at the first missing version."""
    point = calculate_cumulative_point(rowsets, state, config)
    return consecutive_prefix(outside_skip_window(rowsets, point, config, now))


def outside_skip_window(rowsets: Sequence[Rowset], point: int, config: CompactionConfig, now: float
                        ) -> list[Rowset]:
    """The rowsets from `point` on, in version order, that the skip window does not hold back: compaction
    outputs, loads published more than cumulative_compaction_skip_window_seconds ago, and, when more loads than
    cumulative_compaction_skip_window_max_rowsets arrived within the window, all but the newest of them."""
    after = [rs for rs in sort_by_version(rowsets) if rs.start_version >= point]
    window = config.cumulative_compaction_skip_window_seconds
    recent = [i for i, rs in enumerate(after) if is_singleton(rs) and rs.created_at + window >= now]
    limit = config.cumulative_compaction_skip_window_max_rowsets
    held = set(recent[-limit:] if limit else recent)
    return [rs for i, rs in enumerate(after) if i not in held]


# ------------------------------------------------------------------------------ cumulative inputs


@dataclass(frozen=True)
class CumulativePlan:
    """What one cumulative compaction of a tablet would do, decided on metadata alone.

    `score` is the inputs' compaction score: the permits the task requests. `last_delete_version` is the
    start version of the last delete rowset the input walk met (-1: none); pass it to
    update_cumulative_point. When there are no inputs, `point_without_merge` is the point Doris moves to
    anyway (a delete version to hand over to base compaction, or a tablet idle for
    base_compaction_interval_seconds_since_last_operation); None leaves the point. `start_idle_clock`: the
    tablet has no success time of either kind yet; Doris then stamps both with `now`, which starts the
    idle clock of the rule above."""

    cumulative_point: int
    promotion_size: int
    candidates: tuple[Rowset, ...]
    inputs: tuple[Rowset, ...]
    score: int
    last_delete_version: int = NO_DELETE
    point_without_merge: int | None = None
    start_idle_clock: bool = False
    reason: str = ""


def _pick_size_based(candidates: Sequence[Rowset], promotion: int, max_score: int,
                     config: CompactionConfig) -> tuple[list[Rowset], int, int]:
    """SizeBasedCumulativeCompactionPolicy::pick_input_rowsets (seed 3.3(2)-(3)): (inputs, score,
    last delete version)."""
    inputs: list[Rowset] = []
    score = 0
    total = 0
    last_delete = NO_DELETE
    for rs in candidates:
        if is_delete(rs):
            # a delete version is recorded; it ends the walk after some inputs, else it is skipped
            last_delete = rs.start_version
            if inputs:
                break
            score, total = 0, 0
            continue
        if score >= max_score:  # checked before adding: the last input may overshoot the limit
            break
        score += rowset_score(rs)
        total += rs.data_size
        inputs.append(rs)

    if total >= promotion:
        return inputs, score, last_delete

    if last_delete != NO_DELETE:
        # compact before the delete directly, unless that would only rewrite one sorted rowset
        if len(inputs) == 1 and not is_segments_overlapping(inputs[0]):
            return [], 0, last_delete
        return inputs, score, last_delete

    # level trimming: drop a leading rowset whose size level is above that of everything after it
    untrimmed, untrimmed_score = list(inputs), score
    start = 0
    while start < len(inputs):
        size = inputs[start].data_size
        if size_level(size, config) <= size_level(total - size, config):
            break
        total -= size
        score -= rowset_score(inputs[start])
        start += 1
    inputs = inputs[start:]
    if not inputs:
        if untrimmed_score >= max_score:
            # Doris 2.x: the score limit cuts the walk at the same place every time and trimming empties
            # it, so the tablet would never compact again; merge the untrimmed inputs instead
            return untrimmed, untrimmed_score, last_delete
        return [], 0, last_delete

    # too little to be worth a merge: small in both bytes and segments, or one big sorted rowset
    if total < config.min_size_bytes and score < config.cumulative_compaction_min_deltas:
        return [], 0, last_delete
    if total >= config.min_size_bytes and len(inputs) == 1 and not is_segments_overlapping(inputs[0]):
        return [], 0, last_delete
    return inputs, score, last_delete


def plan_cumulative(rowsets: Sequence[Rowset], state: TabletCompactionState, config: CompactionConfig,
                    now: float, max_score: int | None = None) -> CumulativePlan:
    """The cumulative compaction of one tablet (seed 3.1-3.3, Doris's pick_rowsets_to_compact).
    `max_score` caps the inputs' score (default cumulative_compaction_max_deltas)."""
    point = calculate_cumulative_point(rowsets, state, config)
    promotion = tablet_promotion_size(rowsets, config)
    candidates = cumulative_candidates(rowsets, state, config, now)
    limit = config.cumulative_compaction_max_deltas if max_score is None else max_score
    inputs, score, last_delete = _pick_size_based(candidates, promotion, limit, config)
    plan = CumulativePlan(point, promotion, tuple(candidates), tuple(inputs), score, last_delete)
    if inputs:
        return dataclasses.replace(plan, reason="picked")
    if not candidates:
        return dataclasses.replace(plan, reason="no candidate rowsets")
    if last_delete != NO_DELETE:
        # hand the delete version (and what precedes it) over to base compaction
        return dataclasses.replace(plan, point_without_merge=last_delete + 1,
                                   reason="a delete version with nothing to merge before it")
    # idle tablet: after a day without any compaction, merge what overlaps or promote what is there
    if state.last_cumu_success is None and state.last_base_success is None:
        return dataclasses.replace(plan, start_idle_clock=True, reason="not enough to merge")
    idle = config.base_compaction_interval_seconds_since_last_operation
    cumu_idle = now - (state.last_cumu_success or 0.0)
    base_idle = now - (state.last_base_success or 0.0)
    if cumu_idle > idle and base_idle > idle:
        if any(is_segments_overlapping(rs) for rs in candidates):
            return dataclasses.replace(plan, inputs=tuple(candidates),
                                       score=sum(rowset_score(rs) for rs in candidates),
                                       reason="idle tablet with overlapping rowsets")
        # end_version + 1 (Doris: start_version + 1): the same for singletons, never inside a rowset
        return dataclasses.replace(plan, point_without_merge=candidates[-1].end_version + 1,
                                   reason="idle tablet")
    return dataclasses.replace(plan, reason="not enough to merge")


def pick_cumulative_inputs(rowsets: Sequence[Rowset], state: TabletCompactionState, config: CompactionConfig,
                           now: float, max_score: int | None = None) -> list[Rowset]:
    """The rowsets one cumulative compaction merges, [] when there is nothing to do (plan_cumulative
    also says where the point goes when nothing is merged)."""
    return list(plan_cumulative(rowsets, state, config, now, max_score).inputs)


def _derived_last_delete(inputs: Sequence[Rowset], output: Rowset, rowsets_after: Sequence[Rowset],
                         state: TabletCompactionState) -> int:
    """The delete version the input walk met, recovered from the tablet after the merge: a delete rowset
    skipped before the inputs, or the one right after them that ended the walk (taken as met even if the
    skip window hid it at pick time: pass the plan's last_delete_version to be exact)."""
    point = state.cumulative_point
    if point == NOT_CALCULATED:
        point = min((r.start_version for r in [*rowsets_after, *inputs]), default=0)
    first = min((r.start_version for r in inputs), default=output.start_version)
    found = NO_DELETE
    for rs in sort_by_version(rowsets_after):
        if not is_delete(rs):
            continue
        if point <= rs.start_version and rs.end_version < first:
            found = rs.start_version
        elif rs.start_version == output.end_version + 1:
            found = rs.start_version
    return found


def update_cumulative_point(inputs: Sequence[Rowset], output: Rowset, rowsets_after: Sequence[Rowset],
                            state: TabletCompactionState, config: CompactionConfig,
                            last_delete_version: int | None = None) -> int:
    """The point after a cumulative compaction merged `inputs` into `output` (seed 3.5):
    (1) the walk met a delete version: right after the output, whatever its size (base compaction is the
        one that applies deletes);
    (2) otherwise right after the output if it reached the promotion size (a promotion), else unchanged.
    `rowsets_after` is the tablet after the swap. `last_delete_version` comes from the plan; None
    recovers it from the tablet (see _derived_last_delete). The promotion size is the one the pick used:
    from the base rowset before the merge."""
    if last_delete_version is None:
        last_delete_version = _derived_last_delete(inputs, output, rowsets_after, state)
    if last_delete_version != NO_DELETE:
        return output.end_version + 1
    base = base_rowset([*inputs, *rowsets_after])  # an input when the base itself was merged
    promotion = promotion_size(base.data_size if base is not None else 0, config)
    if output.data_size >= promotion:
        return output.end_version + 1
    if state.cumulative_point != NOT_CALCULATED:
        return state.cumulative_point
    return calculate_cumulative_point(rowsets_after, state, config)


# ----------------------------------------------------------------------------------- base inputs


@dataclass(frozen=True)
class BasePlan:
    inputs: tuple[Rowset, ...]
    reason: str


def plan_base(rowsets: Sequence[Rowset], state: TabletCompactionState, config: CompactionConfig,
              now: float) -> BasePlan:
    """Seed 4.1-4.2: the rowsets before the cumulative point, if base compaction is due. In order:
    (1) consecutive versions, (2) no rowset with overlapping segments, (3) not just [x-1] + one rowset
    (and at least two rowsets: nothing to merge otherwise), then due if (4) more than
    base_compaction_min_rowset_num rowsets, or (5) the rowsets after the base are more than
    base_compaction_min_data_ratio of the base's size, or (6) the last successful base compaction is more
    than base_compaction_interval_seconds_since_last_operation ago (before one has run in this process:
    since the base rowset was written, which is what Doris measures). The thresholds are strict, as
    the seed's "超过" and Doris's code."""
    point = calculate_cumulative_point(rowsets, state, config)
    inputs = sort_by_version([rs for rs in rowsets if rs.start_version < point])
    if len(inputs) <= 1:
        return BasePlan((), "fewer than two rowsets before the cumulative point")
    if has_version_gap(inputs):
        return BasePlan((), "missing versions before the cumulative point")
    if any(is_segments_overlapping(rs) for rs in inputs):
        return BasePlan((), "a rowset before the cumulative point has overlapping segments")
    if len(inputs) == 2 and inputs[0].end_version == 1:
        return BasePlan((), "only the initial rowset [x-1] and one other rowset")
    if len(inputs) > config.base_compaction_min_rowset_num:
        return BasePlan(tuple(inputs), f"{len(inputs)} rowsets > base_compaction_min_rowset_num "
                                       f"{config.base_compaction_min_rowset_num}")
    base_size = inputs[0].data_size or 1  # an empty base: Doris divides by 1
    cumulative_size = sum(rs.data_size for rs in inputs[1:])
    ratio = cumulative_size / base_size
    if ratio > config.base_compaction_min_data_ratio:
        return BasePlan(tuple(inputs), f"cumulative/base size ratio {ratio:.3f} > base_compaction_min_data_ratio "
                                       f"{config.base_compaction_min_data_ratio}")
    since = state.last_base_success if state.last_base_success is not None else inputs[0].created_at
    interval = now - since
    if interval > config.base_compaction_interval_seconds_since_last_operation:
        return BasePlan(tuple(inputs), f"{interval:.0f}s since the last base compaction")
    return BasePlan((), "base compaction not due")


def pick_base_inputs(rowsets: Sequence[Rowset], state: TabletCompactionState, config: CompactionConfig,
                     now: float) -> list[Rowset]:
    """The rowsets a base compaction merges into [base.start-b], [] when it is not due."""
    return list(plan_base(rowsets, state, config, now).inputs)


# ---------------------------------------------------------------------------------------- scores


def cumulative_score(rowsets: Sequence[Rowset], state: TabletCompactionState, config: CompactionConfig) -> int:
    """Seed 3.6: the score of the rowsets at or after the point (the whole of it when they reach the
    promotion size, else after the same level trimming as the pick). No skip window: the score says
    what is waiting, the pick what can go now. A tablet without a point is scored at its calculated one."""
    if not rowsets:
        return 0
    point = calculate_cumulative_point(rowsets, state, config)
    promotion = tablet_promotion_size(rowsets, config)
    part = sort_by_version([rs for rs in rowsets if rs.start_version >= point])
    total = sum(rs.data_size for rs in part)
    score = sum(rowset_score(rs) for rs in part)
    if total >= promotion:
        return score
    for rs in part:
        if size_level(rs.data_size, config) <= size_level(total - rs.data_size, config):
            break
        total -= rs.data_size
        score -= rowset_score(rs)
    return score


def base_score(rowsets: Sequence[Rowset], state: TabletCompactionState, config: CompactionConfig) -> int:
    """Seed 4.4: the score of the rowsets before the cumulative point (the base rowset included)."""
    if not rowsets:
        return 0
    point = calculate_cumulative_point(rowsets, state, config)
    return sum(rowset_score(rs) for rs in rowsets if rs.start_version < point)


def tablet_priority(state: TabletCompactionState, score: int, config: CompactionConfig) -> float:
    """Seed 2.1's tablet score: k1 x scan frequency + k2 x compaction score."""
    return (config.compaction_tablet_scan_frequency_factor * state.scan_frequency
            + config.compaction_tablet_compaction_score_factor * score)


# ------------------------------------------------------------------------------------ version limit


def too_many_versions(rowsets: Sequence[Rowset], config: CompactionConfig, limit: int | None = None) -> bool:
    """A load into this tablet fails with -235 (doris-reference §9.5); `limit` overrides
    max_tablet_version_num (a time-series table's)."""
    return len(rowsets) > (config.max_tablet_version_num if limit is None else limit)


def too_many_versions_message(version_count: int, limit: int, tablet_id: int) -> str:
    """Doris 2.x's TOO_MANY_VERSION text as the client sees it."""
    return (f"[E-235]failed to init rowset builder. version count: {version_count}, exceed limit: {limit}, "
            f"tablet: {tablet_id}. Please reduce the frequency of loading data or adjust the "
            "max_tablet_version_num or time_series_max_tablet_version_num in be.conf to a larger value.")

