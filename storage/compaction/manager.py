"""The compaction producer and its workers (seed 002 §2): which tablet compacts when, and what it did.

One producer thread per process. Each round (every generate_compaction_tasks_interval_ms; after a round
that picked nothing it sleeps up to 2 s, or until a task ends or a load asks for one) builds a
`Candidate` per tablet of the one "disk" (the engine's storage root) from its visible rowsets, leaving out
tablets already running, tablets of tables with PROPERTIES "disable_auto_compaction" = "true" and indexes
still being built (a rollup's SHADOW index); `select_tasks` picks (policy: 9 cumulative rounds to 1 base
round, one task per disk per round, compaction_task_num_per_disk, the failure back-off). Each task is
prepared on the producer thread (the policy picks its inputs; their compaction score is its permits), then
the producer waits for its permits from the `PermitPool` and hands it to the cumulative or the base worker
pool (max_cumu_compaction_threads / max_base_compaction_threads). A task that picks nothing is skipped; only a
compaction that fails backs its tablet off for min_compaction_failure_interval_sec, as in Doris.

be.conf disable_auto_compaction = true stops the producer; `trigger` (the HTTP API's POST
/api/compaction/run) and loads near max_tablet_version_num still run compactions, as in Doris.

Per tablet, `TabletCompactionState` (cumulative point, last success / failure times) lives in memory, the
point calculated on first use, as Doris's Tablet does. The policy sees a tablet's visible rowsets plus, for
every run of versions the tablet never received (a load that wrote no rows into this bucket), one empty
virtual rowset: Doris writes an empty rowset into every tablet for every load, dorislite writes none, and
the policy's rules stop at missing versions. A merge drops the virtual inputs and its output covers them.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime

from storage.catalog.compaction import CompactionConflict
from storage.catalog.model import OlapTable, Rowset, Tablet
from storage.compaction.merge import CompactionOutput, compact_rowsets
from storage.compaction.policy import (
    BASE,
    CUMULATIVE,
    NOT_CALCULATED,
    CompactionConfig,
    TabletCompactionState,
    rowset_score,
)
from storage.compaction.scheduling import PermitPool, candidate_for, select_tasks
from storage.compaction.time_series import policy_for
from storage.compaction.version_limit import tablet_visible_rowsets
from storage.engine import StorageEngine
from storage.errors import StorageError

log = logging.getLogger(__name__)

VIRTUAL_PREFIX = "virtual:"
IDLE_SLEEP_SECONDS = 2.0  # a round that picked nothing sleeps until a task ends or a load asks, at most 2 s
CUMULATIVE_NO_SUITABLE_VERSION = -2000  # Doris's status codes for "nothing to merge"
BE_NO_SUITABLE_VERSION = -808
TABLE_PROPERTY = "disable_auto_compaction"


class NoSuitableVersion(StorageError):
    """The policy picked nothing to merge."""

    def __init__(self, kind: str, reason: str) -> None:
        code = CUMULATIVE_NO_SUITABLE_VERSION if kind == CUMULATIVE else BE_NO_SUITABLE_VERSION
        super().__init__(f"fail to execute compaction, error = {code}")
        self.status = code
        self.reason = reason


@dataclass
class CompactionCounters:
    """What compaction did since the process started (the benchmark's write amplification and speed)."""

    cumulative_tasks: int = 0
    base_tasks: int = 0
    failed_tasks: int = 0
    rowsets_merged: int = 0
    rows_merged: int = 0  # rows read from the inputs
    rows_written: int = 0
    bytes_read: int = 0  # the inputs' data size
    bytes_written: int = 0
    seconds: float = 0.0  # time spent merging, summed over tasks

    def add(self, kind: str, out: CompactionOutput) -> None:
        s = out.stats
        if kind == CUMULATIVE:
            self.cumulative_tasks += 1
        else:
            self.base_tasks += 1
        self.rowsets_merged += s.input_rowsets
        self.rows_merged += s.input_rows
        self.rows_written += s.output_rows
        self.bytes_read += s.input_bytes
        self.bytes_written += s.bytes_written
        self.seconds += s.seconds


@dataclass(frozen=True)
class CompactionEvent:
    """One finished compaction (the console's history of a tablet)."""

    at: float
    tablet_id: int
    table_id: int
    kind: str
    start_version: int
    end_version: int
    input_rowsets: int
    input_rows: int
    output_rows: int
    input_bytes: int
    output_bytes: int
    seconds: float
    cumulative_point: int


HISTORY = 20000  # compactions remembered for the console


@dataclass
class _Task:
    tablet: Tablet
    table: OlapTable
    kind: str
    inputs: tuple[Rowset, ...]  # as the policy saw them (virtual ones included)
    permits: int
    last_delete_version: int | None = None
    manual: bool = False
    future: Future | None = field(default=None, repr=False)


def policy_view(rowsets: Sequence[Rowset]) -> list[Rowset]:
    """A tablet's visible rowsets plus one empty rowset for each run of versions it never received."""
    out: list[Rowset] = []
    for rs in sorted(rowsets, key=lambda r: (r.start_version, r.end_version)):
        if out and rs.start_version > out[-1].end_version + 1:
            start = out[-1].end_version + 1
            out.append(Rowset(rowset_id=f"{VIRTUAL_PREFIX}{rs.tablet_id}:{start}", tablet_id=rs.tablet_id,
                              start_version=start, end_version=rs.start_version - 1, num_rows=0,
                              num_segments=0, data_size=0, txn_id=0, overlapping=False,
                              created_at=rs.created_at))
        out.append(rs)
    return out


def is_virtual(rs: Rowset) -> bool:
    return rs.rowset_id.startswith(VIRTUAL_PREFIX)


def format_time(seconds: float | None) -> str:
    """Doris's ToStringFromUnixMillis: local time with milliseconds; never = the epoch."""
    ts = datetime.fromtimestamp(seconds or 0.0)
    return ts.strftime("%Y-%m-%d %H:%M:%S.") + f"{ts.microsecond // 1000:03d}"


def format_bytes(n: int) -> str:
    """Doris's PrettyPrinter for byte counts: "574.00 MB", "12.00 B", "0"."""
    if n == 0:
        return "0"
    for unit, size in (("TB", 1 << 40), ("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if n >= size:
            return f"{n / size:.2f} {unit}"
    return f"{n:.2f} B"


class CompactionManager:
    def __init__(self, engine: StorageEngine, conf: Mapping[str, str] | None = None) -> None:
        self.engine = engine
        self.config = CompactionConfig.from_mapping(conf if conf is not None else engine.config)
        self.disk = str(engine.root)
        self.permits = PermitPool(self.config.total_permits_for_compaction_score)
        self.counters = CompactionCounters()
        self.round_no = 0
        self._lock = threading.RLock()
        self._states: dict[int, TabletCompactionState] = {}
        self._running: dict[tuple[int, str], _Task] = {}
        self._pools = {
            CUMULATIVE: ThreadPoolExecutor(self._threads(self.config.max_cumu_compaction_threads),
                                           thread_name_prefix="compaction-cumu"),
            BASE: ThreadPoolExecutor(self._threads(self.config.max_base_compaction_threads),
                                     thread_name_prefix="compaction-base"),
        }
        self._wake = threading.Event()
        self.max_scores_seen = (0, 0)  # (cumulative, base): the highest tablet scores of the last round
        self.history: deque[CompactionEvent] = deque(maxlen=HISTORY)
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        engine.compaction_trigger = self.request

    @staticmethod
    def _threads(n: int) -> int:
        return n if n > 0 else 1  # -1: one per disk, and there is one disk

    # ------------------------------------------------------------------------------------ lifecycle

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="compaction-producer", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        self._stopping.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
        for pool in self._pools.values():
            pool.shutdown(wait=True, cancel_futures=True)

    def _loop(self) -> None:
        self.engine.opened.wait()
        while not self._stopping.is_set():
            produced = 0
            try:
                if not self.config.disable_auto_compaction:
                    produced = len(self.run_once(picked_only=False))
                self.engine.readers.collect()
            except Exception:  # noqa: BLE001 - the producer must outlive any one failure
                log.exception("compaction producer round failed")
            pause = self.config.generate_compaction_tasks_interval_ms / 1000 if produced else IDLE_SLEEP_SECONDS
            self._wake.wait(pause)
            self._wake.clear()

    def kick(self) -> None:
        """Run a producer round now (a task ended, a load asked for one)."""
        self._wake.set()

    # ------------------------------------------------------------------------------------ state

    def state(self, tablet_id: int) -> TabletCompactionState:
        with self._lock:
            st = self._states.get(tablet_id)
            if st is None:
                st = self._states[tablet_id] = TabletCompactionState(tablet_id)
            return st

    def view(self, tablet_id: int) -> list[Rowset]:
        return policy_view(tablet_visible_rowsets(self.engine.catalog, tablet_id))

    def _tablet(self, tablet_id: int) -> tuple[Tablet, OlapTable] | None:
        catalog = self.engine.catalog
        for db in catalog.list_databases():
            for table in catalog.list_tables(db.name):
                for t in catalog.tablets(table.table_id):
                    if t.tablet_id == tablet_id:
                        return t, table
        return None

    def tablet_and_table(self, tablet_id: int) -> tuple[Tablet, OlapTable] | None:
        return self._tablet(tablet_id)

    def find_tablet(self, tablet_id: int) -> Tablet | None:
        found = self._tablet(tablet_id)
        return None if found is None else found[0]

    def _auto_tablets(self) -> list[tuple[Tablet, OlapTable]]:
        """Tablets the producer may pick: not of a table with disable_auto_compaction, not of an index still
        being built."""
        catalog = self.engine.catalog
        out = []
        for db in catalog.list_databases():
            for table in catalog.list_tables(db.name):
                if table.props.get(TABLE_PROPERTY, "false").lower() == "true":
                    continue
                visible = {i.index_id for i in table.visible_indexes()}
                out += [(t, table) for t in catalog.tablets(table.table_id) if t.index_id in visible]
        return out

    def running(self, tablet_id: int | None = None) -> dict[str, list[int]]:
        """kind -> running tablet ids (of one tablet, or all)."""
        with self._lock:
            out: dict[str, list[int]] = {CUMULATIVE: [], BASE: []}
            for (tid, kind) in self._running:
                if tablet_id is None or tid == tablet_id:
                    out[kind].append(tid)
            return {k: sorted(v) for k, v in out.items()}

    # ------------------------------------------------------------------------------------ producing

    def run_once(self, now: float | None = None, picked_only: bool = True) -> list[tuple[int, str]]:
        """One producer round: pick, prepare and submit tasks; returns the (tablet_id, kind) submitted (with
        `picked_only` False: every task picked, also those whose preparation found nothing to merge; the
        producer sleeps 2 s only after a round that picked nothing, as Doris's does)."""
        now = time.time() if now is None else now
        config = self.config
        with self._lock:
            busy = {tid for tid, _ in self._running}
            running = len(self._running)
            cumulative = sum(1 for _, kind in self._running if kind == CUMULATIVE)
            round_no = self.round_no
            self.round_no += 1
        tablets = {t.tablet_id: (t, table) for t, table in self._auto_tablets() if t.tablet_id not in busy}
        candidates = []
        for tid in tablets:
            rowsets = self.view(tid)
            if not rowsets:
                continue
            state = self.state(tid)
            policy = policy_for(tablets[tid][1].props, config)
            if state.cumulative_point == NOT_CALCULATED:
                state.cumulative_point = policy.cumulative_point(rowsets, state)
            candidates.append(candidate_for(state, self.disk, rowsets, config, policy.scores(rowsets, state, now)))
        self.max_scores_seen = (max((c.cumulative_score for c in candidates), default=0),
                                max((c.base_score for c in candidates), default=0))
        picked = select_tasks(candidates, {self.disk: running}, round_no, config, now,
                              running_cumulative={self.disk: cumulative})
        submitted = []
        for tid, kind in picked:
            tablet, table = tablets[tid]
            try:
                task = self._prepare(tablet, table, kind, now)
            except NoSuitableVersion as e:
                # nothing to merge yet (e.g. rowsets inside the skip window): not a failure, so the tablet does
                # not back off for min_compaction_failure_interval_sec (Doris does not count it either)
                log.debug("tablet %d: no %s compaction: %s", tid, kind, e.reason)
                continue
            if self._submit(task, block=True):
                submitted.append((tid, kind))
        return submitted if picked_only else picked

    def _prepare(self, tablet: Tablet, table: OlapTable, kind: str, now: float) -> _Task:
        """Pick the inputs (Doris's prepare_compact); raises NoSuitableVersion when there is nothing to do."""
        rowsets = self.view(tablet.tablet_id)
        state = self.state(tablet.tablet_id)
        policy = policy_for(table.props, self.config)
        with self._lock:
            if state.cumulative_point == NOT_CALCULATED:
                state.cumulative_point = policy.cumulative_point(rowsets, state)
            if kind == CUMULATIVE:
                plan = policy.plan_cumulative(rowsets, state, now)
                if not plan.inputs:
                    if plan.point_without_merge is not None:
                        state.cumulative_point = plan.point_without_merge
                    if plan.start_idle_clock:
                        state.last_cumu_success = state.last_base_success = now
                    raise NoSuitableVersion(kind, plan.reason)
                return _Task(tablet, table, kind, plan.inputs, plan.score, plan.last_delete_version)
            base = policy.plan_base(rowsets, state, now)
            if not base.inputs:
                raise NoSuitableVersion(kind, base.reason)
            return _Task(tablet, table, kind, base.inputs, sum(rowset_score(rs) for rs in base.inputs))

    def _submit(self, task: _Task, block: bool) -> bool:
        key = (task.tablet.tablet_id, task.kind)
        with self._lock:
            if key in self._running:
                return False
            self._running[key] = task
        if block:
            self.permits.acquire(task.permits)
        elif not self.permits.try_acquire(task.permits):
            with self._lock:
                del self._running[key]
            return False
        try:
            task.future = self._pools[task.kind].submit(self._execute, task)
        except RuntimeError:  # the pools are shut down
            self.permits.release(task.permits)
            with self._lock:
                del self._running[key]
            return False
        return True

    def _execute(self, task: _Task) -> CompactionOutput:
        try:
            return self.compact(task)
        finally:
            self.permits.release(task.permits)
            with self._lock:
                self._running.pop((task.tablet.tablet_id, task.kind), None)
            self.kick()

    def _failed(self, tablet_id: int, kind: str, now: float) -> None:
        state = self.state(tablet_id)
        with self._lock:
            if kind == CUMULATIVE:
                state.last_cumu_failure = now
            else:
                state.last_base_failure = now

    # ------------------------------------------------------------------------------------ executing

    def compact(self, task: _Task) -> CompactionOutput:
        """Run a prepared task: merge, publish, move the cumulative point, record the time."""
        tid = task.tablet.tablet_id
        # the table as it is now: an index added meanwhile (ALTER ... ADD INDEX) is written into the output
        table = self.engine.catalog.get_table_by_id(task.table.table_id)
        index = next((i for i in table.indexes if i.index_id == task.tablet.index_id), None) if table else None
        try:
            if table is None or index is None:
                raise CompactionConflict(f"the index of tablet {tid} no longer exists")
            real = [rs for rs in task.inputs if not is_virtual(rs)]
            out = compact_rowsets(self.engine, table, index, task.tablet, real, task.inputs[0].start_version,
                                  task.inputs[-1].end_version)
        except Exception:
            self._failed(tid, task.kind, time.time())
            with self._lock:
                self.counters.failed_tasks += 1
            log.warning("%s compaction of tablet %d failed", task.kind, tid, exc_info=True)
            raise
        now = time.time()
        state = self.state(tid)
        with self._lock:
            self.counters.add(task.kind, out)
            if task.kind == CUMULATIVE:
                state.cumulative_point = policy_for(table.props, self.config).update_cumulative_point(
                    task.inputs, out.rowset, self.view(tid), state, task.last_delete_version)
                state.last_cumu_success = now
            else:
                state.last_base_success = now
            st = out.stats
            self.history.append(CompactionEvent(
                now, tid, table.table_id, task.kind, out.rowset.start_version, out.rowset.end_version,
                st.input_rowsets, st.input_rows, st.output_rows, st.input_bytes, st.bytes_written, st.seconds,
                state.cumulative_point))
        log.info("%s compaction of tablet %d: %d rowsets [%d-%d], %d rows -> %d in %.3f s", task.kind, tid,
                 out.stats.input_rowsets, out.rowset.start_version, out.rowset.end_version, out.stats.input_rows,
                 out.stats.output_rows, out.stats.seconds)
        return out

    def request(self, tablet_id: int, kind: str = CUMULATIVE) -> bool:
        """A load near max_tablet_version_num asks for a compaction of its tablet (never blocks the load:
        without free permits the producer's next round picks it up)."""
        found = self._tablet(tablet_id)
        if found is None:
            return False
        try:
            task = self._prepare(*found, kind, time.time())
        except NoSuitableVersion:
            return False
        submitted = self._submit(task, block=False)
        if not submitted:
            self.kick()
        return submitted

    def trigger(self, tablet_id: int, kind: str, wait_seconds: float = 2.0) -> None:
        """A manual compaction (POST /api/compaction/run), disable_auto_compaction notwithstanding: runs
        now on its own thread; a failure within `wait_seconds` is raised (as Doris waits 2 s for it),
        NoSuitableVersion included. Raises KeyError for an unknown tablet."""
        found = self._tablet(tablet_id)
        if found is None:
            raise KeyError(tablet_id)
        task = self._prepare(*found, kind, time.time())
        task.manual = True
        key = (tablet_id, kind)
        with self._lock:
            if key in self._running:
                raise StorageError(f"compaction task of tablet {tablet_id} is already running")
            self._running[key] = task
        done: Future = Future()

        def run() -> None:
            try:
                done.set_result(self.compact(task))
            except BaseException as e:  # noqa: BLE001 - handed to the waiting caller
                done.set_exception(e)
            finally:
                with self._lock:
                    self._running.pop(key, None)
                self.kick()

        task.future = done
        threading.Thread(target=run, name=f"compaction-manual-{tablet_id}", daemon=True).start()
        try:
            done.result(timeout=wait_seconds)
        except TimeoutError:
            pass  # still running: reported as triggered

    def wait_idle(self, timeout: float = 60.0) -> bool:
        """Until no compaction runs (tests, the benchmark)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                if not self._running:
                    return True
            time.sleep(0.01)
        return False

    # ------------------------------------------------------------------------------------ reporting

    def show(self, tablet_id: int) -> dict | None:
        """GET /api/compaction/show: Doris's JSON object for one tablet (None: no such tablet)."""
        if self.find_tablet(tablet_id) is None:
            return None
        visible = tablet_visible_rowsets(self.engine.catalog, tablet_id)
        state = self.state(tablet_id)
        found = self._tablet(tablet_id)
        policy = policy_for(found[1].props if found is not None else {}, self.config)
        with self._lock:
            if state.cumulative_point == NOT_CALCULATED and visible:
                state.cumulative_point = policy.cumulative_point(policy_view(visible), state)
            point = state.cumulative_point
            times = (state.last_cumu_failure, state.last_base_failure, state.last_cumu_success,
                     state.last_base_success)
        rowsets = [f"[{rs.start_version}-{rs.end_version}] {rs.num_segments} {rs.kind} "
                   f"{'OVERLAPPING' if rs.overlapping and rs.num_segments > 1 else 'NONOVERLAPPING'} "
                   f"{format_bytes(rs.data_size)}" for rs in visible]
        paths: dict[str, list] = {}
        for stale in self.engine.catalog.stale_rowsets(tablet_id):
            paths.setdefault(stale.output_rowset_id, []).append(stale.rowset)
        stale_paths = []
        for n, members in enumerate(paths.values(), start=1):
            members.sort(key=lambda r: r.start_version)
            created = max(r.created_at for r in members)
            stale_paths.append({
                "path id": str(n),
                "last create time": format_time(created) + datetime.fromtimestamp(created).astimezone().strftime(" %z"),
                "path list": f"{n}-> " + " -> ".join(f"[{r.start_version}-{r.end_version}]" for r in members),
            })
        return {
            "cumulative policy type": "SIZE_BASED",
            "cumulative point": point,
            "last cumulative failure time": format_time(times[0]),
            "last base failure time": format_time(times[1]),
            "last cumu success time": format_time(times[2]),
            "last base success time": format_time(times[3]),
            "rowsets": rowsets,
            "missing_rowsets": [],
            "stale version path": stale_paths,
        }

    def run_status(self) -> dict:
        """GET /api/compaction/run_status without a tablet: running tablet ids per type and disk."""
        running = self.running()
        return {"CumulativeCompaction": {self.disk: running[CUMULATIVE]},
                "BaseCompaction": {self.disk: running[BASE]}}

    def tablet_run_status(self, tablet_id: int) -> dict:
        running = self.running(tablet_id)
        kind = CUMULATIVE if running[CUMULATIVE] else BASE if running[BASE] else ""
        return {"status": "Success", "run_status": bool(kind),
                "msg": "this tablet_id is running" if kind else "this tablet_id is not running",
                "tablet_id": tablet_id, "compact_type": kind}
