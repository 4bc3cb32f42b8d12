"""Which tablets the compaction producer submits, and the permits that bound the work in flight (seed 2).

Pure: no threads of its own. The producer (manager.py) runs one round every
generate_compaction_tasks_interval_ms: `select_tasks` picks at most one tablet per disk, the one with the
highest tablet score (k1 x scan frequency + k2 x compaction score) among the eligible, cumulative in nine
rounds out of ten; each task requests its compaction score in permits from the `PermitPool` before it
runs and releases them when it ends.
"""

from __future__ import annotations

import threading
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from storage.catalog.model import Rowset
from storage.compaction.policy import (
    BASE,
    CUMULATIVE,
    CompactionConfig,
    TabletCompactionState,
    base_score,
    cumulative_score,
    tablet_priority,
)

# --------------------------------------------------------------------------------------- permits


class PermitPool:
    """total_permits_for_compaction_score permits; a task holds as many as its compaction score (the
    segments it merges at once), which bounds compaction memory (seed 2.2). A request larger than the
    total is granted once nothing is held, so that tablet still compacts (Doris's
    CompactionPermitLimiter)."""

    def __init__(self, total: int) -> None:
        if total < 0:
            raise ValueError(f"total_permits_for_compaction_score = {total}: must not be negative")
        self._total = total
        self._used = 0
        self._cond = threading.Condition()

    @property
    def total(self) -> int:
        return self._total

    @property
    def used(self) -> int:
        with self._cond:
            return self._used

    def set_total(self, total: int) -> None:
        """be.conf changed at runtime; waiters re-check."""
        if total < 0:
            raise ValueError(f"total_permits_for_compaction_score = {total}: must not be negative")
        with self._cond:
            self._total = total
            self._cond.notify_all()

    def _grantable(self, permits: int) -> bool:
        if permits > self._total:
            return self._used == 0
        return self._used + permits <= self._total

    def acquire(self, permits: int, timeout: float | None = None) -> bool:
        """Block until `permits` can be granted (False if `timeout` seconds pass first)."""
        _check(permits)
        with self._cond:
            if not self._cond.wait_for(lambda: self._grantable(permits), timeout):
                return False
            self._used += permits
            return True

    def try_acquire(self, permits: int) -> bool:
        _check(permits)
        with self._cond:
            if not self._grantable(permits):
                return False
            self._used += permits
            return True

    def release(self, permits: int) -> None:
        _check(permits)
        with self._cond:
            if permits > self._used:
                raise ValueError(f"releasing {permits} compaction permits, {self._used} held")
            self._used -= permits
            self._cond.notify_all()


def _check(permits: int) -> None:
    if permits < 0:
        raise ValueError(f"permits must not be negative: {permits}")


# ---------------------------------------------------------------------------------------- rounds


def compaction_type_for_round(round_no: int, config: CompactionConfig) -> str:
    """Rounds 0..k-1 are cumulative, round k is base, then again (k =
    cumulative_compaction_rounds_for_each_base_compaction_round, 9: rounds 9, 19, 29 ... are base)."""
    k = config.cumulative_compaction_rounds_for_each_base_compaction_round
    return BASE if round_no % (k + 1) == k else CUMULATIVE


@dataclass(frozen=True)
class Candidate:
    """One tablet as the producer sees it. The back-off uses the failure time of the round's type
    (last_cumu_failure / last_base_failure); when neither is given, `last_failure` applies to both."""

    tablet_id: int
    disk: str
    cumulative_score: int
    base_score: int
    priority_cumu: float
    priority_base: float
    last_failure: float | None = None
    last_cumu_failure: float | None = None
    last_base_failure: float | None = None

    def score(self, kind: str) -> int:
        return self.cumulative_score if kind == CUMULATIVE else self.base_score

    def priority(self, kind: str) -> float:
        return self.priority_cumu if kind == CUMULATIVE else self.priority_base

    def failure_time(self, kind: str) -> float | None:
        if self.last_cumu_failure is None and self.last_base_failure is None:
            return self.last_failure
        return self.last_cumu_failure if kind == CUMULATIVE else self.last_base_failure


def candidate_for(state: TabletCompactionState, disk: str, rowsets: Sequence[Rowset],
                  config: CompactionConfig, scores: tuple[int, int] | None = None) -> Candidate:
    """The tablet's scores and priorities of both types, and its failure times; `scores` (cumulative,
    base) when the table's policy computed them (default: the size-based ones)."""
    cumu, base = scores if scores is not None else (cumulative_score(rowsets, state, config),
                                                    base_score(rowsets, state, config))
    failures = [t for t in (state.last_cumu_failure, state.last_base_failure) if t is not None]
    return Candidate(
        tablet_id=state.tablet_id, disk=disk, cumulative_score=cumu, base_score=base,
        priority_cumu=tablet_priority(state, cumu, config), priority_base=tablet_priority(state, base, config),
        last_failure=max(failures) if failures else None,
        last_cumu_failure=state.last_cumu_failure, last_base_failure=state.last_base_failure,
    )


def _eligible(c: Candidate, kind: str, config: CompactionConfig, now: float) -> bool:
    if c.score(kind) <= 0 or c.priority(kind) <= 0:  # Doris keeps the best tablet score above 0
        return False
    failed = c.failure_time(kind)
    return failed is None or now - failed > config.min_compaction_failure_interval_sec


def select_tasks(candidates: Sequence[Candidate], running: Mapping[str, int], round_no: int,
                 config: CompactionConfig, now: float, *, fast_disks: Collection[str] = (),
                 running_cumulative: Mapping[str, int] | None = None) -> list[tuple[int, str]]:
    """One producer round: (tablet_id, "cumulative" | "base") for at most one tablet per disk (seed
    2.1), the highest priority eligible tablet of the round's type (ties: the lower tablet id). A disk
    whose running tasks (`running`, both types) reached compaction_task_num_per_disk
    (compaction_task_num_per_fast_disk for `fast_disks`) is skipped. Ineligible: a zero score, a failure
    of the round's type within min_compaction_failure_interval_sec. With `running_cumulative` (running
    cumulative tasks per disk), a base task does not take a disk's last slot unless a cumulative task
    already runs there (Doris keeps one slot for cumulative compaction). `candidates` should leave out
    tablets already submitted; each tablet is picked at most once."""
    if config.disable_auto_compaction:
        return []
    kind = compaction_type_for_round(round_no, config)
    by_disk: dict[str, list[Candidate]] = {}
    for c in candidates:
        by_disk.setdefault(c.disk, []).append(c)
    picked: list[tuple[int, str]] = []
    seen: set[int] = set()
    for disk in sorted(by_disk):
        limit = (config.compaction_task_num_per_fast_disk if disk in fast_disks
                 else config.compaction_task_num_per_disk)
        count = running.get(disk, 0)
        if count >= limit:
            continue
        if (kind == BASE and running_cumulative is not None and count >= limit - 1
                and running_cumulative.get(disk, 0) == 0):
            continue
        eligible = [c for c in by_disk[disk] if c.tablet_id not in seen and _eligible(c, kind, config, now)]
        if not eligible:
            continue
        best = max(eligible, key=lambda c: (c.priority(kind), -c.tablet_id))
        seen.add(best.tablet_id)
        picked.append((best.tablet_id, kind))
    return picked
