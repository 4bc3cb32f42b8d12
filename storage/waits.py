"""What a thread does before it waits for a worker process (storage/workers.py): the server sets `before_wait` to hand
its statement's admission turn to the next statement (server/protocol/admission.give_way). An INSERT without
group commit waits for its segment writes in a worker; holding one of the two turns meanwhile, it kept readers
queued behind it. (Giving the turn up before each catalog commit's fsync too was measured: no gain, 16 clients
without group commit, the writers then competing for the interpreter lock.)"""

from __future__ import annotations

from collections.abc import Callable

before_wait: Callable[[], None] | None = None


def waiting() -> None:
    if before_wait is not None:
        before_wait()
