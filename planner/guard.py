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

KILLED = "killed"
TIMEOUT = "timeout"
MEMORY = "memory"


def readable_bytes(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if n < 1024 or unit == "TB":
            return f"{n:.2f} {unit}" if unit != "B" else f"{n} B"
        n /= 1024
    return f"{n} B"


@dataclass
class QueryGuard:
    mem_limit: int | None = None  # bytes (exec_mem_limit); None: unbounded
    timeout: float | None = None  # seconds (query_timeout); None or <= 0: none
    started: float = field(default_factory=time.monotonic)

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
            got = "" if used is None else f" (at least {readable_bytes(used)})"
            return analysis_error(f"[MEM_LIMIT_EXCEEDED]The query needs more memory{got} than exec_mem_limit "
                                  f"({readable_bytes(self.mem_limit or 0)}): narrow it down or raise the limit",
                                  1105, "HY000")
        return SqlError("Query execution was interrupted", 1317, "70100")

    @contextmanager
    def interruptible(self, interrupt: Callable[[], None]) -> Iterator[None]:
        """While the block runs, a cancel (or the timeout) calls `interrupt`."""
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
        try:
            yield
        finally:
            if timer is not None:
                timer.cancel()
            with self._lock:
                self._interrupts.pop(key, None)
        self.check()
