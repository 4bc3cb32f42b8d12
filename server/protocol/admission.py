"""How many statements run their Python at once.

Every statement needs the interpreter lock, and gives it up at each Arrow, DuckDB or SQLite call. With sixteen
statements running, each such call hands the lock to another thread: a context switch per call. Measured in
process (16 threads of 10-row INSERTs and small SELECTs): 167 statements/s unrestricted, 268 with two running at
once, the switching time going to work. So at most `slots` statements run together (one per core); the others
wait their turn. A statement still running after `grace` seconds gives its slot up and goes on beside the
others: a long query never holds short ones back by more than `grace`, and nothing waits for a statement that
waits itself (a lock; a group-commit INSERT waiting for its log's fsync or its batch gives way at once).

A short statement (a SELECT whose kept plan usually runs in a few milliseconds, an INSERT ... VALUES joining a group
commit) waits in a lane of its own that is served first, unless a statement of the other lane has waited `grace`
already: under 8 writers of 10-row INSERTs, 8 dashboard reads spent ~60 ms of their median 74 waiting behind INSERTs
for a turn, and ran in 8.
"""

from __future__ import annotations

import os
import threading
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

DEFAULT_GRACE_SECONDS = 0.1

_current = threading.local()  # the admission and ticket of the statement this thread runs


def give_way() -> None:
    """The statement running in this thread is about to wait (for a log's fsync, for its batch to publish): its
    slot goes to the next statement now, and it finishes beside the others, as one past its grace does."""
    admitted = getattr(_current, "admitted", None)
    if admitted is not None:
        admitted[0]._give_way(admitted[1])


@dataclass
class _Ticket:
    short: bool = False  # waits in the short statements' lane
    queued: float = 0.0
    started: float = 0.0
    holds: bool = True  # still counts against the slots
    granted: threading.Event = field(default_factory=threading.Event)


class Admission:
    def __init__(self, slots: int | None = None, grace: float = DEFAULT_GRACE_SECONDS) -> None:
        self.slots = max(1, slots or os.cpu_count() or 2)
        self.grace = grace
        self._free = self.slots
        self._running: list[_Ticket] = []
        # first come, first served within a lane: nobody waits behind later arrivals of its own lane
        self._waiting: deque[_Ticket] = deque()
        self._short: deque[_Ticket] = deque()
        self._lock = threading.Lock()

    @contextmanager
    def admit(self, short: bool = False) -> Iterator[None]:
        """Run the body when its turn comes: a slot is free, or a running statement has had its grace."""
        ticket = _Ticket(short=short, queued=time.monotonic())
        with self._lock:
            (self._short if short else self._waiting).append(ticket)
            self._grant(time.monotonic())
        try:
            while not ticket.granted.is_set():
                with self._lock:
                    holding = [t.started for t in self._running if t.holds]
                wait = min(holding) + self.grace - time.monotonic() if holding else 0.001
                if not ticket.granted.wait(max(0.001, wait)):
                    with self._lock:
                        self._grant(time.monotonic())
        except BaseException:  # interrupted while waiting: give the turn (or the slot just granted) back
            with self._lock:
                lane = self._short if short else self._waiting
                if ticket in lane:
                    lane.remove(ticket)
                else:
                    self._running.remove(ticket)
                    self._free += ticket.holds
                self._grant(time.monotonic())
            raise
        _current.admitted = (self, ticket)
        try:
            yield
        finally:
            _current.admitted = None
            with self._lock:
                self._running.remove(ticket)
                if ticket.holds:
                    self._free += 1
                self._grant(time.monotonic())

    def _give_way(self, ticket: _Ticket) -> None:
        with self._lock:
            if ticket.holds:
                ticket.holds = False
                self._free += 1
                self._grant(time.monotonic())

    def _grant(self, now: float) -> None:
        """Free the slots of statements past their grace, then give free slots to the oldest waiters: the short
        lane's first, unless the other lane's oldest has waited its grace."""
        for t in self._running:
            if t.holds and now - t.started >= self.grace:
                t.holds = False
                self._free += 1
        while self._free > 0 and (self._waiting or self._short):
            overdue = self._waiting and now - self._waiting[0].queued >= self.grace
            t = self._short.popleft() if self._short and not overdue else self._waiting.popleft()
            self._free -= 1
            t.started = now
            self._running.append(t)
            t.granted.set()

    @property
    def running(self) -> int:
        with self._lock:
            return len(self._running)
