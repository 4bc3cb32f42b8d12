"""How many statements run their Python at once.

Every statement needs the interpreter lock, and gives it up at each Arrow, DuckDB or SQLite call. With sixteen
statements running, each such call hands the lock to another thread: a context switch per call. Measured in
process (16 threads of 10-row INSERTs and small SELECTs): 167 statements/s unrestricted, 268 with two running at
once, the switching time going to work. So at most `slots` statements run together (one per core); the others
wait their turn. A statement still running after `grace` seconds gives its slot up and goes on beside the
others: a long query never holds short ones back by more than `grace`, and nothing waits for a statement that
waits itself (a sync_mode INSERT, a lock).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

DEFAULT_GRACE_SECONDS = 0.1


@dataclass
class _Ticket:
    started: float
    holds: bool = True  # still counts against the slots


class Admission:
    def __init__(self, slots: int | None = None, grace: float = DEFAULT_GRACE_SECONDS) -> None:
        self.slots = max(1, slots or os.cpu_count() or 2)
        self.grace = grace
        self._free = self.slots
        self._running: list[_Ticket] = []
        self._cond = threading.Condition()

    @contextmanager
    def admit(self) -> Iterator[None]:
        """Run the body when a slot is free (or a running statement has had its grace)."""
        with self._cond:
            while self._free <= 0:
                self._release_overdue(time.monotonic())
                if self._free > 0:
                    break
                oldest = min(t.started for t in self._running if t.holds)
                self._cond.wait(max(0.001, oldest + self.grace - time.monotonic()))
            self._free -= 1
            ticket = _Ticket(time.monotonic())
            self._running.append(ticket)
        try:
            yield
        finally:
            with self._cond:
                self._running.remove(ticket)
                if ticket.holds:
                    self._free += 1
                    self._cond.notify()

    def _release_overdue(self, now: float) -> None:
        for ticket in self._running:
            if ticket.holds and now - ticket.started >= self.grace:
                ticket.holds = False
                self._free += 1

    @property
    def running(self) -> int:
        with self._cond:
            return len(self._running)
