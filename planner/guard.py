"""What bounds one running statement: KILL QUERY and a client's disconnect (from other threads),
`query_timeout`, and `exec_mem_limit` for what the executor materializes. The server makes one per
statement; the executor registers how to interrupt the work it is doing (a DuckDB query) while it runs.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from sql.errors import SqlError, analysis_error

MEMORY_POLL_S = 0.05  # how often a running DuckDB query's working memory is compared with exec_mem_limit
KILLED = "killed"
TIMEOUT = "timeout"
MEMORY = "memory"


def readable_bytes(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if n < 1024 or unit == "TB":
            return f"{n:.2f} {unit}" if unit != "B" else f"{n} B"
        n /= 1024
    return f"{n} B"


class _Counter:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.value = 0

    def add(self, n: int) -> None:
        with self._lock:
            self.value += n


_running = _Counter()  # statements whose DuckDB query is running under a memory watch


@dataclass
class QueryGuard:
    mem_limit: int | None = None  # bytes (exec_mem_limit); None: unbounded
    timeout: float | None = None  # seconds (query_timeout); None or <= 0: none
    started: float = field(default_factory=time.monotonic)
    peak: int | None = None  # the working memory that ended the statement (exec_mem_limit)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._reason: str | None = None
        self._interrupts: dict[int, Callable[[], None]] = {}
        self._next = 0

    # -- from other threads ---------------------------------------------------------------------------
    def cancel(self, reason: str = KILLED) -> None:
        with self._lock:
            if self._reason is None:
                self._reason = reason
            interrupts = list(self._interrupts.values())
        for interrupt in interrupts:
            interrupt()

    # -- from the executor ----------------------------------------------------------------------------
    def remaining(self) -> float | None:
        if not self.timeout or self.timeout <= 0:
            return None
        return self.timeout - (time.monotonic() - self.started)

    def check(self) -> None:
        """Raise the statement's error when it was cancelled or ran out of time."""
        left = self.remaining()
        if left is not None and left <= 0:
            self.cancel(TIMEOUT)
        if self._reason is not None:
            raise self.error()

    def charge(self, used: int) -> None:
        """`used` bytes are held for the result: more than exec_mem_limit ends the query."""
        if self.mem_limit is not None and used > self.mem_limit:
            self.cancel(MEMORY)
            raise self.error(used)

    def error(self, used: int | None = None) -> SqlError:
        if self._reason == TIMEOUT:
            return analysis_error(f"Query timeout: the query ran longer than query_timeout ({self.timeout:g} s)",
                                  3024, "HY000")
        if self._reason == MEMORY:
            used = used if used is not None else self.peak
            got = "" if used is None else f" (at least {readable_bytes(used)})"
            return analysis_error(f"[MEM_LIMIT_EXCEEDED]The query needs more memory{got} than exec_mem_limit "
                                  f"({readable_bytes(self.mem_limit or 0)}): narrow it down or raise the limit",
                                  1105, "HY000")
        return SqlError("Query execution was interrupted", 1317, "70100")

    @contextmanager
    def interruptible(self, interrupt: Callable[[], None],
                      memory_in_use: Callable[[], int] | None = None) -> Iterator[None]:
        """While the block runs, a cancel (or the timeout) calls `interrupt`; with `memory_in_use`, the working
        memory it reports is polled and more than exec_mem_limit cancels the block too."""
        self.check()
        with self._lock:
            key, self._next = self._next, self._next + 1
            self._interrupts[key] = interrupt
        left = self.remaining()
        timer = None
        if left is not None:
            timer = threading.Timer(max(left, 0.0), self.cancel, args=(TIMEOUT,))
            timer.daemon = True
            timer.start()
        done = threading.Event()
        watched = memory_in_use is not None and self.mem_limit is not None
        if watched:
            _running.add(1)
            threading.Thread(target=self._watch_memory, args=(memory_in_use, done), daemon=True,
                             name="mem-limit").start()
        try:
            yield
        finally:
            done.set()
            if watched:
                _running.add(-1)
            if timer is not None:
                timer.cancel()
            with self._lock:
                self._interrupts.pop(key, None)
        self.check()

    def _watch_memory(self, memory_in_use: Callable[[], int], done: threading.Event) -> None:
        while not done.wait(MEMORY_POLL_S):
            try:
                # the database's memory is shared: each running statement is charged an equal part of it
                used = memory_in_use() // max(1, _running.value)
            except Exception:  # noqa: BLE001 - the statement is finishing; nothing to watch
                return
            if self.mem_limit is not None and used > self.mem_limit:
                self.peak = used
                self.cancel(MEMORY)
                return
